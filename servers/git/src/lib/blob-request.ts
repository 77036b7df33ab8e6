import { decodeGitName, ToolError } from '@bulkhead/core';

/** A path that can name one file for `git cat-file --batch`: not the whole tree, one line. */
export function checkFilePath(path: Buffer): void {
  if (path.length === 0) throw new ToolError('path names the whole tree; give a file path', 'bad_argument');
  if (path.includes(0x0a)) throw new ToolError(`path ${JSON.stringify(decodeGitName(path))} holds a newline, which git cat-file --batch cannot be asked for`, 'bad_argument');
}

/** The stdin line that asks `git cat-file --batch` for a file at a commit: the path goes in as bytes, never as an argument. */
export function blobRequest(commit: string, path: Buffer): Buffer {
  checkFilePath(path);
  return Buffer.concat([Buffer.from(`${commit}:`), path, Buffer.from('\n')]);
}
