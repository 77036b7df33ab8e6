import { afterEach, describe, expect, it } from 'vitest';
import { startStdioServer, tempWorkspace, type ServerProcess, type TempWorkspace } from '@bulkhead/core/testing';
import { GATEWAY_CLI, text } from './helpers.js';

/** Issue 15, item 12: the gateway refuses arguments nested too deep before any schema, for its meta tools and for proxied tools. */

let ws: TempWorkspace | undefined;
let gateway: ServerProcess | undefined;
afterEach(async () => {
  await gateway?.close();
  gateway = undefined;
  ws?.cleanup();
});

function deep(levels: number): unknown {
  let value: unknown = 1;
  for (let i = 0; i < levels; i++) value = { a: value };
  return value;
}

describe('deep arguments through the gateway', () => {
  it('a 1,000-deep argument (the SDK client itself overflows at 10,000) to a proxied tool and to call_tool is refused with a message', async () => {
    ws = tempWorkspace({ 'notes.txt': 'gateway notes\n', '.bulkhead/bulkhead.yaml': 'servers:\n  fs: {}\n' });
    gateway = await startStdioServer({ script: GATEWAY_CLI, args: ['start', '--root', ws.root] });
    const direct = await gateway.client.callTool({ name: 'fs__read_file', arguments: { path: 'notes.txt', extra: deep(1_000) } });
    expect(direct.isError).toBe(true);
    expect(text(direct)).toBe('Invalid arguments for fs:read_file: `extra.a.a.a.a.a.…` nests deeper than 64 levels of arrays and objects; send a flatter value');
    const meta = await gateway.client.callTool({ name: 'call_tool', arguments: { name: 'fs__read_file', arguments: { path: 'notes.txt', extra: deep(1_000) } } });
    expect(meta.isError).toBe(true);
    expect(text(meta)).toMatch(/^Invalid arguments for (gateway:)?call_tool: `arguments\.extra\.a\.a\.a\.a\.…` nests deeper than 64 levels/);
    expect(text(await gateway.client.callTool({ name: 'fs__read_file', arguments: { path: 'notes.txt' } }))).toBe('     1\tgateway notes');
  });
});
