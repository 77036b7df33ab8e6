import { afterEach, describe, expect, it } from 'vitest';
import { tempWorkspace, type TempWorkspace } from '@bulkhead/core/testing';
import { openDatabase } from '../src/store/database.js';
import { SqliteWorkQueueStore } from '../src/store/sqlite-work-queue.js';
import { runTokenCommand } from '../src/token-cli.js';

let ws: TempWorkspace;

afterEach(() => ws.cleanup());

async function run(...argv: string[]): Promise<{ code: number; text: string }> {
  let text = '';
  const code = await runTokenCommand(argv, ws.root, (chunk) => {
    text += chunk;
  });
  return { code, text };
}

describe('bulkhead-ladder token', () => {
  it('creates a token shown once, lists it without its secret, and revokes it', async () => {
    ws = tempWorkspace({}, 'bulkhead-ladder-tokens-');
    const created = await run('create', '--actor', 'ada');
    expect(created.code).toBe(0);
    const [, id, secret] = /^token (\S+) for ada .*\n(\S+)\n$/s.exec(created.text) ?? [];
    expect(id).toBeDefined();

    const store = new SqliteWorkQueueStore(openDatabase(ws.path('.bulkhead/ladder.db')));
    try {
      expect(await store.verifyToken(secret!)).toBe('ada');
    } finally {
      store.close();
    }

    const listed = await run('list');
    expect(listed.text).toContain(`${id} ada`);
    expect(listed.text).not.toContain(secret);

    expect((await run('revoke', id!)).code).toBe(0);
    expect((await run('list')).text).toContain('revoked');
    expect((await run('revoke', id!)).text).toContain(`no live token ${id}`);
  });

  it('explains a command line it cannot run', async () => {
    ws = tempWorkspace({}, 'bulkhead-ladder-tokens-');
    const missing = await run('create');
    expect(missing.code).toBe(2);
    expect(missing.text).toContain('--actor NAME');
    expect((await run('frobnicate')).text).toContain('unknown token command frobnicate');
  });
});
