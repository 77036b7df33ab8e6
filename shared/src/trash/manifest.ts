import { z } from 'zod';

/** Trash ids: UTC time of the delete to the second, then random hex, so they sort by age and never collide. */
export const TRASH_ID = /^\d{8}-\d{6}-[0-9a-f]{8}$/;

/** What the trash remembers about a deleted entry, stored as `<id>/manifest.json` beside it. */
export const trashManifestSchema = z.strictObject({
  id: z.string().regex(TRASH_ID),
  /** The absolute real path the entry had. */
  original: z.string().min(1),
  /** How the path was shown to the model (relative to the first root when inside it). */
  shown_as: z.string().min(1),
  kind: z.enum(['file', 'folder', 'symlink']),
  /** Bytes of the files it held. */
  bytes: z.number().int().min(0),
  /** Entries inside a folder, at any depth. */
  entries: z.number().int().min(0),
  deleted_at: z.iso.datetime(),
  /** Why it is here: deleted (or replaced by a move), or the previous version of a file a write replaced. Absent: deleted. */
  reason: z.enum(['deleted', 'replaced']).optional(),
  /** The process that put it here and its host, so an interrupted put of a dead process is cleared at once. */
  pid: z.number().int().min(1).optional(),
  host: z.string().max(255).optional(),
});

export type TrashManifest = z.output<typeof trashManifestSchema>;
