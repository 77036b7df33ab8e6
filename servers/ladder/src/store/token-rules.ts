import { createHash, randomBytes } from 'node:crypto';
import { ToolError } from '@bulkhead/core';
import { isoTime, isoTimeOrNull, newId } from './records.js';
import type { TokenInfo } from './work-queue.js';

/** What the SQLite and PostgreSQL token stores share: the secret's shape, its hash and the row mapping. */

/** Who a call without a token acts as, on a public repository; no token may act as it, or the audit log could not tell them apart. */
export const ANONYMOUS = 'anonymous';

const TOKEN_PREFIX = 'bhl_';
/** 32 random bytes in base64url, without padding. */
const TOKEN_PATTERN = /^bhl_[A-Za-z0-9_-]{43}$/;
/** `last_used_at` is a hint, not an audit log: writing it on every request would make every HTTP call a write. */
const LAST_USED_RESOLUTION_MS = 60_000;

export interface TokenRow {
  id: string;
  actor: string;
  created_at: number;
  last_used_at: number | null;
  revoked_at: number | null;
}

/** A new token for `actor`: its id, the SHA-256 to store, and the secret shown once. */
export function newToken(actor: string): { id: string; secretSha256: string; secret: string } {
  if (actor.length === 0) throw new ToolError('a token needs an actor', 'invalid_arguments');
  if (actor === ANONYMOUS) throw new ToolError(`${ANONYMOUS} is who calls without a token act as on a public repository; give a token another actor`, 'invalid_arguments');
  const secret = TOKEN_PREFIX + randomBytes(32).toString('base64url');
  return { id: newId('tok'), secretSha256: sha256(secret), secret };
}

/** The hash to look a presented secret up by, or undefined when it is not shaped like a token. */
export function lookupHash(secret: string): string | undefined {
  return TOKEN_PATTERN.test(secret) ? sha256(secret) : undefined;
}

/** Whether a verified token's last_used_at is old enough to write again. */
export function shouldTouch(row: TokenRow, now: number): boolean {
  return row.last_used_at === null || now - row.last_used_at >= LAST_USED_RESOLUTION_MS;
}

function sha256(secret: string): string {
  return createHash('sha256').update(secret).digest('hex');
}

export function toTokenInfo(row: TokenRow): TokenInfo {
  return { id: row.id, actor: row.actor, created_at: isoTime(row.created_at), last_used_at: isoTimeOrNull(row.last_used_at), revoked_at: isoTimeOrNull(row.revoked_at) };
}
