// The second channel of `ask`, as a user meets it with a client that has no elicitation (Claude
// Desktop): the call waits as a pending approval, a human decides it from another process with
// `bulkhead approvals`, and the call runs or is refused. Real processes: bulkhead-fs-write served
// alone over stdio, as a Claude Desktop entry starts it (the gateway: approvals-gateway.test.ts).
import { existsSync, readFileSync, rmSync } from 'node:fs';
import { userInfo } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import { ApprovalStore, PermissionGate, registerConsole } from '@bulkhead/core';
import { startStdioServer, tempWorkspace, type ServerProcess, type TempWorkspace } from '@bulkhead/core/testing';
import { auditOf, bulkhead, decide, fakeNotifySend, ID, idIn, listen } from './approvals-helpers.js';
import { text } from './helpers.js';

const FS_WRITE_CLI = fileURLToPath(new URL('../../servers/fs-write/dist/cli.js', import.meta.url));

describe('bulkhead-fs-write served alone over stdio, to a client without elicitation', () => {
  let ws: TempWorkspace;
  let server: ServerProcess;
  let listener: ReturnType<typeof listen>;
  let notifier: ReturnType<typeof fakeNotifySend>;
  let controlDir: string;
  let store: ApprovalStore;

  beforeAll(async () => {
    ws = tempWorkspace({ 'old.txt': 'old\n', '.bulkhead/permissions.yaml': 'approval_wait_ms: 20000\n' });
    controlDir = ws.path('.bulkhead');
    store = new ApprovalStore(controlDir);
    notifier = fakeNotifySend();
    // As a Claude Desktop entry starts it: the command and --root, nothing else.
    server = await startStdioServer({ script: FS_WRITE_CLI, args: ['--root', ws.root], env: { PATH: `${notifier.folder}:${process.env['PATH'] ?? ''}`, DBUS_SESSION_BUS_ADDRESS: 'unix:path=/nonexistent/bus' } });
    listener = listen(server.client);
  });

  afterAll(async () => {
    await server?.close();
    ws?.cleanup();
    rmSync(notifier.folder, { recursive: true, force: true });
  });

  it('holds write_file, tells the client and the desktop, keeps it alive with progress, and writes the file once a human allows it', async () => {
    const progress: string[] = [];
    const call = server.client.callTool({ name: 'write_file', arguments: { path: 'a.txt', content: 'approved\n' } }, undefined, {
      onprogress: (update) => progress.push(update.message ?? ''),
      resetTimeoutOnProgress: true,
    });
    const id = await listener.nextId();
    expect(listener.notices).toEqual([
      `warning bulkhead-fs_write: fs_write:write_file waits for a human's approval (approval ${id}) for up to 20 s. Approve it in the Bulkhead console (run \`bulkhead console --config ${controlDir}\` to open the console) or in a terminal: bulkhead approvals allow ${id} --config ${controlDir}.`,
    ]);
    const pending = store.get(id)!;
    expect(pending).toMatchObject({ tool: 'fs_write:write_file', server: 'fs_write', args: { path: 'a.txt', content: 'approved\n' }, offers: ['once', 'session', 'always', 'deny'], state: 'waiting' });
    expect(pending.preview).toEqual({ text: expect.stringContaining('+approved') });
    // The client is told every few seconds that the call still waits.
    await expect.poll(() => progress.length, { timeout: 10_000, interval: 50 }).toBeGreaterThanOrEqual(2);
    expect(progress[0]).toMatch(new RegExp(`^waiting for approval ${id}… \\((20|19) s left\\)$`));
    expect(progress[1]).toMatch(new RegExp(`^waiting for approval ${id}… \\(1[67] s left\\)$`));
    expect(existsSync(ws.path('a.txt'))).toBe(false);

    await decide(controlDir, id, 'once');
    const result = await call;
    expect(result.isError).toBeFalsy();
    expect(text(result)).toMatch(/^Created a\.txt \(new file; \+1 −0 lines; 9 B; sha256 [0-9a-f]{64}\)/);
    expect(readFileSync(ws.path('a.txt'), 'utf8')).toBe('approved\n');
    expect(store.get(id)!.used).toBeDefined();
    // The desktop notification: notify-send with the tool and the id, its options before `--`.
    expect(notifier.calls()).toEqual([
      ['--app-name=Bulkhead', '--', 'Bulkhead: approval needed', `fs_write:write_file waits for your approval (approval ${id}). Decide in the Bulkhead console, or in a terminal: bulkhead approvals allow ${id}`],
    ]);
  });

  it('uses an allow-once for exactly one call: the identical call asks again, and a deny names who denied it', async () => {
    const call = server.client.callTool({ name: 'write_file', arguments: { path: 'a.txt', content: 'approved\n' } });
    const id = await listener.nextId();
    expect(store.get(id)!.state).toBe('waiting');
    await decide(controlDir, id, 'deny');
    const by = `bulkhead approvals (user ${userInfo().username})`;
    expect(store.get(id)!.decision!.by).toBe(by);
    const refused = await call;
    expect(refused.isError).toBe(true);
    expect(text(refused)).toMatch(new RegExp(`^Permission denied: ${by.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')} denied fs_write:write_file \\(approval ${id}\\) at \\d\\d:\\d\\d:\\d\\d UTC\\. Nothing was run\\.$`));
    // A denied call changes nothing, and its retry is a new question rather than a standing refusal.
    const other = server.client.callTool({ name: 'write_file', arguments: { path: 'old.txt', content: 'overwritten\n' } });
    const otherId = await listener.nextId();
    expect(otherId).not.toBe(id);
    await decide(controlDir, otherId, 'deny');
    expect(text(await other)).toContain(`denied fs_write:write_file (approval ${otherId})`);
    expect(readFileSync(ws.path('old.txt'), 'utf8')).toBe('old\n');
  });

  it('lets an allow for the session cover the next calls of that tool, not another tool', async () => {
    const first = server.client.callTool({ name: 'edit_file', arguments: { path: 'a.txt', old_string: 'approved', new_string: 'edited' } });
    await decide(controlDir, await listener.nextId(), 'session');
    expect((await first).isError).toBeFalsy();
    const notices = listener.notices.length;
    const second = await server.client.callTool({ name: 'edit_file', arguments: { path: 'a.txt', old_string: 'edited', new_string: 'edited again' } });
    expect(second.isError).toBeFalsy();
    expect(listener.notices.length).toBe(notices);
    expect(readFileSync(ws.path('a.txt'), 'utf8')).toBe('edited again\n');
    // Another tool of the same server asks.
    const other = server.client.callTool({ name: 'create_directory', arguments: { path: 'not-made' } });
    const id = await listener.nextId();
    expect(store.get(id)!.tool).toBe('fs_write:create_directory');
    await decide(controlDir, id, 'deny');
    expect((await other).isError).toBe(true);
    expect(existsSync(ws.path('not-made'))).toBe(false);
  });

  it('writes an always into permissions.yaml as a valid rule, and later calls of the tool run without asking', async () => {
    const first = server.client.callTool({ name: 'create_directory', arguments: { path: 'made/one' } });
    const id = await listener.nextId();
    await decide(controlDir, id, 'always');
    expect((await first).isError).toBeFalsy();
    expect(existsSync(ws.path('made/one'))).toBe(true);
    const notices = listener.notices.length;
    expect((await server.client.callTool({ name: 'create_directory', arguments: { path: 'made/two' } })).isError).toBeFalsy();
    expect(listener.notices.length).toBe(notices);
    // The file stays valid and now allows the tool for every later process.
    const reloaded = PermissionGate.load(controlDir);
    expect(reloaded.approvalWaitMs).toBe(20000);
    expect(reloaded.decide({ qualifiedName: 'fs_write:create_directory', risk: 'medium', args: { path: 'x' } }).verdict).toBe('allow');
    expect(readFileSync(join(controlDir, 'permissions.yaml'), 'utf8')).toContain('fs_write:create_directory');
  });

  it('keeps the approval when the client gives up, and the identical call made after the human approved runs without asking', async () => {
    const abort = new AbortController();
    const call = server.client.callTool({ name: 'write_file', arguments: { path: 'later.txt', content: 'later\n' } }, undefined, { signal: abort.signal });
    const id = await listener.nextId();
    abort.abort();
    await expect(call).rejects.toThrow();
    await expect.poll(() => store.get(id)!.state, { timeout: 5000, interval: 20 }).toBe('timed_out');
    await decide(controlDir, id, 'once');
    const notices = listener.notices.length;
    const retry = await server.client.callTool({ name: 'write_file', arguments: { path: 'later.txt', content: 'later\n' } });
    expect(text(retry)).toMatch(/^Created later\.txt/);
    expect(listener.notices.length).toBe(notices);
  });

  it('audits every decision with its approval id, and the chain verifies', async () => {
    const entries = auditOf(join(controlDir, 'audit', 'fs_write.jsonl'));
    const decisions = entries.map((entry) => [entry.tool.replace('fs_write:', ''), entry.decision, entry.outcome, Boolean(entry.approval?.id)]);
    expect(decisions).toEqual([
      ['write_file', 'ask:approved', 'ok', true],
      ['write_file', 'ask:denied', 'denied', true],
      ['write_file', 'ask:denied', 'denied', true],
      ['edit_file', 'ask:session', 'ok', true],
      ['edit_file', 'allow:session', 'ok', false],
      ['create_directory', 'ask:denied', 'denied', true],
      ['create_directory', 'ask:always', 'ok', true],
      ['create_directory', 'allow:always', 'ok', true],
      ['write_file', 'ask:pending', 'cancelled', true],
      ['write_file', 'ask:approved', 'ok', true],
    ]);
    // The always that let the later call run is named on its line, and the retry names the approval it used.
    expect(entries[7]!.approval).toEqual(entries[6]!.approval);
    expect(entries[9]!.approval!.id).toBe(entries[8]!.approval!.id);
    expect(entries[1]!.approval!.by).toBe(store.get(entries[1]!.approval!.id)!.decision!.by);
    const verified = await bulkhead(['audit', 'verify', '--config', controlDir]);
    expect(verified).toEqual({ code: 0, stdout: `OK ${join(controlDir, 'audit', 'fs_write.jsonl')}: 10 entries, chain intact\n`, stderr: '' });
  });
});

describe('approval_wait_ms: 0', () => {
  let ws: TempWorkspace;
  let server: ServerProcess;

  beforeAll(async () => {
    ws = tempWorkspace({ '.bulkhead/permissions.yaml': 'approval_wait_ms: 0\n' });
    server = await startStdioServer({ script: FS_WRITE_CLI, args: ['--root', ws.root] });
  });

  afterAll(async () => {
    await server?.close();
    ws?.cleanup();
  });

  const write = (content: string) => server.client.callTool({ name: 'write_file', arguments: { path: 'now.txt', content } }) as Promise<CallToolResult>;

  it('answers at once with the id and where to approve; after the approval the identical call runs, and other arguments ask again', async () => {
    const controlDir = ws.path('.bulkhead');
    const asked = await write('one\n');
    expect(asked.isError).toBe(true);
    const id = idIn(text(asked));
    expect(text(asked)).toBe(
      `fs_write:write_file is waiting for a human's approval (approval ${id}); nothing was run yet. Approve it in the Bulkhead console (run \`bulkhead console --config ${controlDir}\` to open the console) or in a terminal: bulkhead approvals allow ${id} --config ${controlDir}. Then make the same call again (same tool, same arguments): it runs without asking again.`,
    );
    expect(existsSync(ws.path('now.txt'))).toBe(false);
    // Asked again before anyone decided: the same approval, not a second one.
    expect(text(await write('one\n'))).toContain(`(approval ${id})`);
    expect(new ApprovalStore(controlDir).pending().map((approval) => approval.id)).toEqual([id]);

    await decide(controlDir, id, 'once');
    expect(text(await write('two\n'))).toMatch(new RegExp(`^fs_write:write_file is waiting for a human's approval \\(approval (?!${id})${ID}\\)`));
    expect(text(await write('one\n'))).toMatch(/^Created now\.txt/);
    expect(readFileSync(ws.path('now.txt'), 'utf8')).toBe('one\n');
    // The allow-once is spent.
    expect(text(await write('one\n'))).toMatch(new RegExp(`^fs_write:write_file is waiting for a human's approval \\(approval (?!${id})${ID}\\)`));
  });

  it('names the address of a console that runs for the folder', async () => {
    // A console record of a live process (this one), as a gateway or `bulkhead console` writes it.
    const unregister = registerConsole(ws.path('.bulkhead'), { url: 'http://127.0.0.1:45678/console/', path: '/console/PRIVATE_CONSOLE_PATH_0123/', server: 'bulkhead console' });
    try {
      const reply = text(await write('three\n'));
      // The console's own path is where sessions live; it never reaches the model.
      expect(reply).not.toContain('PRIVATE_CONSOLE_PATH');
      expect(reply).toMatch(
        new RegExp(`; nothing was run yet\\. Approve it in the Bulkhead console \\(http://127\\.0\\.0\\.1:45678/console/\\) or in a terminal: bulkhead approvals allow ${ID} --config `),
      );
    } finally {
      unregister();
    }
    expect(text(await write('four\n'))).toContain('(run `bulkhead console --config ');
  });
});
