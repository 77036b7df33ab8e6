import { openSync, writeSync, closeSync } from 'node:fs';
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
