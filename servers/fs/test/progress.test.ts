import { closeSync, mkdirSync, openSync, writeFileSync, writeSync } from 'node:fs';
/** A progress notification's params as a client's onprogress gets them. */
type Progress = { progress: number; total?: number; message?: string };
import { afterEach, describe, expect, it } from 'vitest';
import { startFs, type FsHarness } from './helpers.js';

let fs: FsHarness | undefined;
afterEach(async () => {
  await fs?.close();
  fs = undefined;
});

describe('progress on long reads', () => {
  it('reports progress while scanning far into a large file', async () => {
    fs = await startFs({});
    const file = fs.ws.path('big.log');
    const fd = openSync(file, 'w');
    const block = Buffer.from('0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcde\n'.repeat(16_384));
    for (let i = 0; i < 72; i++) writeSync(fd, block);
    closeSync(fd);
    const lines = 72 * 16_384;
    const updates: { progress: number; total?: number; message?: string }[] = [];
    const result = await fs.client.callTool({ name: 'read_file', arguments: { path: 'big.log', offset: lines, limit: 1 } }, undefined, {
      onprogress: (update) => updates.push({ progress: update.progress, total: update.total, message: update.message }),
    });
    const text = (result.content as { text: string }[])[0]!.text;
    expect(text.split('\n')[0]).toBe(`${lines}\t0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcde`);
    expect(updates.length).toBeGreaterThanOrEqual(1);
    // The kit numbers the notifications; the tool's own count is in its words.
    expect(updates[0]).toEqual({ progress: 1, total: undefined, message: `read_file: scanning big.log for line ${lines} (64.0 MiB of 72.0 MiB)` });
  });
});

describe('progress of searches (ripgrep)', () => {
  const tree = (fsHarness: FsHarness) => {
    for (let d = 0; d < 5; d++) {
      mkdirSync(fsHarness.ws.path(`src/d${d}`), { recursive: true });
      for (let f = 0; f < 20; f++) writeFileSync(fsHarness.ws.path(`src/d${d}/f${f}.ts`), f % 4 === 0 ? 'export const needle = 1;\n' : 'export {};\n');
    }
  };

  it('grep says how many files matched so far, in the folder searched', async () => {
    fs = await startFs({});
    tree(fs);
    const updates: Progress[] = [];
    const result = await fs.client.callTool({ name: 'grep', arguments: { pattern: 'needle', path: 'src' } }, undefined, { onprogress: (update) => updates.push(update) });
    expect((result.content as { text: string }[])[0]!.text.split('\n')).toHaveLength(25);
    expect(updates[0]).toEqual({ progress: 1, message: 'grep: 1 matching file so far in src' });
    expect(updates.every((update, i) => update.progress === i + 1 && /^grep: \d+ matching files? so far in src$/.test(update.message ?? ''))).toBe(true);
  });

  it('glob_files says how many files it walked and how many match', async () => {
    fs = await startFs({});
    tree(fs);
    const updates: Progress[] = [];
    await fs.client.callTool({ name: 'glob_files', arguments: { pattern: 'src/d1/*.ts' } }, undefined, { onprogress: (update) => updates.push(update) });
    expect(updates[0]).toEqual({ progress: 1, message: expect.stringMatching(/^glob_files: 1 file walked, [01] matching "src\/d1\/\*\.ts"$/) });
  });

  it('says nothing to a client that asked for no progress', async () => {
    fs = await startFs({});
    tree(fs);
    const notified: string[] = [];
    fs.client.fallbackNotificationHandler = async (notification) => {
      notified.push(notification.method);
    };
    await fs.client.callTool({ name: 'grep', arguments: { pattern: 'needle', path: 'src' } });
    expect(notified).toEqual([]);
  });
});
