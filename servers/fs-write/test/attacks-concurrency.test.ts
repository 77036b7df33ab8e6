import { existsSync, mkdirSync, readFileSync, rmSync, utimesSync, writeFileSync } from 'node:fs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startHttpServer, startStdioServer, tempWorkspace, type HttpServerProcess, type ServerProcess, type TempWorkspace } from '@bulkhead/core/testing';
import { FS_WRITE_CLI, sha256, strayTemps } from './attack-kit.js';
import { startFsWrite, toolCall, type ToolCall } from './helpers.js';

function workspace(files: Record<string, string>): TempWorkspace {
  const ws = tempWorkspace(files, 'bulkhead-fsw-');
  mkdirSync(ws.path('.bulkhead'));
  writeFileSync(ws.path('.bulkhead/permissions.yaml'), 'allow:\n  - fs_write\n');
  return ws;
}

type Client = ServerProcess['client'];

const call = async (client: Client, name: string, args: Record<string, unknown>): Promise<ToolCall> => toolCall(await client.callTool({ name, arguments: args }));

describe('two clients of one server process (two Streamable HTTP sessions)', () => {
  let ws: TempWorkspace;
  let server: HttpServerProcess;
  let a: Client;
  let b: Client;
  beforeAll(async () => {
    ws = workspace({});
    server = await startHttpServer({ script: FS_WRITE_CLI, args: ['--root', ws.root] });
    a = server.client;
    b = await server.connectAnother();
  });
  afterAll(async () => {
    await server.close();
    ws.cleanup();
  });

  it('serialises edits of one file: disjoint edits from both sessions all land', async () => {
    const N = 40;
    const lines = [...Array.from({ length: N }, (_, i) => `a${i};`), ...Array.from({ length: N }, (_, i) => `b${i};`)];
    writeFileSync(ws.path('shared.txt'), `${lines.join('\n')}\n`);
    const run = async (client: Client, letter: 'a' | 'b') => {
      const results: ToolCall[] = [];
      for (let i = 0; i < N; i++) {
        // edit_file and multi_edit alternate, so both tools race against the other session.
        results.push(
          i % 2 === 0
            ? await call(client, 'edit_file', { path: 'shared.txt', old_string: `${letter}${i};`, new_string: `${letter.toUpperCase()}${i};` })
            : await call(client, 'multi_edit', { path: 'shared.txt', edits: [{ old_string: `${letter}${i};`, new_string: `${letter.toUpperCase()}${i};` }] }),
        );
      }
      return results;
    };
    const [fromA, fromB] = await Promise.all([run(a, 'a'), run(b, 'b')]);
    expect([...fromA, ...fromB].filter((result) => result.isError)).toEqual([]);
    expect(readFileSync(ws.path('shared.txt'), 'utf8')).toBe(`${lines.map((line) => line.toUpperCase()).join('\n')}\n`);
    expect(strayTemps(ws.root)).toEqual([]);
  });

  it('one of two writes from the same expected_sha256 wins; the other gets a conflict naming both hashes', async () => {
    for (let round = 0; round < 10; round++) {
      writeFileSync(ws.path('cas.txt'), `version ${round}\n`);
      const base = sha256(`version ${round}\n`);
      const [fromA, fromB] = await Promise.all([
        call(a, 'write_file', { path: 'cas.txt', content: `A wrote ${round}\n`, expected_sha256: base }),
        call(b, 'write_file', { path: 'cas.txt', content: `B wrote ${round}\n`, expected_sha256: base }),
      ]);
      const [winner, loser, winnerText] = fromA.isError ? [fromB, fromA, `B wrote ${round}\n`] : [fromA, fromB, `A wrote ${round}\n`];
      expect(winner.isError).toBe(false);
      expect(winner.text.split('\n')[0]).toMatch(/^Updated cas\.txt \(replaced; \+1 −1 lines;/);
      expect(loser).toEqual({
        isError: true,
        text: `cas.txt has changed: its sha256 is ${sha256(winnerText)}, not the expected_sha256 ${base}. Nothing was written; read it again and retry.`,
      });
      expect(readFileSync(ws.path('cas.txt'), 'utf8')).toBe(winnerText);
    }
  });

  it('one of two edits of the same text wins; the other is told the text is no longer there', async () => {
    for (let round = 0; round < 10; round++) {
      writeFileSync(ws.path('race.txt'), 'const mode = "old";\n');
      const [fromA, fromB] = await Promise.all([
        call(a, 'edit_file', { path: 'race.txt', old_string: 'const mode = "old";', new_string: 'const mode = "alpha";' }),
        call(b, 'multi_edit', { path: 'race.txt', edits: [{ old_string: 'const mode = "old";', new_string: 'const mode = "beta";' }] }),
      ]);
      expect([fromA.isError, fromB.isError].sort()).toEqual([false, true]);
      const final = readFileSync(ws.path('race.txt'), 'utf8');
      if (fromA.isError) {
        expect(final).toBe('const mode = "beta";\n');
        expect(fromA.text).toBe(
          'old_string was not found in race.txt. The closest text is at line 1 (76% similar):\n     1\tconst mode = "beta";\nDifference ([-x-] is only in old_string, {+y+} only in the file): const mode = \\"[-old-]{+beta+}\\";',
        );
      } else {
        expect(final).toBe('const mode = "alpha";\n');
        expect(fromB.text).toBe(
          'none of the 1 edits applied to race.txt; nothing was written.\nedit 1: failed: old_string was not found in race.txt. The closest text is at line 1 (74% similar):\n     1\tconst mode = "alpha";\nDifference ([-x-] is only in old_string, {+y+} only in the file): const mode = \\"[-o-]{+a+}l[-d-]{+pha+}\\";',
        );
      }
    }
  });
});

describe('two server processes over stdio editing one file in a loop', () => {
  let ws: TempWorkspace;
  let servers: ServerProcess[];
  beforeAll(async () => {
    ws = workspace({ 'log.txt': 'BEGIN\nEND\n' });
    servers = await Promise.all([0, 1].map(() => startStdioServer({ script: FS_WRITE_CLI, args: ['--root', ws.root] })));
  });
  afterAll(async () => {
    await Promise.all(servers.map((server) => server.close()));
    ws.cleanup();
  });

  it('loses no update: every reported success is in the final file, every failure is a clear conflict', async () => {
    const N = 150;
    const outcomes = await Promise.all(
      servers.map(async (server, p) => {
        const done: string[] = [];
        const refused: string[] = [];
        for (let i = 0; i < N; i++) {
          const line = `p${p}-${i}`;
          const result = await call(server.client, i % 3 === 2 ? 'multi_edit' : 'edit_file', i % 3 === 2 ? { path: 'log.txt', edits: [{ old_string: 'END', new_string: `${line}\nEND` }] } : { path: 'log.txt', old_string: 'END', new_string: `${line}\nEND` });
          if (result.isError) refused.push(result.text);
          else done.push(line);
        }
        return { done, refused };
      }),
    );
    const final = readFileSync(ws.path('log.txt'), 'utf8').split('\n');
    const succeeded = outcomes.flatMap((o) => o.done);
    expect(final.filter((line) => /^p\d-\d+$/.test(line)).sort()).toEqual([...succeeded].sort());
    expect(final[0]).toBe('BEGIN');
    expect(final.slice(-2)).toEqual(['END', '']);
    const conflict = 'log.txt changed on disk since it was read (another writer?); nothing was written. Read it again and retry.';
    const refusals = outcomes.flatMap((o) => o.refused);
    expect(refusals.filter((text) => text !== conflict)).toEqual([]);
    // Both processes got work done, and the conflicts were real races, not a stuck lock.
    expect(succeeded.length).toBeGreaterThan(N / 2);
    expect(strayTemps(ws.root)).toEqual([]);
  });
});

describe('the replace lock that writers of every process hold while they check a file and rename over it', () => {
  it('is taken over when a writer died holding it (older than 2 s)', async () => {
    const fsw = await startFsWrite({ 'a.txt': 'old\n' });
    try {
      const lock = fsw.ws.write('.a.txt.bulkhead-lock', '');
      utimesSync(lock, new Date(Date.now() - 10_000), new Date(Date.now() - 10_000));
      expect((await fsw.call('write_file', { path: 'a.txt', content: 'new\n' })).text.split('\n')[0]).toMatch(/^Updated a\.txt /);
      expect(readFileSync(fsw.ws.path('a.txt'), 'utf8')).toBe('new\n');
      expect(existsSync(lock)).toBe(false);
    } finally {
      await fsw.close();
    }
  });

  it('is waited for while another writer holds it', async () => {
    const fsw = await startFsWrite({ 'a.txt': 'old\n' });
    try {
      const lock = fsw.ws.write('.a.txt.bulkhead-lock', '');
      const started = Date.now();
      setTimeout(() => rmSync(lock), 300);
      expect((await fsw.call('edit_file', { path: 'a.txt', old_string: 'old', new_string: 'new' })).text.split('\n')[0]).toMatch(/^Updated a\.txt /);
      expect(Date.now() - started).toBeGreaterThanOrEqual(290);
      expect(readFileSync(fsw.ws.path('a.txt'), 'utf8')).toBe('new\n');
      expect(strayTemps(fsw.ws.root)).toEqual([]);
    } finally {
      await fsw.close();
    }
  });
});
