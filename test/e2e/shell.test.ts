import { existsSync } from 'node:fs';
import { afterEach, describe, expect, it } from 'vitest';
import { ApprovalStore } from '@bulkhead/core';
import { startStdioServer, tempWorkspace, type ServerProcess, type TempWorkspace } from '@bulkhead/core/testing';
import { GATEWAY_CLI, SHELL_CLI, text } from './helpers.js';

let ws: TempWorkspace | undefined;
let server: ServerProcess | undefined;

afterEach(async () => {
  await server?.close();
  server = undefined;
  ws?.cleanup();
});

describe('bulkhead-shell as a process', () => {
  it('states its containment at start-up and runs a command in the sandbox', async () => {
    ws = tempWorkspace({ '.bulkhead/shell_policy.yaml': 'enabled: true\n', '.bulkhead/permissions.yaml': 'allow:\n  - shell\n' });
    server = await startStdioServer({ script: SHELL_CLI, args: ['--root', ws.root] });
    expect(server.stderr()).toMatch(/bulkhead-shell: bubblewrap sandbox, no network, processes limited to 256 by /);
    expect((await server.client.listTools()).tools.map((tool) => tool.name)).toEqual(['run_shell', 'task_output', 'wait_task', 'shell_kill', 'list_tasks', 'run_in_sandbox']);
    const result = await server.client.callTool({ name: 'run_shell', arguments: { command: 'echo inside > made.txt && cat made.txt' } });
    expect(text(result)).toMatch(/^inside\n\[exit code 0 · /);
    expect(existsSync(`${ws.root}/made.txt`)).toBe(true);
  });

  it('behind the gateway, is gated by the tier of each parsed command', async () => {
    ws = tempWorkspace({
      '.bulkhead/bulkhead.yaml': 'servers:\n  shell: {}\n',
      '.bulkhead/shell_policy.yaml': 'enabled: true\n',
      '.bulkhead/permissions.yaml': 'autonomy: supervised\napproval_wait_ms: 0\n',
    });
    server = await startStdioServer({ script: GATEWAY_CLI, args: ['start', '--root', ws.root] });
    const call = (command: string) => server!.client.callTool({ name: 'call_tool', arguments: { name: 'shell:run_shell', arguments: { command } } });
    const low = await call('ls -a');
    expect(low.isError).toBeFalsy();
    expect(text(low)).toContain('.bulkhead');
    const medium = await call('touch made-through-gateway');
    expect(medium.isError).toBe(true);
    // This client cannot be asked: the call waits for a human's approval, and nothing runs meanwhile.
    expect(text(medium)).toMatch(/^shell:run_shell is waiting for a human's approval \(approval [a-z2-9]{8}\); nothing was run yet\. /);
    expect(new ApprovalStore(ws!.path('.bulkhead')).pending()[0]?.reason).toContain('shell:run_shell is medium risk and autonomy is supervised');
    const high = await call('curl http://127.0.0.1:9/');
    expect(text(high)).toContain('shell:run_shell is high risk and autonomy is supervised');
    expect(existsSync(`${ws.root}/made-through-gateway`)).toBe(false);
  });
});
