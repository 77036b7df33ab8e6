import { checkRevision, type GitRepository } from '@bulkhead/core';

/**
 * A revision or a range (`A..B`, `A...B`; an empty side means HEAD), with every side resolved to
 * a commit id first: git then gets ids only, after `--end-of-options`.
 */
export async function resolveRange(repository: GitRepository, rev: string, argument: string, signal: AbortSignal): Promise<string> {
  checkRevision(rev, argument);
  const range = /^(.*?)(\.\.\.?)(.*)$/s.exec(rev);
  if (!range || rev.startsWith(':/')) return repository.resolveCommit(rev, argument, signal);
  const [, left, dots, right] = range;
  const [from, to] = await repository.resolveCommits(
    [
      { value: left || 'HEAD', argument: `${argument} (left side)` },
      { value: right || 'HEAD', argument: `${argument} (right side)` },
    ],
    signal,
  );
  return `${from}${dots}${to}`;
}
