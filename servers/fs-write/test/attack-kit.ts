import { createHash } from 'node:crypto';
import { lstatSync, readdirSync, readFileSync, readlinkSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';

/** The built server, for tests that need a real process. */
export const FS_WRITE_CLI = fileURLToPath(new URL('../dist/cli.js', import.meta.url));

/** A temp file of writeFileSafely (`.<name>.bulkhead-<pid>-<12 hex>.tmp`) or its replace lock (`.<name>.bulkhead-lock`). */
export const TEMP_FILE = /^\..*\.bulkhead-(\d+-[0-9a-f]{12}\.tmp|lock)$/;

export const sha256 = (bytes: string | Uint8Array) => createHash('sha256').update(bytes).digest('hex');

/**
 * Everything under `dir` (dot files included, symlinks not followed): each path with its kind, mode
 * and, for files, size and SHA-256; for symlinks, the target. Two equal snapshots mean not one byte,
 * mode, name or link changed. `skip` leaves out subtrees (the audit log, which every call appends to).
 */
export function snapshot(dir: string, skip: (relative: string) => boolean = () => false): Record<string, string> {
  const out: Record<string, string> = {};
  const walk = (relative: string) => {
    for (const name of readdirSync(join(dir, relative)).sort()) {
      const rel = relative === '' ? name : `${relative}/${name}`;
      if (skip(rel)) continue;
      const full = join(dir, rel);
      const stat = lstatSync(full);
      const mode = (stat.mode & 0o7777).toString(8);
      if (stat.isSymbolicLink()) out[rel] = `link -> ${readlinkSync(full)}`;
      else if (stat.isDirectory()) {
        out[rel] = `dir ${mode}`;
        walk(rel);
      } else out[rel] = `file ${mode} ${stat.size} B nlink ${stat.nlink} ${sha256(readFileSync(full))}`;
    }
  };
  walk('');
  return out;
}

/** Temp files and lock files of a write left anywhere under `dir`. */
export function strayTemps(dir: string): string[] {
  return Object.keys(snapshot(dir)).filter((rel) => TEMP_FILE.test(rel.split('/').at(-1)!));
}

/**
 * The audit log of the control-plane folder changes with every call, and the trash with every
 * write over a file (its previous version) and its journal of temp files; nothing else may.
 * Tests that care what the trash holds look at it with trashSlots().
 */
export const skipAudit = (relative: string) => relative === '.bulkhead/audit' || relative === '.bulkhead/trash';

/** The slots of the trash (one per deleted entry or replaced version), and anything else in it but the journal. */
export function trashSlots(root: string): string[] {
  try {
    return readdirSync(join(root, '.bulkhead/trash')).filter((name) => name !== '.in-flight').sort();
  } catch {
    return [];
  }
}

/** Records of the temp-file journal left in the trash (a dead writer's, until a server sweeps them). */
export function journalRecords(root: string): string[] {
  try {
    return readdirSync(join(root, '.bulkhead/trash/.in-flight'));
  } catch {
    return [];
  }
}
