import { ToolError, type GitRepository } from '@bulkhead/core';

export interface TreeEntry {
  /** As git stores it: 40000 (folder), 100644, 100755 (executable), 120000 (symlink), 160000 (submodule). */
  readonly mode: string;
  readonly oid: string;
}

/** Entries of one folder by name (bytes as latin1, so any name is exact). */
export type Folder = ReadonlyMap<string, TreeEntry>;

export const FOLDER_MODE = '40000';

/** Parses a tree object: `<mode> <name>\0<raw id>` repeated. */
function parseTree(bytes: Buffer, idBytes: number): Map<string, TreeEntry> {
  const entries = new Map<string, TreeEntry>();
  let at = 0;
  while (at < bytes.length) {
    const space = bytes.indexOf(0x20, at);
    const nul = bytes.indexOf(0, space);
    if (space === -1 || nul === -1) break;
    entries.set(bytes.toString('latin1', space + 1, nul), { mode: bytes.toString('latin1', at, space), oid: bytes.toString('hex', nul + 1, nul + 1 + idBytes) });
    at = nul + 1 + idBytes;
  }
  return entries;
}

/**
 * The folders `folders` (paths as latin1, '' for the top) of a commit's tree, read in one
 * `git cat-file --batch` whose requests go in on stdin, so any name works. A folder that does
 * not exist in the commit (or is a file there) is absent from the result.
 */
export async function readFolders(repository: GitRepository, commit: string, folders: readonly string[], signal: AbortSignal): Promise<Map<string, Folder>> {
  const requests = folders.map((folder) => Buffer.concat([Buffer.from(`${commit}:`), Buffer.from(folder, 'latin1'), Buffer.from('\n')]));
  const result = await repository.run(['cat-file', '--batch'], { stdin: Buffer.concat(requests), signal });
  if (result.truncated) throw new ToolError('the folders this changeset touches are too large to read (limits.max_read_bytes); nothing was written', 'too_large');
  const out = result.stdout;
  const idBytes = commit.length / 2;
  const found = new Map<string, Folder>();
  let at = 0;
  for (const folder of folders) {
    const end = out.indexOf(0x0a, at);
    if (end === -1) break;
    const header = /^[0-9a-f]+ (\S+) (\d+)$/.exec(out.toString('latin1', at, end));
    at = end + 1;
    if (!header) continue;
    const size = Number(header[2]);
    if (header[1] === 'tree') found.set(folder, parseTree(out.subarray(at, at + size), idBytes));
    // The content is followed by a newline.
    at += size + 1;
  }
  return found;
}
