import { ToolError } from '@bulkhead/core';
import type { RungKind } from '../ladder/rung-paths.js';
import type { Rung, RungWrite, SearchHit } from './rungs.js';

/** A row of `rungs` (or of `rung_revisions` joined to its rung), the same columns on both backends. */
export interface RungRow {
  readonly id: number;
  readonly repo: string;
  readonly path: string;
  readonly kind: RungKind;
  readonly commit_id: string;
  readonly object_id: string;
  readonly summary: string;
  readonly body: string | null;
  readonly revision: number;
  readonly author: string;
  readonly written_at: number;
}

export const RUNG_COLUMNS = 'id, repo, path, kind, commit_id, object_id, summary, body, revision, author, written_at';
/** The same columns of `rungs r` in a join. */
export const JOINED_RUNG_COLUMNS = RUNG_COLUMNS.split(', ').map((column) => `r.${column}`).join(', ');

export function toRung(row: RungRow): Rung {
  return {
    repo: row.repo,
    path: row.path,
    kind: row.kind,
    commit: row.commit_id,
    objectId: row.object_id,
    summary: row.summary,
    body: row.body,
    revision: row.revision,
    author: row.author,
    writtenAt: row.written_at,
  };
}

/** A search hit from its rung's row, with the backend's snippet and a score where higher is better. */
export function toSearchHit(row: RungRow, snippet: string, score: number): SearchHit {
  return { repo: row.repo, path: row.path, kind: row.kind, summary: row.summary, snippet, revision: row.revision, commit: row.commit_id, score };
}

/** The first path after every path under `directory/` in byte order (`/` + 1 is `0`). */
export function pastSubtree(directory: string): string {
  return `${directory}0`;
}

/**
 * Refuses the whole write when any rung's `expectedRevision` differs from its stored revision
 * (`storedRevision` gives 0 for a path with no rung), naming every conflict. Both backends call it
 * once every row the write touches is locked, so what it reads cannot change before the commit.
 */
export function refuseRevisionConflicts(rungs: readonly RungWrite[], storedRevision: (path: string) => number): void {
  const conflicts = rungs.flatMap((rung) => {
    const stored = storedRevision(rung.path);
    if (rung.expectedRevision === undefined || rung.expectedRevision === stored) return [];
    return [stored > 0 ? `${rung.path} is at revision ${stored}; you expected ${rung.expectedRevision}` : `${rung.path} has no rung yet; you expected revision ${rung.expectedRevision}`];
  });
  if (conflicts.length > 0) {
    throw new ToolError(`${conflicts.join('; ')} — someone wrote first; read it again and merge. Nothing in this write was saved.`, 'revision_conflict');
  }
}
