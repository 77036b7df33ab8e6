import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { afterEach, describe, expect, it } from 'vitest';
import { startStdioServer, tempWorkspace, type ServerProcess, type TempWorkspace } from '@bulkhead/core/testing';
import { text } from './helpers.js';

const FS_WRITE_CLI = fileURLToPath(new URL('../../servers/fs-write/dist/cli.js', import.meta.url));
const MIB = 1024 * 1024;

let ws: TempWorkspace;
let server: ServerProcess | undefined;

afterEach(async () => {
  await server?.close();
  server = undefined;
  ws?.cleanup();
});

describe('large requests over stdio', () => {
  it('takes content up to the byte cap even when JSON escaping doubles it, and refuses a larger request without dropping the connection', async () => {
    ws = tempWorkspace({ '.bulkhead/permissions.yaml': 'allow:\n  - fs_write\n' });
    server = await startStdioServer({ script: FS_WRITE_CLI, args: ['--root', ws.root] });
    // Every character here is escaped to two in JSON: 9.9 MiB of content is a 19.8 MiB message.
    const content = '"\n'.repeat(Math.floor((9.9 * MIB) / 2));
    const written = await server.client.callTool({ name: 'write_file', arguments: { path: 'quotes.txt', content } });
    expect(text(written).split('\n')[0]).toMatch(/^Created quotes\.txt \(new file; \+5190451 −0 lines; 9\.9 MiB; sha256 [0-9a-f]{64}\)$/);
    expect(readFileSync(ws.path('quotes.txt'), 'utf8') === content).toBe(true);

    const tooBig = 'x'.repeat(22 * MIB);
    await expect(server.client.callTool({ name: 'write_file', arguments: { path: 'big.txt', content: tooBig } })).rejects.toThrow(
      /^MCP error -32600: a message of 2306\d{4} bytes exceeds this server's limit of 22020096 bytes; it was not processed$/,
    );
    const after = await server.client.callTool({ name: 'write_file', arguments: { path: 'small.txt', content: 'still here\n' } });
    expect(text(after).split('\n')[0]).toMatch(/^Created small\.txt/);
  });
});
