// A hostile model against the pending-approval store, with real processes: bulkhead-fs-write
// served alone over stdio (as a Claude Desktop entry starts it) to a client without elicitation,
// and the human deciding in a terminal with `bulkhead approvals`.
import { existsSync, readdirSync, statSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterEach, describe, expect, it } from 'vitest';
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import { startStdioServer, tempWorkspace, type ServerProcess, type TempWorkspace } from '@bulkhead/core/testing';
import { decide, idIn } from './approvals-helpers.js';
import { text } from './helpers.js';

const FS_WRITE_CLI = fileURLToPath(new URL('../../servers/fs-write/dist/cli.js', import.meta.url));

describe('an always a human gave, after its rule was taken out of permissions.yaml', () => {
  let ws: TempWorkspace | undefined;
  let server: ServerProcess | undefined;

  afterEach(async () => {
    await server?.close();
    ws?.cleanup();
  });

  it('allows nothing in a server started after the rule was removed: the call is asked about again', async () => {
    ws = tempWorkspace({ '.bulkhead/permissions.yaml': 'approval_wait_ms: 0\n' });
    const controlDir = ws.path('.bulkhead');
    const make = (path: string) => server!.client.callTool({ name: 'create_directory', arguments: { path } }) as Promise<CallToolResult>;
    server = await startStdioServer({ script: FS_WRITE_CLI, args: ['--root', ws.root] });
    const id = idIn(text(await make('one')));
    await decide(controlDir, id, 'always');
    expect(text(await make('one'))).toMatch(/^Created/);
    expect(text(await make('two'))).toMatch(/^Created/);
    await server.close();

    // The user changes their mind: the rule goes, the server is started again.
    writeFileSync(join(controlDir, 'permissions.yaml'), 'approval_wait_ms: 0\n');
    server = await startStdioServer({ script: FS_WRITE_CLI, args: ['--root', ws.root] });
    const asked = await make('three');
    expect(asked.isError).toBe(true);
    expect(text(asked)).toMatch(/^fs_write:create_directory is waiting for a human's approval \(approval [a-km-np-z2-9]{8}\); nothing was run yet\./);
    expect(idIn(text(asked))).not.toBe(id);
    expect(existsSync(ws.path('three'))).toBe(false);
  });
});

describe('a model that floods the store', () => {
  let ws: TempWorkspace | undefined;
  let server: ServerProcess | undefined;

  afterEach(async () => {
    await server?.close();
    ws?.cleanup();
  });

  it('keeps the approval of a 10 MB write small: the arguments, the prompt, the values it cuts and the preview are bounded', async () => {
    ws = tempWorkspace({ '.bulkhead/permissions.yaml': 'approval_wait_ms: 0\n' });
    server = await startStdioServer({ script: FS_WRITE_CLI, args: ['--root', ws.root] });
    const huge = `${'line of a huge file\n'.repeat(512 * 1024)}`;
    const asked = (await server.client.callTool({ name: 'write_file', arguments: { path: 'huge.txt', content: huge } })) as CallToolResult;
    const id = idIn(text(asked));
    const record = statSync(join(ws.path('.bulkhead'), 'approvals', `${id}.json`));
    expect(huge.length).toBe(10 * 1024 * 1024);
    expect(record.size).toBeLessThan(512 * 1024);
  });

  it('keeps at most 100 undecided approvals: the next distinct call is refused and writes nothing; the identical retry still joins its own, and a decision makes room', async () => {
    ws = tempWorkspace({ '.bulkhead/permissions.yaml': 'approval_wait_ms: 0\n' });
    const controlDir = ws.path('.bulkhead');
    const folder = join(controlDir, 'approvals');
    server = await startStdioServer({ script: FS_WRITE_CLI, args: ['--root', ws.root] });
    const make = (path: string) => server!.client.callTool({ name: 'create_directory', arguments: { path } }) as Promise<CallToolResult>;
    const ids: string[] = [];
    for (let index = 0; index < 100; index++) ids.push(idIn(text(await make(`d${index}`))));
    expect(new Set(ids).size).toBe(100);
    const records = () => readdirSync(folder).filter((name) => /^[a-km-np-z2-9]{8}\.json$/.test(name)).length;
    expect(records()).toBe(100);

    const refused = await make('one-too-many');
    expect(refused.isError).toBe(true);
    expect(text(refused)).toMatch(/^Permission denied: .+\. This client cannot show a confirmation prompt \(it does not support MCP elicitation\), and its pending approval could not be recorded \(/);
    expect(text(refused)).toContain(
      `(${folder} holds 100 undecided approvals, as many as it keeps; decide or deny them (\`bulkhead approvals list\`) before another call can wait), so nothing was run.`,
    );
    expect(records()).toBe(100);
    expect(existsSync(ws.path('one-too-many'))).toBe(false);

    // The identical retry of a waiting call opens nothing: it answers with its own approval.
    expect(idIn(text(await make('d7')))).toBe(ids[7]);
    // A human's decision makes room for one more.
    await decide(controlDir, ids[0]!, 'deny');
    const held = await make('one-too-many');
    expect(text(held)).toMatch(/^fs_write:create_directory is waiting for a human's approval \(approval [a-km-np-z2-9]{8}\); nothing was run yet\./);
    expect(records()).toBe(101);
    expect(text(await make('another'))).toContain('holds 100 undecided approvals, as many as it keeps');
  });
});

describe('the identical retry, against a model that tries to ride on an approval', () => {
  let ws: TempWorkspace | undefined;
  let server: ServerProcess | undefined;

  afterEach(async () => {
    await server?.close();
    ws?.cleanup();
  });

  it('lets no other tool with the same arguments use an allow, and reads arguments in any key order as the same call', async () => {
    ws = tempWorkspace({ '.bulkhead/permissions.yaml': 'approval_wait_ms: 0\n', 'keep.txt': 'keep\n' });
    const controlDir = ws.path('.bulkhead');
    server = await startStdioServer({ script: FS_WRITE_CLI, args: ['--root', ws.root] });
    const call = (name: string, args: Record<string, unknown>) => server!.client.callTool({ name, arguments: args }) as Promise<CallToolResult>;

    const id = idIn(text(await call('write_file', { path: 'k.txt', content: 'k\n' })));
    // The same arguments in another key order are the same call: they join its approval.
    expect(idIn(text(await call('write_file', { content: 'k\n', path: 'k.txt' })))).toBe(id);
    await decide(controlDir, id, 'once');
    // Another tool, or the same tool with other arguments, asks anew and runs nothing.
    const other = await call('delete_path', { path: 'keep.txt' });
    expect(text(other)).toMatch(/^fs_write:delete_path is waiting for a human's approval/);
    expect(idIn(text(other))).not.toBe(id);
    expect(existsSync(ws.path('keep.txt'))).toBe(true);
    expect(idIn(text(await call('write_file', { path: 'k.txt', content: 'k2\n' })))).not.toBe(id);
    expect(existsSync(ws.path('k.txt'))).toBe(false);
    expect(text(await call('write_file', { content: 'k\n', path: 'k.txt' }))).toMatch(/^Created k\.txt/);
  });
});
