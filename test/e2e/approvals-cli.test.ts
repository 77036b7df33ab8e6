import { spawn, spawnSync } from 'node:child_process';
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { userInfo } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { ApprovalStore, callSha256, PermissionGate, type NewApproval, type PendingApproval } from '@bulkhead/core';
import { tempWorkspace, type TempWorkspace } from '@bulkhead/core/testing';
import { GATEWAY_CLI } from './helpers.js';

const DECIDER = `bulkhead approvals (user ${userInfo().username})`;
const NOT_FOUND = (id: string) => `bulkhead: there is no approval ${id} (an expired one is removed; \`bulkhead approvals list\` shows the waiting ones)\n`;

let ws: TempWorkspace;
let root: string;
let controlDir: string;

beforeEach(() => {
  ws = tempWorkspace({ 'root/notes/todo.md': '# Todo\n' });
  root = ws.path('root');
  controlDir = join(root, '.bulkhead');
});
afterEach(() => ws.cleanup());

/** `bulkhead approvals …` as a user types it in the root folder. */
function approvals(...args: string[]) {
  const run = spawnSync(process.execPath, [GATEWAY_CLI, 'approvals', ...args], { cwd: root, encoding: 'utf8', timeout: 30_000 });
  return { status: run.status, stdout: run.stdout, stderr: run.stderr };
}

/** `bulkhead approvals …` started without waiting for it, so several can run at once. */
function approvalsAsync(...args: string[]): Promise<{ status: number | null; stdout: string; stderr: string }> {
  return new Promise((resolve) => {
    const child = spawn(process.execPath, [GATEWAY_CLI, 'approvals', ...args], { cwd: root });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (chunk: Buffer) => (stdout += chunk.toString()));
    child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
    child.on('close', (status) => resolve({ status, stdout, stderr }));
  });
}

/** A pending approval as the gate opens one, asked `secondsAgo` seconds ago. */
function pending(secondsAgo: number, overrides: Partial<NewApproval> = {}): PendingApproval {
  const args = overrides.args ?? { path: 'notes/todo.md', content: '# Todo\nbuy milk\n' };
  const tool = overrides.tool ?? 'fs_write:write_file';
  const asked = new Date(Date.now() - secondsAgo * 1000);
  return new ApprovalStore(controlDir, { now: () => asked }).create({
    server: 'gateway',
    // The test holds the call, as the gateway would.
    pid: process.pid,
    tool,
    caller: 'claude-ai/0.1.0',
    callSha256: callSha256(tool, args),
    args,
    prompt: `Allow ${tool}?\nAsked because: ${tool} is medium risk and autonomy is supervised.\n\nArguments (2 values; every key is listed here):\n  path (string): "notes/todo.md"\n  content (string): "# Todo\\nbuy milk\\n"`,
    rest: [],
    reason: `${tool} is medium risk and autonomy is supervised (the default; there is no ${join(controlDir, 'permissions.yaml')})`,
    offers: ['once', 'session', 'always', 'deny'],
    ...overrides,
  });
}

/** The pid of a process that has ended. */
function deadPid(): number {
  const ended = spawnSync(process.execPath, ['-e', 'process.stdout.write(String(process.pid))'], { encoding: 'utf8' });
  return Number(ended.stdout);
}

function decisionOf(id: string) {
  return new ApprovalStore(controlDir).get(id)?.decision;
}

describe('bulkhead approvals list', () => {
  it('with nothing waiting: empty stdout, a note on stderr, exit 0, and no folder made', () => {
    expect(approvals()).toEqual({ status: 0, stdout: '', stderr: 'bulkhead: no approvals are waiting\n' });
    expect(existsSync(join(controlDir, 'approvals'))).toBe(false);
  });

  it('one line per waiting approval, oldest first, each beginning with its id; decided ones are not listed', () => {
    const first = pending(1200);
    const second = pending(600, { tool: 'web:web_fetch', args: { url: 'https://example.com/a b' }, principal: 'alice' });
    new ApprovalStore(controlDir).markTimedOut(second.id);
    const orphan = pending(300, { pid: deadPid() });
    const decided = pending(10);
    new ApprovalStore(controlDir).decide(decided.id, 'deny', 'the Bulkhead console (127.0.0.1)');
    const listed = approvals('list');
    expect(listed).toEqual({
      status: 0,
      stdout:
        `${first.id}  fs_write:write_file  20 min ago  from claude-ai/0.1.0  path=notes/todo.md content="# Todo\\nbuy milk\\n"\n` +
        `${second.id}  web:web_fetch  10 min ago  from claude-ai/0.1.0 (token of alice)  url="https://example.com/a b"  (the call gave up waiting; an identical retry runs once allowed)\n` +
        `${orphan.id}  fs_write:write_file  5 min ago  from claude-ai/0.1.0  path=notes/todo.md content="# Todo\\nbuy milk\\n"  (the process that held the call has ended; an identical retry runs once allowed)\n`,
      stderr: '',
    });
    for (const line of listed.stdout.trimEnd().split('\n')) expect(line.slice(0, 8)).toMatch(/^[a-km-np-z2-9]{8}$/);
  });

  it('writes out escape sequences, carriage returns and invisible characters a client or model put in', () => {
    const hostile = pending(300, { caller: 'evil\u001b[2J\u001b[1;1Hclient', args: { path: 'a\rb', note: 'x\u202Etxt.exe', long: 'y'.repeat(100) } });
    const { stdout } = approvals('list');
    expect(stdout).toBe(`${hostile.id}  fs_write:write_file  5 min ago  from evil\\u{1B}[2J\\u{1B}[1;1Hclient  path="a\\rb" note=x\\u{202E}txt.exe long=${'y'.repeat(39)}…\n`);
    expect(stdout).not.toMatch(/[\u001b\r\u202e]/);
  });
});

describe('bulkhead approvals show', () => {
  it('prints the prompt, the preview, the reason and the exact commands that decide it', () => {
    const approval = pending(150, { preview: { text: '--- notes/todo.md\n+++ notes/todo.md\n@@ -1 +1,2 @@\n # Todo\n+buy milk' }, risk: 'medium: writes one file' });
    const shown = approvals('show', approval.id);
    expect(shown.status).toBe(0);
    expect(shown.stderr).toBe('');
    expect(shown.stdout).toBe(
      [
        `approval ${approval.id}: fs_write:write_file, asked at ${approval.created.slice(0, 10)} ${approval.created.slice(11, 16)} UTC from claude-ai/0.1.0 (held by gateway, pid ${process.pid})`,
        `waiting: the call is held until it is decided or its wait runs out (kept until ${approval.expires.slice(0, 10)} ${approval.expires.slice(11, 16)} UTC; asked 2 min ago)`,
        '',
        approval.prompt,
        '',
        'The preview in full:',
        '--- notes/todo.md\n+++ notes/todo.md\n@@ -1 +1,2 @@\n # Todo\n+buy milk',
        '',
        'Risk: medium: writes one file',
        '',
        `Asked because: ${approval.reason}`,
        '',
        'Decide with one of:',
        `  bulkhead approvals allow ${approval.id}             Allow this call once`,
        `  bulkhead approvals allow ${approval.id} --session   Allow this tool for the rest of this session`,
        `  bulkhead approvals allow ${approval.id} --always    Always allow this tool (adds a rule to permissions.yaml)`,
        `  bulkhead approvals deny ${approval.id}              Deny`,
        '',
      ].join('\n'),
    );
  });

  it('does not repeat the preview or the reason the prompt holds whole, as the gate writes it', () => {
    const reason = 'fs_write:write_file is medium risk and autonomy is supervised (the default)';
    const preview = 'Dry run: would create notes/todo.md\n```diff\n+buy milk\n```';
    const prompt = `Allow fs_write:write_file?\nAsked because: ${reason}.\n\nArguments: none\n\nWhat will happen (the tool's preview):\n${preview.split('\n').map((line) => `  ${line}`).join('\n')}\n\nThese are the whole arguments (secrets redacted).`;
    const approval = pending(5, { prompt, reason, preview: { text: preview } });
    const { stdout } = approvals('show', approval.id);
    expect(stdout).toContain(`\n\n${prompt}\n\nDecide with one of:\n`);
    expect(stdout).not.toContain('The preview in full:');
    expect(stdout.match(/Asked because/g)).toHaveLength(1);
  });

  it('offers only what the approval offers, and repeats --config in the commands', () => {
    const approval = pending(5, { offers: ['once', 'deny'] });
    const shown = spawnSync(process.execPath, [GATEWAY_CLI, 'approvals', 'show', approval.id, '--config', controlDir], { cwd: ws.root, encoding: 'utf8' });
    expect(shown.status).toBe(0);
    expect(shown.stdout.split('Decide with one of:\n')[1]).toBe(
      `  bulkhead approvals allow ${approval.id} --config ${controlDir}   Allow this call once\n  bulkhead approvals deny ${approval.id} --config ${controlDir}    Deny\n`,
    );
  });

  it('a decided approval says who decided, and offers no commands; cut values and a failed preview are shown', () => {
    const approval = pending(5, { rest: ['content (characters 1-9 of 9): "# Todo\\nbuy\u001b[2J"'], preview: { failed: 'the dry run failed: notes/ is read-only' } });
    const decided = new ApprovalStore(controlDir).decide(approval.id, 'once', 'the Bulkhead console (127.0.0.1)');
    new ApprovalStore(controlDir).use(approval.id);
    const { stdout, status } = approvals('show', approval.id);
    expect(status).toBe(0);
    expect(stdout.split('\n')[1]).toMatch(new RegExp(`^decided: allowed once by the Bulkhead console \\(127\\.0\\.0\\.1\\) at ${decided.decision!.at.slice(11, 19)} UTC; used by a call at \\d{4}-\\d\\d-\\d\\dT`));
    expect(stdout).not.toContain('Decide with one of');
    expect(stdout).toContain(`\n\nThe values the prompt cut, in full:\ncontent (characters 1-9 of 9): "# Todo\\nbuy\\u{1B}[2J"\n\nNo preview: the dry run failed: notes/ is read-only\n\nAsked because: ${approval.reason}\n`);
  });

  it('refuses an unknown id and a malformed one (exit 1)', () => {
    expect(approvals('show', 'k3m9q2xa')).toEqual({ status: 1, stdout: '', stderr: NOT_FOUND('k3m9q2xa') });
    expect(approvals('show', '../approvals/x')).toEqual({ status: 1, stdout: '', stderr: 'bulkhead: not an approval id: "../approvals/x" (an id is 8 lower-case letters and digits, such as k3m9q2xa)\n' });
  });
});

describe('bulkhead approvals allow and deny', () => {
  it('allow ID decides once, recorded as this user; a second decision is refused with who won', () => {
    const approval = pending(5);
    expect(approvals('allow', approval.id)).toEqual({ status: 0, stdout: `approval ${approval.id}: allowed fs_write:write_file once\n`, stderr: '' });
    const decision = decisionOf(approval.id)!;
    expect(decision).toMatchObject({ decision: 'once', by: DECIDER });
    const refused = `bulkhead: approval ${approval.id} was already decided: allowed once by ${DECIDER} at ${decision.at.slice(11, 19)} UTC\n`;
    expect(approvals('allow', approval.id, '--always')).toEqual({ status: 1, stdout: '', stderr: refused });
    expect(existsSync(join(controlDir, 'permissions.yaml'))).toBe(false);
    expect(decisionOf(approval.id)).toEqual(decision);
  });

  it('allow ID --session and deny ID', () => {
    const session = pending(5);
    const denied = pending(5);
    expect(approvals('allow', session.id, '--session')).toEqual({ status: 0, stdout: `approval ${session.id}: allowed fs_write:write_file for the rest of its session\n`, stderr: '' });
    expect(approvals('deny', denied.id)).toEqual({ status: 0, stdout: `approval ${denied.id}: denied fs_write:write_file\n`, stderr: '' });
    expect(decisionOf(session.id)?.decision).toBe('session');
    expect(decisionOf(denied.id)?.decision).toBe('deny');
  });

  it('allow ID --always writes a valid rule with who and when, and says where', () => {
    const file = join(controlDir, 'permissions.yaml');
    const approval = pending(5);
    writeFileSync(file, 'autonomy: supervised\nallow: []             # e.g. - git\n');
    const before = PermissionGate.load(controlDir).decide({ qualifiedName: 'fs_write:write_file', risk: 'medium', args: {} }).verdict;
    expect(before).toBe('ask');
    expect(approvals('allow', approval.id, '--always')).toEqual({
      status: 0,
      stdout: `approval ${approval.id}: always allowed fs_write:write_file; the rule \`fs_write:write_file\` in ${file} line 4\n`,
      stderr: '',
    });
    const at = decisionOf(approval.id)!.at;
    expect(readFileSync(file, 'utf8')).toBe(
      `autonomy: supervised\nallow:             # e.g. - git\n  # added by ${DECIDER} on ${at.slice(0, 10)} ${at.slice(11, 16)} UTC, approval ${approval.id}\n  - fs_write:write_file\n`,
    );
    expect(PermissionGate.load(controlDir).decide({ qualifiedName: 'fs_write:write_file', risk: 'medium', args: {} }).verdict).toBe('allow');
  });

  it('allow --always with an invalid permissions.yaml: exit 1, the file as it was, the approval still undecided', () => {
    const file = join(controlDir, 'permissions.yaml');
    const approval = pending(5);
    writeFileSync(file, 'allow: [git\n');
    expect(approvals('allow', approval.id, '--always')).toEqual({
      status: 1,
      stdout: '',
      stderr: `bulkhead: approval ${approval.id} is still undecided: the always rule for fs_write:write_file was not written: ${file} line 2: not valid YAML: Flow sequence in block collection must be sufficiently indented and end with a ]\nfix the file, or allow the call once or for this session\n`,
    });
    expect(readFileSync(file, 'utf8')).toBe('allow: [git\n');
    expect(decisionOf(approval.id)).toBeUndefined();
    expect(approvals('allow', approval.id).status).toBe(0);
  });

  it('refuses a decision the approval does not offer, an expired one and an unknown one (exit 1)', () => {
    const limited = pending(5, { offers: ['once', 'deny'] });
    expect(approvals('allow', limited.id, '--always')).toEqual({ status: 1, stdout: '', stderr: `bulkhead: approval ${limited.id} does not offer always; it offers: once, deny\n` });
    expect(decisionOf(limited.id)).toBeUndefined();
    const expired = pending(24 * 3600 + 60);
    expect(approvals('allow', expired.id)).toEqual({
      status: 1,
      stdout: '',
      stderr: `bulkhead: approval ${expired.id} expired at ${expired.expires.slice(0, 10)} ${expired.expires.slice(11, 16)} UTC; the call was not run\n`,
    });
    expect(approvals('allow', expired.id)).toEqual({ status: 1, stdout: '', stderr: NOT_FOUND(expired.id) });
    expect(approvals('deny', 'k3m9q2xa')).toEqual({ status: 1, stdout: '', stderr: NOT_FOUND('k3m9q2xa') });
    for (const id of ['K3M9Q2XA']) {
      expect(approvals('allow', id)).toEqual({ status: 1, stdout: '', stderr: `bulkhead: not an approval id: ${JSON.stringify(id)} (an id is 8 lower-case letters and digits, such as k3m9q2xa)\n` });
    }
  });

  it('four processes deciding at once: exactly one wins, the others are told who did', async () => {
    const approval = pending(5);
    const runs = await Promise.all([approvalsAsync('allow', approval.id), approvalsAsync('deny', approval.id), approvalsAsync('allow', approval.id, '--session'), approvalsAsync('deny', approval.id)]);
    const winners = runs.filter((run) => run.status === 0);
    expect(winners).toHaveLength(1);
    const decision = decisionOf(approval.id)!;
    const said = { once: 'allowed fs_write:write_file once', deny: 'denied fs_write:write_file', session: 'allowed fs_write:write_file for the rest of its session', always: '' }[decision.decision];
    expect(winners[0]!.stdout).toBe(`approval ${approval.id}: ${said}\n`);
    const words = { once: 'allowed once', deny: 'denied', session: 'allowed for the session', always: '' }[decision.decision];
    for (const loser of runs.filter((run) => run.status !== 0)) {
      expect(loser).toEqual({ status: 1, stdout: '', stderr: `bulkhead: approval ${approval.id} was already decided: ${words} by ${DECIDER} at ${decision.at.slice(11, 19)} UTC\n` });
    }
  });
});

describe('bulkhead approvals usage', () => {
  it.each([
    [['allow', 'k3m9q2xa', '--session', '--always'], '--session and --always are two different decisions; give one of them'],
    [['deny', 'k3m9q2xa', '--always'], '--always goes with allow ID; usage: bulkhead approvals [list | show ID | allow ID [--session | --always] | deny ID]'],
    [['show'], 'approvals show needs the id of an approval (bulkhead approvals list shows them)'],
    [['list', 'k3m9q2xa'], 'approvals list takes no id; usage: bulkhead approvals [list | show ID | allow ID [--session | --always] | deny ID]'],
    [['allow', 'k3m9q2xa', 'k3m9q2xb'], 'approvals allow takes one id (got k3m9q2xa k3m9q2xb); usage: bulkhead approvals [list | show ID | allow ID [--session | --always] | deny ID]'],
    [['approve', 'k3m9q2xa'], 'unknown approvals action approve; usage: bulkhead approvals [list | show ID | allow ID [--session | --always] | deny ID]'],
  ])('%j is a usage error (exit 2) that decides nothing', (args, message) => {
    const approval = pending(5);
    expect(approvals(...args)).toEqual({ status: 2, stdout: '', stderr: `bulkhead: ${message} (see \`bulkhead help approvals\`)\n` });
    expect(decisionOf(approval.id)).toBeUndefined();
  });
});
