import { ErrorCode } from '@modelcontextprotocol/sdk/types.js';
import { z } from 'zod';
import { ProtocolError } from './protocol-error.js';

/** Items per page of a list the gateway merges from its servers. */
export const LIST_PAGE_SIZE = 100;

const cursorSchema = z.object({ list: z.string(), offset: z.number().int().nonnegative() }).strict();

/**
 * One page of a merged list. The cursor is the gateway's own (base64url of the list's name and
 * an offset), never a server's: the merged list has no server to page it. A cursor of another
 * list or one the gateway did not make is refused; one past the end of a list that shrank since
 * is its last, empty page.
 */
export function pageOf<T>(list: string, items: readonly T[], cursor: string | undefined): { items: T[]; nextCursor?: string } {
  let offset = 0;
  if (cursor !== undefined) {
    let decoded: unknown;
    try {
      decoded = JSON.parse(Buffer.from(cursor, 'base64url').toString('utf8'));
    } catch {
      decoded = undefined;
    }
    const parsed = cursorSchema.safeParse(decoded);
    if (!parsed.success || parsed.data.list !== list) throw new ProtocolError(ErrorCode.InvalidParams, `Invalid cursor for ${list}: pass the nextCursor of the previous ${list} page as it is, or no cursor for the first page`);
    offset = parsed.data.offset;
  }
  const end = offset + LIST_PAGE_SIZE;
  return { items: items.slice(offset, end), ...(end < items.length ? { nextCursor: Buffer.from(JSON.stringify({ list, offset: end })).toString('base64url') } : {}) };
}
