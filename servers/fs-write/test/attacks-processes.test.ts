import { chmodSync, existsSync, lstatSync, mkdirSync, readdirSync, readFileSync, rmSync, watch, writeFileSync, type FSWatcher } from 'node:fs';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { startStdioServer, tempWorkspace, type ServerProcess, type TempWorkspace } from '@bulkhead/core/testing';
import { FS_WRITE_CLI, journalRecords, sha256, skipAudit, snapshot, strayTemps, TEMP_FILE, trashSlots } from './attack-kit.js';
import { toolCall, type ToolCall } from './helpers.js';

let ws: TempWorkspace | undefined;
let server: ServerProcess | undefined;
afterEach(async () => {
  await server?.close();
  server = undefined;
  ws?.cleanup();
  ws = undefined;
});

/** A workspace whose control-plane folder allows every fs_write tool, plus an optional policy. */
function workspace(files: Record<string, string | Uint8Array>, policy?: string): TempWorkspace {
  const made = tempWorkspace(files, 'bulkhead-fsw-');
  mkdirSync(made.path('.bulkhead'));
  writeFileSync(made.path('.bulkhead/permissions.yaml'), 'allow:\n  - fs_write\n');
  if (policy !== undefined) writeFileSync(made.path('.bulkhead/fs_write_policy.yaml'), policy);
  return made;
}

const call = async (name: string, args: Record<string, unknown>): Promise<ToolCall> => toolCall(await server!.client.callTool({ name, arguments: args }));

describe('a full disk (the server process may not write files over 1 MiB: RLIMIT_FSIZE, so writes fail with EFBIG)', () => {
  it('leaves the original byte-identical, creates nothing, leaves no temp file, says why, and keeps serving', async () => {
    ws = workspace({ 'big.txt': 'original line\n'.repeat(10_000), 'grow.txt': `${'a'.repeat(600_000)}\n`, 'keep/x.txt': 'original\n' });
    const before = snapshot(ws.root, skipAudit);
    // bash ignores SIGXFSZ (node does too) so the write fails with EFBIG rather than killing the server.
    server = await startStdioServer({ script: FS_WRITE_CLI, args: ['--root', ws.root], wrapper: ['bash', '-c', 'trap "" XFSZ; ulimit -f 1024; exec "$0" "$@"'] });
    const efbig = 'the file is larger than this process may write (EFBIG: file size limit)';

    expect(await call('write_file', { path: 'big.txt', content: 'x'.repeat(3 * 1024 * 1024) })).toEqual({
      isError: true,
      text: `cannot write big.txt: ${efbig}; nothing was written, big.txt is unchanged`,
    });
    expect(await call('write_file', { path: 'new.bin', content: 'y'.repeat(2 * 1024 * 1024) })).toEqual({ isError: true, text: `cannot write new.bin: ${efbig}; nothing was written` });
    expect(await call('write_file', { path: 'keep/deeper/new.txt', content: 'z'.repeat(2 * 1024 * 1024) })).toEqual({
      isError: true,
      text: `cannot write keep/deeper/new.txt: ${efbig}; nothing was written`,
    });
    // An edit that grows a file past the limit (600 KB doubled), alone and among several edits.
    expect(await call('edit_file', { path: 'grow.txt', old_string: 'a', new_string: 'aa', replace_all: true })).toEqual({
      isError: true,
      text: `cannot write grow.txt: ${efbig}; nothing was written, grow.txt is unchanged`,
    });
    expect(await call('multi_edit', { path: 'grow.txt', edits: [{ old_string: 'a', new_string: 'aa', replace_all: true }, { old_string: 'missing', new_string: '' }] })).toEqual({
      isError: true,
      text: `cannot write grow.txt: ${efbig}; nothing was written, grow.txt is unchanged`,
    });

    // Not one byte changed, and the folder made for the new file was taken away again.
    expect(snapshot(ws.root, skipAudit)).toEqual(before);
    expect(strayTemps(ws.root)).toEqual([]);
    // The previous versions kept for the failed writes were taken out of the trash again.
    expect(trashSlots(ws.root)).toEqual([]);
    expect(journalRecords(ws.root)).toEqual([]);
    expect(readdirSync(ws.root).sort()).toEqual(['.bulkhead', 'big.txt', 'grow.txt', 'keep']);
    // A write under the limit still works.
    expect((await call('write_file', { path: 'small.txt', content: 'fine\n' })).text.split('\n')[0]).toBe(`Created small.txt (new file; +1 −0 lines; 5 B; sha256 ${sha256('fine\n')})`);
  });
});

describe('a read-only folder', () => {
  it('leaves the original untouched and no temp file, with a clear error, for every tool', async () => {
    ws = workspace({ 'ro/a.txt': 'original a\n', 'ro/b.txt': 'original b\n' });
    chmodSync(ws.path('ro'), 0o555);
    const asRoot = process.getuid?.() === 0;
    const before = snapshot(ws.root, skipAudit);
    // Root ignores permissions only through its capabilities: without them it is an ordinary owner,
    // and it can still read the server's code wherever the checkout lives.
    server = await startStdioServer({ script: FS_WRITE_CLI, args: ['--root', ws.root], ...(asRoot ? { wrapper: ['setpriv', '--bounding-set=-all', '--inh-caps=-all', '--'] } : {}) });
    const denied = 'permission denied: its folder is not writable (EACCES)';

    expect(await call('write_file', { path: 'ro/a.txt', content: 'new\n' })).toEqual({ isError: true, text: `cannot write ro/a.txt: ${denied}; nothing was written, ro/a.txt is unchanged` });
    expect(await call('edit_file', { path: 'ro/a.txt', old_string: 'original', new_string: 'edited' })).toEqual({
      isError: true,
      text: `cannot write ro/a.txt: ${denied}; nothing was written, ro/a.txt is unchanged`,
    });
    expect(await call('multi_edit', { path: 'ro/b.txt', edits: [{ old_string: 'original', new_string: 'edited' }] })).toEqual({
      isError: true,
      text: `cannot write ro/b.txt: ${denied}; nothing was written, ro/b.txt is unchanged`,
    });
    expect(await call('write_file', { path: 'ro/new.txt', content: 'new\n' })).toEqual({ isError: true, text: `cannot write ro/new.txt: ${denied}; nothing was written` });
    expect(await call('write_file', { path: 'ro/sub/new.txt', content: 'new\n' })).toEqual({
      isError: true,
      text: `cannot create the folders for ro/sub/new.txt: cannot create ro/sub: ${denied}; nothing was written`,
    });

    expect(snapshot(ws.root, skipAudit)).toEqual(before);
    expect(strayTemps(ws.root)).toEqual([]);
    expect(trashSlots(ws.root)).toEqual([]);
    // The server runs as a user who can write elsewhere in the workspace.
    expect((await call('write_file', { path: 'ok.txt', content: 'ok\n' })).isError).toBe(false);
    chmodSync(ws.path('ro'), 0o755);
  });
});

const fileSha = (path: string) => sha256(readFileSync(path));

describe('kill -9 of the server in the middle of a large write', () => {
  const LINES = 120_000;
  /** 120 MB: a version line, then 120,000 lines of 999 x's (few lines, so the server's diff is cheap). */
  function bigFile(version: string): Buffer {
    const body = Buffer.alloc(12 + LINES * 1000, 'x');
    body.write(`VERSION=${version}\n`, 0);
    for (let i = 1; i <= LINES; i++) body[12 + i * 1000 - 1] = 0x0a;
    return body;
  }

  it.each([
    ['as soon as the temp file appears', 0],
    ['when the temp file holds 60 MB', 60_000_000],
  ])('leaves the target fully old or fully new, byte for byte: killed %s', async (_when, killAtBytes) => {
    const old = bigFile('old');
    const oldSha = sha256(old);
    const newSha = sha256(bigFile('new'));
    ws = workspace({}, 'limits:\n  max_file_bytes: 209715200\n');
    writeFileSync(ws.path('big.txt'), old);
    server = await startStdioServer({ script: FS_WRITE_CLI, args: ['--root', ws.root] });
    const pid = server.pid!;
    let killedAt: number | undefined;
    let watcher: FSWatcher | undefined;
    const killed = new Promise<void>((resolve) => {
      watcher = watch(ws!.root, (_event, name) => {
        if (killedAt !== undefined || name === null || !TEMP_FILE.test(name) || name.endsWith('lock')) return;
        const temp = join(ws!.root, name);
        const poll = () => {
          const size = existsSync(temp) ? lstatSync(temp).size : -1;
          if (size >= killAtBytes || size === -1) {
            process.kill(pid, 'SIGKILL');
            killedAt = size;
            resolve();
          } else setImmediate(poll);
        };
        poll();
      });
    });
    const reply = call('edit_file', { path: 'big.txt', old_string: 'VERSION=old', new_string: 'VERSION=new' });
    await expect(reply).rejects.toThrow(/Connection closed/);
    await killed;
    watcher!.close();
    // Killed during the write, not after it.
    expect(killedAt).toBeGreaterThanOrEqual(killAtBytes);
    const now = fileSha(ws.path('big.txt'));
    expect([oldSha, newSha]).toContain(now);
    expect(now).toBe(oldSha);
    // The only trace is the dead writer's temp file (never the target): at most one, and the next
    // server sweeps it when it starts (its journal names it and its pid is dead).
    expect(strayTemps(ws.root).length).toBeLessThanOrEqual(1);
    await server.close();
    server = await startStdioServer({ script: FS_WRITE_CLI, args: ['--root', ws.root] });
    await expect.poll(() => strayTemps(ws!.root)).toEqual([]);
    await expect.poll(() => journalRecords(ws!.root)).toEqual([]);
    expect(fileSha(ws.path('big.txt'))).toBe(oldSha);
    rmSync(ws.path('big.txt'));
  });
});
