import type { Clock, Db } from './database.js';
import { lookupHash, newToken, shouldTouch, toTokenInfo, type TokenRow } from './token-rules.js';
import type { CreatedToken, TokenInfo } from './work-queue.js';

export { ANONYMOUS } from './token-rules.js';

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
    const { id, secretSha256, secret } = newToken(actor);
    const row: TokenRow = { id, actor, created_at: this.clock(), last_used_at: null, revoked_at: null };
    this.insert.run(id, actor, secretSha256, row.created_at);
    return { ...toTokenInfo(row), secret };
  }

  verify(secret: string): string | undefined {
    const hash = lookupHash(secret);
    if (hash === undefined) return undefined;
    const row = this.byHash.get(hash);
    if (!row || row.revoked_at !== null) return undefined;
    const now = this.clock();
    if (shouldTouch(row, now)) this.touch.run(now, row.id);
    return row.actor;
  }

  revokeById(id: string): boolean {
    return this.revoke.run(this.clock(), id).changes === 1;
  }

  list(actor?: string): TokenInfo[] {
    return this.all.all({ actor: actor ?? null }).map(toTokenInfo);
  }
}
