import { commitRevision, decodeGitName, ToolError, type GitProcessResult, type GitRepository } from '@bulkhead/core';
import type { BlobReader } from './blob.js';

/** A path that can name one file for `git cat-file`: not the whole tree, one line. */
export function checkFilePath(path: Buffer): void {
  if (path.length === 0) throw new ToolError('path names the whole tree; give a file path', 'bad_argument');
  if (path.includes(0x0a)) throw new ToolError(`path ${JSON.stringify(decodeGitName(path))} holds a newline, which git cat-file cannot be asked for`, 'bad_argument');
}

/**
 * Streams a file at a commit into `reader` with one `git cat-file --batch-command`: `info` names the
 * commit, `contents` sends the file. Both go in on stdin, the path as bytes, never as arguments.
 * A missing revision gets the clear error that names it.
 */
export async function readFileAtCommit(repository: GitRepository, rev: string, path: Buffer, reader: BlobReader, signal: AbortSignal): Promise<GitProcessResult> {
  checkFilePath(path);
  return repository.namingMissingRevisions(
    [{ value: rev, argument: 'rev' }],
    async () => {
      // `:/text` cannot be followed by `:path`, so a message search is resolved to its commit first.
      const commit = commitRevision(rev.startsWith(':/') ? await repository.resolveCommit(rev, 'rev', signal) : rev);
      const stdin = Buffer.concat([Buffer.from(`info ${commit}\ncontents ${commit}:`), path, Buffer.from('\n')]);
      const result = await repository.run(['cat-file', '--batch-command'], { stdin, signal, onStdout: (chunk) => reader.push(chunk) });
      if (reader.commit === 'missing') throw new ToolError(`git cat-file found no commit ${rev}`, 'git_failed');
      return result;
    },
    signal,
  );
}
