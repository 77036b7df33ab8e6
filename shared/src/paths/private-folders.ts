import { realpathSync } from 'node:fs';
import { isAbsolute, join, relative, resolve, sep } from 'node:path';

/**
 * The control-plane folder's private folders: what no tool of any compartment may read, list,
 * search or write, whatever a policy file says. `keys/` holds credentials (the HTTP bearer
 * tokens, the receipt signing key, the console's secret and the registry of running consoles);
 * `approvals/` holds the pending approvals (the held calls' arguments and the humans' decisions).
 * A model that could read either could approve its own calls.
 */
export const PRIVATE_CONTROL_FOLDERS = {
  keys: { name: 'keys', holds: 'bearer tokens, signing keys', listedAs: 'hidden: control-plane credentials' },
  approvals: { name: 'approvals', holds: 'pending approvals are decided by a human, not read by tools', listedAs: 'hidden: pending approvals, decided by a human' },
} as const;

export type PrivateControlFolder = keyof typeof PRIVATE_CONTROL_FOLDERS;

const FOLDERS = Object.keys(PRIVATE_CONTROL_FOLDERS) as PrivateControlFolder[];

/** What a read of a path in a private folder is told (also for the folder itself). */
export function privateFolderRefusal(input: string, folder: PrivateControlFolder): string {
  return `${input} is in the control-plane folder's ${folder} (${PRIVATE_CONTROL_FOLDERS[folder].holds}); it cannot be read`;
}

function realpathOrSelf(path: string): string {
  try {
    return realpathSync(path);
  } catch {
    return path;
  }
}

/**
 * Every absolute form of each private folder of `controlDir`: as given, under the control-plane
 * folder's real path, and the folder's own real path (a `keys/` that is a symlink to another disk
 * is private where it really is).
 */
export function privateControlFolderPaths(controlDir: string): { readonly folder: PrivateControlFolder; readonly path: string }[] {
  const given = resolve(controlDir);
  const forms: { folder: PrivateControlFolder; path: string }[] = [];
  for (const folder of FOLDERS) {
    const paths = new Set([join(given, folder), join(realpathOrSelf(given), folder), realpathOrSelf(join(given, folder))]);
    for (const path of paths) forms.push({ folder, path });
  }
  return forms;
}

function inside(parent: string, child: string): boolean {
  const rel = relative(parent, child);
  return rel === '' || (rel !== '..' && !rel.startsWith(`..${sep}`) && !isAbsolute(rel));
}

/** The private folder that holds the absolute path `path` (or is it), if any. Compared exactly: on a case-sensitive file system `KEYS/` is another folder. */
export function privateControlFolderOf(controlDir: string, path: string): PrivateControlFolder | undefined {
  return privateControlFolderPaths(controlDir).find((form) => inside(form.path, path))?.folder;
}

/**
 * The private folders as deny_read globs anchored at each of `folders` (roots, or the folder a
 * search runs in) that holds them: `/.bulkhead/keys`, or `/keys` when the search runs in the
 * control-plane folder itself. A search engine given these never opens a file in them; a folder
 * that lies inside a private folder gets `/` (everything). Empty when none of `folders` holds them.
 */
export function privateControlFolderGlobs(folders: readonly string[], controlDir: string): string[] {
  const globs = new Set<string>();
  const privatePaths = privateControlFolderPaths(controlDir).map((form) => form.path);
  for (const folder of folders) {
    for (const form of new Set([resolve(folder), realpathOrSelf(resolve(folder))])) {
      for (const path of privatePaths) {
        if (inside(path, form)) {
          globs.add('/**');
          continue;
        }
        const rel = relative(form, path);
        // Anchored at the folder (a leading `/`), so that no other folder named like it is hidden.
        if (rel !== '' && !rel.startsWith('..') && !isAbsolute(rel)) globs.add(`/${rel.split(sep).join('/')}`);
      }
    }
  }
  return [...globs];
}
