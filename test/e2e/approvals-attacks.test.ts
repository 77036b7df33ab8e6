// A hostile model against the pending-approval store, with real processes: bulkhead-fs-write
// served alone over stdio (as a Claude Desktop entry starts it) to a client without elicitation,
// and the human deciding in a terminal with `bulkhead approvals`.
import { existsSync, writeFileSync } from 'node:fs';
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
