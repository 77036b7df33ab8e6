import { spawnSync } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { linkSync, lstatSync, mkdirSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { hostname } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { Trash, trashPolicySchema } from '@bulkhead/core';
import { startStdioServer, tempWorkspace, toolCall, type ServerProcess, type TempWorkspace } from '@bulkhead/core/testing';
import { FS_WRITE_CLI, journalRecords, sha256, strayTemps, trashSlots } from './attack-kit.js';
import { startFsWrite, type FsWriteHarness } from './helpers.js';

let ws: TempWorkspace | undefined;
let server: ServerProcess | undefined;
let fsw: FsWriteHarness | undefined;

afterEach(async () => {
  await server?.close();
  server = undefined;
  await fsw?.close();
  fsw = undefined;
  ws?.cleanup();
  ws = undefined;
});

/** The pid of a process that has exited: what a writer killed with kill -9 leaves in its names. */
function deadPid(): number {
  const child = spawnSync(process.execPath, ['-e', 'process.stdout.write(String(process.pid))'], { encoding: 'utf8' });
  return Number(child.stdout);
}

const hex = (bytes: number) => randomBytes(bytes).toString('hex');

/** Regular files of the workspace outside the control-plane folder, with their link counts. */
function filesWithLinks(root: string, relative = ''): Record<string, number> {
  const out: Record<string, number> = {};
  for (const name of readdirSync(join(root, relative))) {
    const rel = relative === '' ? name : `${relative}/${name}`;
    if (rel === '.bulkhead') continue;
    const stat = lstatSync(join(root, rel));
    if (stat.isDirectory()) Object.assign(out, filesWithLinks(root, rel));
    else if (stat.isFile()) out[rel] = stat.nlink;
  }
  return out;
}

describe('leftovers of a writer killed with kill -9, made by hand with a dead pid', () => {
  it('a new file still linked under its temp name is edited as usual, and the temp name goes', async () => {
    fsw = await startFsWrite({ 'a.txt': 'one\n' });
    const temp = fsw.ws.path(`.a.txt.bulkhead-${deadPid()}-${hex(6)}.tmp`);
    linkSync(fsw.ws.path('a.txt'), temp);
    expect(lstatSync(fsw.ws.path('a.txt')).nlink).toBe(2);
    const edited = await fsw.call('edit_file', { path: 'a.txt', old_string: 'one', new_string: 'two' });
    expect(edited.isError).toBe(false);
    expect(readFileSync(fsw.ws.path('a.txt'), 'utf8')).toBe('two\n');
    expect(lstatSync(fsw.ws.path('a.txt')).nlink).toBe(1);
    expect(strayTemps(fsw.ws.root)).toEqual([]);
  });

  it('a real second hard link is still refused (it is not a temp name of this file)', async () => {
    fsw = await startFsWrite({ 'a.txt': 'one\n' });
    linkSync(fsw.ws.path('a.txt'), fsw.ws.path('other.txt'));
    linkSync(fsw.ws.path('a.txt'), fsw.ws.path(`.b.txt.bulkhead-${deadPid()}-${hex(6)}.tmp`));
    const edited = await fsw.call('edit_file', { path: 'a.txt', old_string: 'one', new_string: 'two' });
    expect(edited).toEqual({ isError: true, text: expect.stringMatching(/^a\.txt has 3 hard links; /) });
    expect(readFileSync(fsw.ws.path('a.txt'), 'utf8')).toBe('one\n');
  });

  it('a lock file naming a dead writer is taken over at once, not after it goes stale', async () => {
    fsw = await startFsWrite({ 'a.txt': 'one\n' });
    writeFileSync(fsw.ws.path('.a.txt.bulkhead-lock'), String(deadPid()));
    const lock = fsw.ws.path('.a.txt.bulkhead-lock');
    // Older than the grace a lock of another pid namespace gets.
    await new Promise((resolve) => setTimeout(resolve, 150));
    const started = Date.now();
    expect((await fsw.call('write_file', { path: 'a.txt', content: 'two\n' })).isError).toBe(false);
    expect(Date.now() - started).toBeLessThan(1500);
    expect(() => lstatSync(lock)).toThrow();
  });

  it('a server that starts sweeps the temp files and locks its journal names for dead pids, and trash slots left half-made', async () => {
    ws = tempWorkspace({ '.bulkhead/permissions.yaml': 'allow:\n  - fs_write\n', 'src/a.txt': 'a\n', 'src/big.txt': 'x'.repeat(1 << 20) });
    const dead = deadPid();
    const journal = ws.path('.bulkhead/trash/.in-flight');
    mkdirSync(journal, { recursive: true });
    const record = (path: string, pid = dead, host = hostname()) => writeFileSync(join(journal, `${pid}-${hex(6)}.json`), JSON.stringify({ pid, host, path }));
    // A temp file half written, a temp file linked into place but not removed, a lock held by the dead writer.
    const half = ws.path(`src/.big.txt.bulkhead-${dead}-${hex(6)}.tmp`);
    writeFileSync(half, 'x'.repeat(1000));
    record(half);
    const linked = ws.path(`src/.a.txt.bulkhead-${dead}-${hex(6)}.tmp`);
    linkSync(ws.path('src/a.txt'), linked);
    record(linked);
    const lock = ws.path('src/.a.txt.bulkhead-lock');
    writeFileSync(lock, String(dead));
    record(lock);
    // Never touched: a live writer's temp file, one of another host, a record naming an ordinary file.
    const live = ws.path(`src/.a.txt.bulkhead-${process.pid}-${hex(6)}.tmp`);
    writeFileSync(live, 'live');
    record(live, process.pid);
    const otherHost = ws.path(`src/.b.txt.bulkhead-${dead}-${hex(6)}.tmp`);
    writeFileSync(otherHost, 'elsewhere');
    record(otherHost, dead, `not-${hostname()}`);
    record(ws.path('src/a.txt'));
    // A record the dead writer had created but not yet written.
    writeFileSync(join(journal, `${dead}-${hex(6)}.json`), '');
    // Trash slots: one staged and never named, one with a manifest of a dead process and no entry,
    // one a delete killed between link() and unlink() (the file in both places).
    mkdirSync(ws.path(`.bulkhead/trash/.new-${dead}-${hex(4)}`));
    const manifest = (id: string, original: string, extra: Record<string, unknown> = {}) =>
      JSON.stringify({ id, original, shown_as: original.slice(ws!.root.length + 1), kind: 'file', bytes: 2, entries: 0, deleted_at: new Date().toISOString(), reason: 'deleted', pid: dead, host: hostname(), ...extra });
    const incomplete = `20261201-120000-${hex(4)}`;
    mkdirSync(ws.path(`.bulkhead/trash/${incomplete}`));
    writeFileSync(ws.path(`.bulkhead/trash/${incomplete}/manifest.json`), manifest(incomplete, ws.path('src/gone.txt')));
    const interrupted = `20261201-120001-${hex(4)}`;
    mkdirSync(ws.path(`.bulkhead/trash/${interrupted}`));
    writeFileSync(ws.path(`.bulkhead/trash/${interrupted}/manifest.json`), manifest(interrupted, ws.path('src/a.txt')));
    linkSync(ws.path('src/a.txt'), ws.path(`.bulkhead/trash/${interrupted}/entry`));
    expect(lstatSync(ws.path('src/a.txt')).nlink).toBe(3);
    // A move killed between link() and unlink(): the file under both names.
    writeFileSync(ws.path('src/moving.txt'), 'm\n');
    linkSync(ws.path('src/moving.txt'), ws.path('src/moved.txt'));
    writeFileSync(join(journal, `${dead}-${hex(6)}.json`), JSON.stringify({ pid: dead, host: hostname(), path: ws.path('src/moving.txt'), linkedTo: ws.path('src/moved.txt') }));

    server = await startStdioServer({ script: FS_WRITE_CLI, args: ['--root', ws.root] });
    await expect.poll(() => trashSlots(ws!.root)).toEqual([]);
    await expect.poll(() => readdirSync(ws!.path('src')).sort()).toEqual([`.a.txt.bulkhead-${process.pid}-${live.split('-').at(-1)}`, `.b.txt.bulkhead-${dead}-${otherHost.split('-').at(-1)}`, 'a.txt', 'big.txt', 'moved.txt'].sort());
    expect(lstatSync(ws.path('src/a.txt')).nlink).toBe(1);
    expect(readFileSync(ws.path('src/a.txt'), 'utf8')).toBe('a\n');
    expect(lstatSync(ws.path('src/moved.txt')).nlink).toBe(1);
    // The records of the live writer and of the other host stay; the rest are gone.
    expect(journalRecords(ws.root).map((name) => Number(name.split('-')[0])).sort()).toEqual([dead, process.pid].sort());
  });
});

describe('kill -9 of the server at random points, many times, during creates, overwrites, edits and deletes', () => {
  const ROUNDS = 24;

  it(`leaves no temp file, lock, journal record or broken trash slot, and every file stays editable (${ROUNDS} kills)`, async () => {
    ws = tempWorkspace({ '.bulkhead/permissions.yaml': 'allow:\n  - fs_write\n', 'shared.txt': 'version 0\n' });
    const big = (tag: string) => `${tag}\n${'y'.repeat(1_500_000 + Math.floor(Math.random() * 1_000_000))}\n`;
    let sequence = 0;
    const killedAt: number[] = [];
    const left = { temps: 0, records: 0, links: 0, slots: 0 };
    for (let round = 0; round < ROUNDS; round++) {
      server = await startStdioServer({ script: FS_WRITE_CLI, args: ['--root', ws.root] });
      const client = server.client;
      const call = async (name: string, args: Record<string, unknown>) => toolCall(await client.callTool({ name, arguments: args }));
      // Two loops at once, so locks are held too; each runs until the connection dies.
      const loop = async (lane: number) => {
        for (;;) {
          const n = sequence++;
          await call('write_file', { path: `lane${lane}/n${n}.txt`, content: big(`new ${n}`) });
          await call('write_file', { path: 'shared.txt', content: big(`version ${n}`) });
          await call('edit_file', { path: 'shared.txt', old_string: `version ${n}`, new_string: `edited ${n}` });
          await call('delete_path', { path: `lane${lane}/n${n}.txt` });
        }
      };
      const loops = Promise.allSettled([loop(0), loop(1)]);
      const delay = 20 + Math.floor(Math.random() * 400);
      await new Promise((resolve) => setTimeout(resolve, delay));
      killedAt.push(delay);
      process.kill(server.pid!, 'SIGKILL');
      await loops;
      await server.close();
      server = undefined;
      // What this kill left, for the next server to sweep when it starts.
      left.temps += strayTemps(ws.root).length;
      left.records += journalRecords(ws.root).length;
      left.links += Object.values(filesWithLinks(ws.root)).filter((links) => links > 1).length;
      left.slots += trashSlots(ws.root).filter((name) => name.startsWith('.')).length;
    }
    // A fresh server sweeps what the killed ones left.
    server = await startStdioServer({ script: FS_WRITE_CLI, args: ['--root', ws.root] });
    await expect.poll(() => strayTemps(ws!.root), { timeout: 10_000 }).toEqual([]);
    await expect.poll(() => journalRecords(ws!.root), { timeout: 10_000 }).toEqual([]);
    const trash = new Trash(ws.path('.bulkhead'), trashPolicySchema.parse({}));
    await expect.poll(async () => (await trash.list()).problems, { timeout: 10_000 }).toEqual([]);
    expect(trashSlots(ws.root).filter((name) => name.startsWith('.'))).toEqual([]);
    // Every file has one link and takes an edit; every trash entry is one whole file.
    const files = filesWithLinks(ws.root);
    expect(Object.values(files).every((links) => links === 1)).toBe(true);
    for (const path of Object.keys(files)) {
      const result = toolCall(await server.client.callTool({ name: 'write_file', arguments: { path, content: `after ${path}\n` } }));
      expect(result.isError, `${path}: ${result.text}`).toBe(false);
    }
    for (const entry of (await trash.list()).entries) {
      const stored = ws.path(`.bulkhead/trash/${entry.id}/entry`);
      const stat = lstatSync(stored);
      expect(stat.nlink).toBe(1);
      expect(stat.size).toBe(entry.bytes);
      if (entry.reason === 'replaced') expect(sha256(readFileSync(stored)).length).toBe(64);
    }
    expect(sequence).toBeGreaterThan(ROUNDS);
    if (process.env.BULKHEAD_KILL_REPORT) console.log(`kill -9 at ${killedAt.join(', ')} ms; left before the sweeps: ${JSON.stringify(left)}; ${sequence} rounds of calls`);
  }, 180_000);
});
