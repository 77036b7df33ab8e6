import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { createHash } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { STORE_BACKENDS, storeFixture, type StoreFixture } from './store-fixture.js';

describe.each(STORE_BACKENDS)('tokens on %s', (backend) => {
  let f: StoreFixture;
  beforeEach(async () => {
    f = await storeFixture(backend);
  });
  afterEach(() => f.cleanup());

  it('refuses a token for anonymous, whom calls without a token act as', async () => {
    await expect(f.store.createToken('anonymous')).rejects.toThrow('anonymous is who calls without a token act as on a public repository; give a token another actor');
    expect(await f.store.listTokens()).toEqual([]);
  });

  it('creates a secret shown once, verifies it to its actor, and revokes it', async () => {
    const token = await f.store.createToken('alice@example.com[claude]');
    expect(token.secret).toMatch(/^bhl_[A-Za-z0-9_-]{43}$/);
    expect(token.id).toMatch(/^tok-[0-9a-f]{10}$/);
    expect(await f.store.verifyToken(token.secret)).toBe('alice@example.com[claude]');
    expect(await f.store.verifyToken(`${token.secret.slice(0, -1)}${token.secret.endsWith('A') ? 'B' : 'A'}`)).toBeUndefined();
    expect(await f.store.verifyToken('')).toBeUndefined();
    expect(await f.store.verifyToken('Bearer x')).toBeUndefined();
    expect(await f.store.revokeToken(token.id)).toBe(true);
    expect(await f.store.revokeToken(token.id)).toBe(false);
    expect(await f.store.verifyToken(token.secret)).toBeUndefined();
  });

  it('stores only SHA-256 hashes: the secret is nowhere in the table', async () => {
    const token = await f.store.createToken('alice');
    const rows = await f.rows<Record<string, unknown>>('SELECT * FROM tokens');
    expect(rows).toHaveLength(1);
    const stored = JSON.stringify(rows);
    expect(stored).not.toContain(token.secret);
    expect(stored).not.toContain(token.secret.slice(4));
    expect(rows[0]?.['secret_sha256']).toBe(createHash('sha256').update(token.secret).digest('hex'));
    if (f.sqlite) {
      // SQLite only: nor in the database file once the WAL is checkpointed into it.
      f.sqlite.db.pragma('wal_checkpoint(TRUNCATE)');
      expect(readFileSync(f.sqlite.file).includes(Buffer.from(token.secret.slice(4)))).toBe(false);
    }
  });

  it('lists tokens with last use (at most once a minute) and revocation, never the secret', async () => {
    const first = await f.store.createToken('alice');
    f.advance(1000);
    const second = await f.store.createToken('bob');
    f.advance(1000);
    await f.store.verifyToken(first.secret);
    const used = f.now();
    f.advance(30_000);
    await f.store.verifyToken(first.secret);
    await f.store.revokeToken(second.id);
    const listed = await f.store.listTokens();
    expect(listed).toEqual([
      { id: first.id, actor: 'alice', created_at: first.created_at, last_used_at: new Date(used).toISOString(), revoked_at: null },
      { id: second.id, actor: 'bob', created_at: second.created_at, last_used_at: null, revoked_at: new Date(f.now()).toISOString() },
    ]);
    expect(JSON.stringify(listed)).not.toContain('bhl_');
    expect((await f.store.listTokens('bob')).map((t) => t.id)).toEqual([second.id]);
  });
});
