import { resolve } from 'node:path';
import { z } from 'zod';
import { formatBytes, loadYamlFile, Roots, Trash, trashPolicySchema, truncateLine, type TrashManifest } from '@bulkhead/core';
import type { GatewaySetup } from '../load.js';

const FS_WRITE_POLICY_FILE = 'fs_write_policy.yaml';
const MAX_PATH_SHOWN = 160;
const MAX_PROBLEMS_SHOWN = 20;

/** The keys of fs_write_policy.yaml the trash needs; the fs_write server validates the whole file. */
const trashSettingsSchema = z.looseObject({
  roots: z.array(z.string().min(1)).default([]),
  protect: z.array(z.string().min(1)).default([]),
  trash: trashPolicySchema,
});

export interface TrashOutput {
  readonly stdout: readonly string[];
  /** Problems worth a look that do not make the command fail. */
  readonly stderr: readonly string[];
}

/** The trash of the fs_write compartment, with the same roots and protected set it writes under (the console's Trash page too). */
export function openTrash(setup: GatewaySetup): { trash: Trash; roots: () => Roots; policy: z.output<typeof trashSettingsSchema> } {
  const policy = loadYamlFile(setup.controlDir, FS_WRITE_POLICY_FILE, trashSettingsSchema).value;
  const first = setup.roots[0]!;
  return {
    trash: new Trash(setup.controlDir, policy.trash, { policySource: FS_WRITE_POLICY_FILE }),
    policy,
    roots: () =>
      new Roots([...setup.roots, ...policy.roots.map((root) => resolve(first, root))], {
        controlDir: setup.controlDir,
        denyRead: [],
        protectWrite: policy.protect,
        protectWriteSource: FS_WRITE_POLICY_FILE,
      }),
  };
}

function describeManifest(entry: TrashManifest): string {
  if (entry.kind === 'file') return `file, ${formatBytes(entry.bytes)}`;
  if (entry.kind === 'symlink') return 'symlink';
  return `folder: ${entry.entries} ${entry.entries === 1 ? 'entry' : 'entries'}, ${formatBytes(entry.bytes)}`;
}

function countOf(count: number): string {
  return `${count} ${count === 1 ? 'entry' : 'entries'}`;
}

/** `bulkhead trash list`: newest first, at most `limit` lines, then how many more. */
export async function listTrash(setup: GatewaySetup, limit: number): Promise<TrashOutput> {
  const { trash, policy } = openTrash(setup);
  const listing = await trash.list();
  const stderr = listing.problems.slice(0, MAX_PROBLEMS_SHOWN).map((problem) => `trash: ${problem}`);
  if (listing.problems.length > MAX_PROBLEMS_SHOWN) stderr.push(`trash: … ${listing.problems.length - MAX_PROBLEMS_SHOWN} more folders that cannot be restored`);
  if (listing.entries.length === 0) return { stdout: [`The trash is empty (${trash.folder}).`], stderr };
  const stdout = listing.entries.slice(0, limit).map((entry) => {
    const when = `${entry.deleted_at.slice(0, 10)} ${entry.deleted_at.slice(11, 19)} UTC`;
    // A version a write replaced is told apart from a deleted entry: its path exists again.
    const replaced = entry.reason === 'replaced' ? ' (replaced version)' : '';
    return `${entry.id}  ${when}  ${entry.kind.padEnd(7)}  ${formatBytes(entry.bytes).padStart(10)}  ${truncateLine(entry.shown_as, MAX_PATH_SHOWN)}${replaced}`;
  });
  if (listing.entries.length > limit) stdout.push(`… ${countOf(listing.entries.length - limit)} older (--limit N shows more)`);
  stdout.push(
    `${countOf(listing.entries.length)}, ${formatBytes(listing.bytes)}, in ${trash.folder} (kept ${policy.trash.retention_days} days, at most ${formatBytes(policy.trash.max_bytes)}; ${FS_WRITE_POLICY_FILE} trash:).`,
    'Restore one with: bulkhead trash restore ID [--to PATH]',
  );
  return { stdout, stderr };
}

/** `bulkhead trash restore ID [--to PATH]`: never overwrites; refusals are ToolErrors. */
export async function restoreFromTrash(setup: GatewaySetup, id: string, to: string | undefined): Promise<TrashOutput> {
  const { trash, roots } = openTrash(setup);
  const restored = await trash.restore(id, roots(), to === undefined ? {} : { to: resolve(to) });
  return { stdout: [`Restored ${id} to ${restored.path} (${describeManifest(restored.manifest)}).`], stderr: [] };
}

/** `bulkhead trash purge`: applies the retention policy now. */
export async function purgeTrash(setup: GatewaySetup): Promise<TrashOutput> {
  const { trash } = openTrash(setup);
  const purged = await trash.purge();
  const keeps = `the trash keeps ${countOf(purged.kept)} (${formatBytes(purged.keptBytes)})`;
  if (purged.removed.length === 0) return { stdout: [`Nothing to purge; ${keeps}.`], stderr: [] };
  return { stdout: [`Purged ${countOf(purged.removed.length)} (${formatBytes(purged.freedBytes)}); ${keeps}.`], stderr: [] };
}
