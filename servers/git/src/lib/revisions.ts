import { checkRevision, commitRevision, type RevisionRequest } from '@bulkhead/core';

export interface RangeArgument {
  /** What git log gets after --end-of-options. */
  readonly text: string;
  /** Each side, for the clear error when one is missing. */
  readonly requests: readonly RevisionRequest[];
}

/**
 * `rev` of git_log: one revision or a range (`A..B`, `A...B`; an empty side means HEAD), each side
 * checked on its own and peeled to a commit.
 */
export function logRange(rev: string, argument: string): RangeArgument {
  checkRevision(rev, argument);
  const range = rev.startsWith(':/') ? null : /^(.*?)(\.\.\.?)(.*)$/s.exec(rev);
  if (!range) return { text: commitRevision(rev), requests: [{ value: rev, argument }] };
  const [, left, dots, right] = range;
  const requests = [
    { value: left || 'HEAD', argument: `${argument} (left side)` },
    { value: right || 'HEAD', argument: `${argument} (right side)` },
  ];
  for (const request of requests) checkRevision(request.value, request.argument);
  return { text: `${commitRevision(requests[0]!.value)}${dots}${commitRevision(requests[1]!.value)}`, requests };
}
