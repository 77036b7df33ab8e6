import { execFileSync, spawn } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { afterEach, describe, expect, it } from 'vitest';
import { LoggingMessageNotificationSchema } from '@modelcontextprotocol/sdk/types.js';
import { ApprovalStore, auditPolicySchema, PermissionGate } from '@bulkhead/core';
import { connectInProcess, tempWorkspace } from '@bulkhead/core/testing';
import { createShellServer } from '@bulkhead/shell';
import { shellPolicySchema } from '../src/policy.js';
import { startShell, type ShellHarness } from './helpers.js';

interface RunResult {
  exit_code: number | null;
  timed_out: boolean;
  cancelled: boolean;
  risk: string;
  output_truncated_bytes: number;
  task_id?: string;
}

interface TaskRecord {
  task_id: string;
  state: string;
  exit_code: number | null;
}

let h: ShellHarness | undefined;

afterEach(async () => {
  await h?.close();
  h = undefined;
});

/** Whether a process whose command line holds `marker` is alive on the host. */
function processAlive(marker: string): boolean {
  const out = execFileSync('ps', ['-eo', 'args'], { encoding: 'utf8' });
  return out.split('\n').some((line) => line.includes(marker) && !line.includes('ps -eo'));
}

describe('off by default', () => {
  it('registers no tool when shell_policy.yaml does not enable it, and the CLI says how to turn it on', async () => {
    const ws = tempWorkspace({}, 'bulkhead-shell-off-');
    try {
      const controlDir = ws.path('.bulkhead');
      const server = createShellServer({
        roots: [ws.root],
        controlDir,
        gate: { kind: 'self', permissions: PermissionGate.load(controlDir) },
        audit: auditPolicySchema.parse({ enabled: false }),
        policy: shellPolicySchema.parse({}),
      });
      const { client, close } = await connectInProcess(server);
      expect((await client.listTools()).tools).toEqual([]);
      await close();
      await server.close();
      const cli = fileURLToPath(new URL('../dist/cli.js', import.meta.url));
      const child = spawn(process.execPath, [cli, '--root', ws.root], { stdio: ['pipe', 'pipe', 'pipe'] });
      let stderr = '';
      child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
      await expect.poll(() => stderr, { timeout: 10_000 }).toContain('serving 0 tools');
      child.stdin.end();
      await new Promise((resolve) => child.on('exit', resolve));
      expect(stderr).toContain(`bulkhead-shell: off: ${controlDir}/shell_policy.yaml does not say enabled: true, so no tool is registered. To turn it on, set enabled: true there`);
    } finally {
      ws.cleanup();
    }
  });
});

describe('run_shell', () => {
  it('runs a command in the first root and returns output, exit code and tier', async () => {
    h = await startShell({ files: { 'notes.txt': 'alpha\nbeta\n' } });
    const result = await h.call<RunResult>('run_shell', { command: 'cat notes.txt | grep beta; echo to-stderr >&2' });
    expect(result.isError).toBe(false);
    expect(result.text).toMatch(/^beta\nto-stderr\n\n?\[exit code 0 · \d+(\.\d+)? m?s\]$/);
    expect(result.structured).toMatchObject({ exit_code: 0, timed_out: false, cancelled: false, risk: 'low', output_truncated_bytes: 0 });
    const failing = await h.call<RunResult>('run_shell', { command: 'exit 3' });
    expect(failing.structured.exit_code).toBe(3);
    expect(failing.text).toContain('[exit code 3 · ');
  });

  it('passes only PATH, HOME, LANG, LC_*, TERM=dumb and env_passthrough to commands', async () => {
    h = await startShell({
      policy: { env_passthrough: ['PROJECT_FLAG'] },
      environment: { PATH: process.env['PATH'], HOME: '/root', LANG: 'C.UTF-8', LC_TIME: 'C', SECRET_TOKEN: 'hunter2', PROJECT_FLAG: 'on', TERM: 'xterm' },
    });
    const result = await h.call('run_shell', { command: 'echo "[$SECRET_TOKEN][$PROJECT_FLAG][$TERM][$LC_TIME][$LANG]"' });
    expect(result.text.split('\n')[0]).toBe('[][on][dumb][C][C.UTF-8]');
  });

  it('never passes variables that run code the parsed command does not show', () => {
    for (const name of ['BASH_ENV', 'ENV', 'PROMPT_COMMAND', 'LD_PRELOAD', 'BASH_FUNC_ls%%']) {
      const parsed = shellPolicySchema.safeParse({ env_passthrough: [name] });
      expect(parsed.success, name).toBe(false);
    }
    expect(shellPolicySchema.safeParse({ env_passthrough: ['BASH_ENV'] }).error?.issues[0]?.message).toContain('makes bash or the dynamic loader run code the parsed command does not show');
    expect(shellPolicySchema.safeParse({ env_passthrough: ['NODE_OPTIONS_X'] }).success).toBe(true);
  });

  it('refuses a cwd outside the roots or missing, and a command deny_commands lists, running nothing', async () => {
    h = await startShell({ policy: { deny_commands: ['rm -rf *'] } });
    const outside = await h.call('run_shell', { command: 'pwd', cwd: '/etc' });
    expect(outside.isError).toBe(true);
    expect(outside.text).toContain('/etc');
    expect(outside.text).toMatch(/outside|not inside|root/i);
    expect((await h.call('run_shell', { command: 'pwd', cwd: 'nowhere' })).text).toBe(`${h.ws.root}/nowhere does not exist`);
    const denied = await h.call('run_shell', { command: 'touch marker && rm -rf build' });
    expect(denied.text).toBe('Refused: deny_commands in shell_policy.yaml lists "rm -rf *", which this command runs. Nothing was run.');
    expect(existsSync(h.ws.path('marker'))).toBe(false);
    expect((await h.call('run_shell', { command: 'touch marker; $TOOL -rf build' })).text).toBe(
      'Refused: deny_commands in shell_policy.yaml lists "rm -rf *", which this command may run (a part of it is known only when it runs). Nothing was run.',
    );
    expect(existsSync(h.ws.path('marker'))).toBe(false);
    const notFolder = await h.call('run_shell', { command: 'pwd', cwd: '.bulkhead/permissions.yaml' });
    expect(notFolder.text).toBe('cwd .bulkhead/permissions.yaml is not a folder');
  });

  it('keeps the start and the end of a read-only command\'s output, and only the end of others', async () => {
    const numbered = Array.from({ length: 20_000 }, (_, i) => `line${i}`).join('\n');
    h = await startShell({ policy: { limits: { max_output_bytes: 1024 } }, files: { 'numbers.txt': `${numbered}\n` } });
    const reading = await h.call<RunResult>('run_shell', { command: 'cat numbers.txt' });
    expect(reading.text.startsWith('line0\nline1\n')).toBe(true);
    expect(reading.text).toMatch(/…\(\d+ bytes truncated from middle\)…/);
    expect(reading.text).toContain('line19999\n');
    const looping = await h.call<RunResult>('run_shell', { command: 'i=0; while [ $i -lt 20000 ]; do echo line$i; i=$((i+1)); done' });
    expect(looping.text).toMatch(/^…\(\d+ bytes truncated from head\)…\n/);
    expect(looping.text).toContain('line19999\n');
    expect(looping.structured.output_truncated_bytes).toBeGreaterThan(100_000);
  });

  it('stops a command at its timeout and says so', async () => {
    h = await startShell();
    const result = await h.call<RunResult>('run_shell', { command: 'sleep 10', timeout_ms: 300 });
    expect(result.structured.timed_out).toBe(true);
    expect(result.text).toContain('[stopped after the timeout of 300 ms: SIGTERM to its process group, then SIGKILL]');
  });

  it('stops the command\'s process group when the client cancels the call', async () => {
    h = await startShell();
    const cancel = new AbortController();
    const call = h.client.callTool({ name: 'run_shell', arguments: { command: 'sleep 31.25' } }, undefined, { signal: cancel.signal });
    await expect.poll(() => processAlive('sleep 31.25'), { timeout: 10_000 }).toBe(true);
    cancel.abort();
    await expect(call).rejects.toThrow();
    await expect.poll(() => processAlive('sleep 31.25'), { timeout: 10_000 }).toBe(false);
  });

  it('gates each call by the tier of its parsed command', async () => {
    h = await startShell({ permissions: 'autonomy: supervised\napproval_wait_ms: 0\n' });
    expect((await h.call('run_shell', { command: 'ls -la' })).isError).toBe(false);
    const medium = await h.call('run_shell', { command: 'touch made-by-medium' });
    expect(medium.isError).toBe(true);
    expect(medium.text).toMatch(/^shell:run_shell is waiting for a human's approval \(approval [a-z2-9]{8}\); nothing was run yet\. /);
    expect(new ApprovalStore(h.ws.path('.bulkhead')).pending()[0]?.reason).toContain('shell:run_shell is medium risk and autonomy is supervised');
    const high = await h.call('run_shell', { command: 'echo $(id)' });
    expect(high.text).toContain('shell:run_shell is high risk and autonomy is supervised');
    expect(existsSync(h.ws.path('made-by-medium'))).toBe(false);
  });
});

describe('the sandbox', () => {
  it('lets commands write the roots but not the system or the control-plane folder', async () => {
    h = await startShell();
    const system = await h.call<RunResult>('run_shell', { command: 'echo x > /etc/bulkhead-shell-test' });
    expect(system.structured.exit_code).not.toBe(0);
    expect(system.text).toContain('Read-only file system');
    expect(existsSync('/etc/bulkhead-shell-test')).toBe(false);
    const control = await h.call<RunResult>('run_shell', { command: 'echo "allow: [\'*\']" > .bulkhead/permissions.yaml' });
    expect(control.structured.exit_code).not.toBe(0);
    expect(readFileSync(h.ws.path('.bulkhead/permissions.yaml'), 'utf8')).toBe('allow:\n  - shell\n');
    const inside = await h.call<RunResult>('run_shell', { command: 'echo made > inside.txt' });
    expect(inside.structured.exit_code).toBe(0);
    expect(readFileSync(h.ws.path('inside.txt'), 'utf8')).toBe('made\n');
  });

  it('keeps .git hooks and config read-only, never runs a repository\'s fsmonitor, and bounds the in-memory folders', async () => {
    h = await startShell({ policy: { limits: { tmpfs_max_bytes: 1024 * 1024 } } });
    const git = (...args: string[]) => execFileSync('git', args, { cwd: h!.ws.root, encoding: 'utf8' });
    git('init', '-q');
    git('config', 'core.fsmonitor', `touch ${h.ws.path('fsmonitor-ran')}; false`);
    const hook = await h.call<RunResult>('run_shell', { command: "printf '#!/bin/sh\\ntouch pwned\\n' > .git/hooks/pre-commit" });
    expect(hook.structured.exit_code).not.toBe(0);
    expect(hook.text).toContain('Read-only file system');
    expect((await h.call<RunResult>('run_shell', { command: 'echo "[alias] st = !touch pwned" >> .git/config' })).structured.exit_code).not.toBe(0);
    const status = await h.call<RunResult>('run_shell', { command: 'git status --short' });
    expect(status.structured).toMatchObject({ exit_code: 0, risk: 'medium' }); // status may run a repository's clean filter (classify/git.ts)
    expect(existsSync(h.ws.path('fsmonitor-ran'))).toBe(false);
    const filled = await h.call<RunResult>('run_shell', { command: 'head -c 2000000 /dev/zero > /tmp/fill; head -c 2000000 /dev/zero > /dev/shm/fill; head -c 2000000 /dev/zero > /var/tmp/fill' });
    expect(filled.text.match(/No space left on device/g)?.length).toBe(3);
  });

  it('refuses to run anything when the configured sandbox is missing, saying how to fix it', async () => {
    h = await startShell({ environment: { PATH: '/nonexistent-bin', HOME: '/root' } });
    const result = await h.call('run_shell', { command: 'echo never' });
    expect(result.isError).toBe(true);
    expect(result.text).toBe(
      'Refused: shell_policy.yaml asks for the bubblewrap sandbox, which is unavailable here: bubblewrap (bwrap) is not installed. To fix: install bubblewrap (apt-get install bubblewrap) or set sandbox: none in shell_policy.yaml (commands then run unconfined). Nothing was run.',
    );
  });
});

describe('background tasks', () => {
  it('starts a task at once, waits for it, reads its output, and reports its end once', async () => {
    h = await startShell();
    const logs: unknown[] = [];
    h.client.setNotificationHandler(LoggingMessageNotificationSchema, (notification) => void logs.push(notification.params.data));
    const started = await h.call<RunResult>('run_shell', { command: 'sleep 0.3; echo finished', run_in_background: true, description: 'a short job' });
    expect(started.text).toMatch(/^Started bash_1 in the background \(low risk\)\./);
    expect(started.structured.task_id).toBe('bash_1');
    const waited = await h.call<{ task: TaskRecord; timed_out: boolean }>('wait_task', { task_id: 'bash_1', timeout_ms: 10_000 });
    expect(waited.structured).toMatchObject({ timed_out: false, task: { task_id: 'bash_1', state: 'exited', exit_code: 0 } });
    const output = await h.call<{ next_offset: number | null }>('task_output', { task_id: 'bash_1' });
    expect(output.text).toContain('finished\n');
    expect(output.structured.next_offset).toBeNull();
    await h.call('run_shell', { command: 'echo quick', run_in_background: true });
    await expect.poll(() => logs, { timeout: 10_000 }).toContainEqual(expect.objectContaining({ task_id: 'bash_2' }));
    const listed = await h.call('list_tasks');
    expect(listed.text).toContain('<task-notification>');
    expect(listed.text).toContain('bash_2 "echo quick" exited with code 0');
    expect(listed.text).not.toMatch(/<task-notification>[\s\S]*bash_1/);
    expect((await h.call('list_tasks')).text).not.toContain('<task-notification>');
    expect(logs).toContainEqual(expect.objectContaining({ event: 'background task ended', task_id: 'bash_2', exit_code: 0 }));
  });

  it('stops a task that ignores SIGTERM with shell_kill', async () => {
    h = await startShell({ policy: { limits: { kill_grace_ms: 200 } } });
    await h.call('run_shell', { command: "trap '' TERM; sleep 31.5; wait", run_in_background: true });
    await expect.poll(() => processAlive('sleep 31.5'), { timeout: 10_000 }).toBe(true);
    const killed = await h.call<{ task: TaskRecord; was_running: boolean }>('shell_kill', { task_id: 'bash_1' });
    expect(killed.structured).toMatchObject({ was_running: true, task: { state: 'killed' } });
    expect(processAlive('sleep 31.5')).toBe(false);
    expect((await h.call('shell_kill', { task_id: 'bash_9' })).isError).toBe(true);
  });

  it('runs 100 tasks at once and refuses the 101st, naming the limit', async () => {
    h = await startShell({ policy: { limits: { max_background_tasks: 100 } } });
    const starts = await Promise.all(Array.from({ length: 100 }, () => h!.call<RunResult>('run_shell', { command: 'sleep 2', run_in_background: true })));
    expect(new Set(starts.map((start) => start.structured.task_id)).size).toBe(100);
    const refused = await h.call('run_shell', { command: 'sleep 2', run_in_background: true });
    expect(refused.isError).toBe(true);
    expect(refused.text).toContain('Refused: 100 background tasks are running, the most allowed at once (limits.max_background_tasks in shell_policy.yaml).');
  });

  it('leaves no task running when the server closes', async () => {
    h = await startShell();
    await h.call('run_shell', { command: 'sleep 32.75', run_in_background: true });
    await expect.poll(() => processAlive('sleep 32.75'), { timeout: 10_000 }).toBe(true);
    await h.close();
    h = undefined;
    expect(processAlive('sleep 32.75')).toBe(false);
  });
});

describe('run_in_sandbox', () => {
  it('runs in a throwaway checkout at a commit, leaving the working tree alone, and removes it', async () => {
    h = await startShell({ files: { 'a.txt': 'v1\n' } });
    const git = (...args: string[]) => execFileSync('git', ['-c', 'user.name=t', '-c', 'user.email=t@t', ...args], { cwd: h!.ws.root, encoding: 'utf8' });
    git('init', '-q');
    git('add', 'a.txt');
    git('commit', '-qm', 'first');
    const first = git('rev-parse', 'HEAD').trim();
    h.ws.write('a.txt', 'v2 uncommitted\n');
    const result = await h.call<{ commit: string; exit_code: number }>('run_in_sandbox', { command: 'cat a.txt; echo new > b.txt; git log --format=%s; pwd' });
    expect(result.isError).toBe(false);
    expect(result.structured).toMatchObject({ commit: first, exit_code: 0 });
    const lines = result.text.split('\n');
    expect(lines[0]).toBe(`In a throwaway checkout of ${h.ws.root} at ${first.slice(0, 12)} (removed afterwards):`);
    expect(lines.slice(1, 3)).toEqual(['v1', 'first']);
    const checkout = lines[3]!;
    expect(existsSync(checkout)).toBe(false);
    expect(existsSync(h.ws.path('b.txt'))).toBe(false);
    expect(readFileSync(h.ws.path('a.txt'), 'utf8')).toBe('v2 uncommitted\n');
    const bad = await h.call('run_in_sandbox', { command: 'true', rev: 'no-such-branch' });
    expect(bad.text).toBe(`rev no-such-branch names no commit in ${h.ws.root}`);
    const option = await h.call('run_in_sandbox', { command: 'true', rev: '--output=/tmp/x' });
    expect(option.isError).toBe(true);
  });
});
