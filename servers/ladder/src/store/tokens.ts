import { createHash, randomBytes } from 'node:crypto';
import { ToolError } from '@bulkhead/core';
import type { Clock, Db } from './database.js';
import { isoTime, isoTimeOrNull, newId } from './records.js';
import type { CreatedToken, TokenInfo } from './work-queue.js';

/** Who a call without a token acts as, on a public repository; no token may act as it, or the audit log could not tell them apart. */
export const ANONYMOUS = 'anonymous';

const TOKEN_PREFIX = 'bhl_';
/** 32 random bytes in base64url, without padding. */
const TOKEN_PATTERN = /^bhl_[A-Za-z0-9_-]{43}$/;
/** `last_used_at` is a hint, not an audit log: writing it on every request would make every HTTP call a write. */
const LAST_USED_RESOLUTION_MS = 60_000;

interface TokenRow {
  id: string;
  actor: string;
  created_at: number;
  last_used_at: number | null;
  revoked_at: number | null;
}

/**
 * Bearer tokens for the HTTP endpoint. Only the SHA-256 of a secret is stored. A secret is looked
 * up by its hash through the unique index rather than compared: the time a lookup takes depends on
 * the hash, which an attacker cannot steer towards a stored one, so no constant-time compare is needed.
 */
export class SqliteTokens {
  private readonly insert;
  private readonly byHash;
  private readonly touch;
  private readonly revoke;
  private readonly all;

  constructor(db: Db, private readonly clock: Clock) {
    this.insert = db.prepare('INSERT INTO tokens (id, actor, secret_sha256, created_at) VALUES (?, ?, ?, ?)');
    this.byHash = db.prepare<[string], TokenRow>('SELECT id, actor, created_at, last_used_at, revoked_at FROM tokens WHERE secret_sha256 = ?');
    this.touch = db.prepare('UPDATE tokens SET last_used_at = ? WHERE id = ?');
    this.revoke = db.prepare('UPDATE tokens SET revoked_at = ? WHERE id = ? AND revoked_at IS NULL');
    this.all = db.prepare<{ actor: string | null }, TokenRow>('SELECT id, actor, created_at, last_used_at, revoked_at FROM tokens WHERE @actor IS NULL OR actor = @actor ORDER BY created_at, rowid');
  }

  create(actor: string): CreatedToken {
    if (actor.length === 0) throw new ToolError('a token needs an actor', 'invalid_arguments');
    if (actor === ANONYMOUS) throw new ToolError(`${ANONYMOUS} is who calls without a token act as on a public repository; give a token another actor`, 'invalid_arguments');
    const secret = TOKEN_PREFIX + randomBytes(32).toString('base64url');
    const row: TokenRow = { id: newId('tok'), actor, created_at: this.clock(), last_used_at: null, revoked_at: null };
    this.insert.run(row.id, actor, sha256(secret), row.created_at);
    return { ...toTokenInfo(row), secret };
  }

  verify(secret: string): string | undefined {
    if (!TOKEN_PATTERN.test(secret)) return undefined;
    const row = this.byHash.get(sha256(secret));
    if (!row || row.revoked_at !== null) return undefined;
    const now = this.clock();
    if (row.last_used_at === null || now - row.last_used_at >= LAST_USED_RESOLUTION_MS) this.touch.run(now, row.id);
    return row.actor;
  }

  revokeById(id: string): boolean {
    return this.revoke.run(this.clock(), id).changes === 1;
  }

  list(actor?: string): TokenInfo[] {
    return this.all.all({ actor: actor ?? null }).map(toTokenInfo);
  }
}

function sha256(secret: string): string {
  return createHash('sha256').update(secret).digest('hex');
}

function toTokenInfo(row: TokenRow): TokenInfo {
  return { id: row.id, actor: row.actor, created_at: isoTime(row.created_at), last_used_at: isoTimeOrNull(row.last_used_at), revoked_at: isoTimeOrNull(row.revoked_at) };
}
