import { lookupHash, newToken, shouldTouch, toTokenInfo, type TokenRow } from '../token-rules.js';
import type { CreatedToken, TokenInfo } from '../work-queue.js';
import { DB_NOW_MS, type PgDatabase } from './database.js';

const TOKEN_COLUMNS = 'id, actor, created_at, last_used_at, revoked_at';

/** Bearer tokens on PostgreSQL: only the SHA-256 of a secret is stored, looked up through its unique index (see store/tokens.ts). */
export class PgTokens {
  constructor(private readonly db: PgDatabase) {}

  async create(actor: string): Promise<CreatedToken> {
    const { id, secretSha256, secret } = newToken(actor);
    const row = await this.db.one<TokenRow>(
      `INSERT INTO tokens (id, actor, secret_sha256, created_at) VALUES ($1, $2, $3, coalesce($4::bigint, ${DB_NOW_MS})) RETURNING ${TOKEN_COLUMNS}`,
      [id, actor, secretSha256, this.db.clockParam()],
    );
    return { ...toTokenInfo(row!), secret };
  }

  async verify(secret: string): Promise<string | undefined> {
    const hash = lookupHash(secret);
    if (hash === undefined) return undefined;
    // The time comes with the row, so deciding whether to write last_used_at costs no extra trip.
    const row = await this.db.one<TokenRow & { now: number }>(`SELECT ${TOKEN_COLUMNS}, coalesce($2::bigint, ${DB_NOW_MS}) AS now FROM tokens WHERE secret_sha256 = $1`, [
      hash,
      this.db.clockParam(),
    ]);
    if (!row || row.revoked_at !== null) return undefined;
    if (shouldTouch(row, row.now)) await this.db.run('UPDATE tokens SET last_used_at = $1 WHERE id = $2', [row.now, row.id]);
    return row.actor;
  }

  async revokeById(id: string): Promise<boolean> {
    return (await this.db.run(`UPDATE tokens SET revoked_at = coalesce($2::bigint, ${DB_NOW_MS}) WHERE id = $1 AND revoked_at IS NULL`, [id, this.db.clockParam()])) === 1;
  }

  async list(actor?: string): Promise<TokenInfo[]> {
    const rows = await this.db.rows<TokenRow>(`SELECT ${TOKEN_COLUMNS} FROM tokens WHERE $1::text IS NULL OR actor = $1 ORDER BY created_at, id`, [actor ?? null]);
    return rows.map(toTokenInfo);
  }
}
