import { existsSync } from 'node:fs';
import { afterEach, describe, expect, it } from 'vitest';
import { tempWorkspace, type TempWorkspace } from '@bulkhead/core/testing';
import { openDatabase } from '../src/store/database.js';
import { SqliteWorkQueueStore } from '../src/store/sqlite-work-queue.js';
import { runTokenCommand } from '../src/token-cli.js';

let ws: TempWorkspace;

afterEach(() => ws.cleanup());

async function run(...argv: string[]): Promise<{ code: number; stdout: string; stderr: string }> {
  let stdout = '';
  let stderr = '';
  const code = await runTokenCommand(argv, ws.root, {
    out: (chunk) => {
      stdout += chunk;
    },
    err: (chunk) => {
      stderr += chunk;
    },
  });
  return { code, stdout, stderr };
}

describe('bulkhead-ladder token', () => {
  it('creates a token printed alone on stdout, lists it without its secret, and revokes it', async () => {
    ws = tempWorkspace({}, 'bulkhead-ladder-tokens-');
    const created = await run('create', '--actor', 'ada');
    expect(created.code).toBe(0);
    // stdout is the secret and a newline, nothing else: TOKEN=$(bulkhead-ladder token create …) captures it.
    expect(created.stdout).toMatch(/^\S+\n$/);
    const secret = created.stdout.trim();
    const [, id] = /^bulkhead-ladder token: created token (\S+) for ada, printed on stdout this once \(only its hash is kept\); keep it secret\n$/.exec(created.stderr) ?? [];
    expect(id).toBeDefined();
    expect(created.stderr).not.toContain(secret);

    const store = new SqliteWorkQueueStore(openDatabase(ws.path('.bulkhead/ladder.db')));
    try {
      expect(await store.verifyToken(secret)).toBe('ada');
    } finally {
      store.close();
    }

    const listed = await run('list');
    expect(listed.stdout).toContain(`${id} ada`);
    expect(listed.stdout).not.toContain(secret);

    expect(await run('revoke', id!)).toEqual({ code: 0, stdout: `revoked ${id}\n`, stderr: '' });
    expect((await run('list')).stdout).toContain('revoked');
    expect(await run('revoke', id!)).toEqual({ code: 1, stdout: '', stderr: `bulkhead-ladder token: no live token ${id}\n` });
  });

  it('lists no tokens of a ladder that has no database yet, without making one', async () => {
    ws = tempWorkspace({}, 'bulkhead-ladder-tokens-');
    expect(await run('list')).toEqual({ code: 0, stdout: 'no tokens\n', stderr: '' });
    expect(existsSync(ws.path('.bulkhead'))).toBe(false);
  });

  it('explains a command line it cannot run, on stderr', async () => {
    ws = tempWorkspace({}, 'bulkhead-ladder-tokens-');
    const missing = await run('create');
    expect(missing.code).toBe(2);
    expect(missing.stdout).toBe('');
    expect(missing.stderr).toContain('--actor NAME');
    expect((await run('frobnicate')).stderr).toContain('unknown token command frobnicate');
  });
});
