import { execFileSync } from 'node:child_process';
import { existsSync, readdirSync, readFileSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startShell, type ShellHarness } from './helpers.js';

interface RunResult {
  readonly exit_code: number | null;
  readonly task_id?: string;
}

/** A control-plane folder as the gateway leaves it: keys, the console's secret and registry, a pending approval. */
const CONTROL_PLANE = {
  '.bulkhead/keys/console.secret': 'CONSOLE_SECRET_0123\n',
  '.bulkhead/keys/bulkhead.http.token': 'TOKEN_SECRET_4567\n',
  '.bulkhead/keys/consoles/4242.json': '{"pid":4242,"url":"http://127.0.0.1:43123/console/"}\n',
  '.bulkhead/approvals/ap-7f3a.json': '{"id":"ap-7f3a","arguments":{"content":"APPROVAL_SECRET"}}\n',
  '.bulkhead/shell_policy.yaml': 'enabled: true\n',
};
/** What the files hold (the commands name the files themselves, so cat's complaints do too). */
const LEAKS = /CONSOLE_SECRET|TOKEN_SECRET|APPROVAL_SECRET|4242/;

describe('the shell sandbox hides the control plane\'s private folders', () => {
  let shell: ShellHarness;
  const run = async (command: string, more: Record<string, unknown> = {}) => shell.call<RunResult>('run_shell', { command, ...more });
  beforeAll(async () => {
    shell = await startShell({ files: CONTROL_PLANE });
    // Planted on the host before the command: a link in the (writable) root into approvals/.
    symlinkSync('.bulkhead/approvals/ap-7f3a.json', shell.ws.path('planted-link'));
  });
  afterAll(async () => {
    await shell.close();
  });

  it('shows keys/ and approvals/ empty to cat, ls, find and grep, also through links', async () => {
    const result = await run(
      [
        'ls -A .bulkhead/keys .bulkhead/approvals',
        'cat .bulkhead/approvals/ap-7f3a.json .bulkhead/keys/console.secret planted-link 2>&1',
        'find .bulkhead -type f',
        'grep -r -l SECRET . 2>&1',
        'ln -s .bulkhead/approvals made-link 2>&1; ls -A made-link/; cat made-link/ap-7f3a.json 2>&1',
        'cat /proc/self/root$PWD/.bulkhead/approvals/ap-7f3a.json 2>&1',
        'echo done',
      ].join('; '),
    );
    expect(result.text).not.toMatch(LEAKS);
    const [body, footer] = result.text.split('\n[exit code ');
    expect(footer).toMatch(/^0 · /);
    expect(body).toBe(
      [
        '.bulkhead/approvals:',
        '',
        '.bulkhead/keys:',
        'cat: .bulkhead/approvals/ap-7f3a.json: No such file or directory',
        'cat: .bulkhead/keys/console.secret: No such file or directory',
        'cat: planted-link: No such file or directory',
        '.bulkhead/shell_policy.yaml',
        '.bulkhead/permissions.yaml',
        'cat: made-link/ap-7f3a.json: No such file or directory',
        `cat: /proc/self/root${shell.ws.root}/.bulkhead/approvals/ap-7f3a.json: No such file or directory`,
        'done',
      ].join('\n'),
    );
  });

  it('cannot write a decision, create a file, or move anything into or out of approvals/ and keys/', async () => {
    const attempts: Record<string, string> = {
      decide: 'echo \'{"decision":"once","by":"the model"}\' > .bulkhead/approvals/ap-7f3a.decision.json',
      create: 'touch .bulkhead/approvals/x.decision.json',
      mkdir: 'mkdir .bulkhead/approvals/sub',
      moveIn: 'echo forged > forged.json && mv forged.json .bulkhead/approvals/ap-9999.json',
      moveOut: 'mv .bulkhead/approvals .bulkhead/approvals-old',
      replaceFolder: 'rm -rf .bulkhead/approvals && mkdir .bulkhead/approvals',
      secretOver: 'echo guessed > .bulkhead/keys/console.secret',
      linkIn: 'ln -s /tmp .bulkhead/approvals/escape',
      throughLink: 'ln -s .bulkhead/approvals w && echo x > w/ap-1.decision.json',
    };
    const outcomes: Record<string, number | null> = {};
    for (const [name, command] of Object.entries(attempts)) outcomes[name] = (await run(command)).structured?.exit_code ?? null;
    expect(Object.entries(outcomes).filter(([, code]) => code === 0)).toEqual([]);
    expect(readdirSync(shell.ws.path('.bulkhead/approvals')).sort()).toEqual(['ap-7f3a.json']);
    expect(readdirSync(shell.ws.path('.bulkhead/keys')).sort()).toEqual(['bulkhead.http.token', 'console.secret', 'consoles']);
    expect(readFileSync(shell.ws.path('.bulkhead/keys/console.secret'), 'utf8')).toBe('CONSOLE_SECRET_0123\n');
    expect(existsSync(shell.ws.path('.bulkhead/approvals-old'))).toBe(false);
  });

  it('hides an approval made after a background command started, where approvals/ did not exist yet', async () => {
    rmSync(shell.ws.path('.bulkhead/approvals'), { recursive: true });
    const started = await run('sleep 1.5; ls -A .bulkhead/approvals; cat .bulkhead/approvals/late.json 2>&1; echo done', { run_in_background: true });
    const task = started.structured?.task_id;
    expect(task).toMatch(/^bash_\d+$/);
    // Made before the command started (mode 0700), so the empty folder mounted over it hides what comes later.
    expect(readdirSync(shell.ws.path('.bulkhead/approvals'))).toEqual([]);
    writeFileSync(shell.ws.path('.bulkhead/approvals/late.json'), '{"id":"late","arguments":"APPROVAL_SECRET"}\n', { mode: 0o600 });
    expect((await shell.call('wait_task', { task_id: task, timeout_ms: 10_000 })).text).toMatch(/^bash_\d+: exited with code 0/);
    const output = await shell.call('task_output', { task_id: task });
    expect(output.text).toContain('cat: .bulkhead/approvals/late.json: No such file or directory\ndone\n');
    expect(output.text).not.toMatch(LEAKS);
  });
});

describe('run_in_sandbox, in a throwaway checkout beside the roots', () => {
  it('shows the roots\' private folders empty as well', async () => {
    const shell = await startShell({ files: { ...CONTROL_PLANE, 'a.txt': 'a\n' } });
    try {
      const git = (...args: string[]) => execFileSync('git', ['-c', 'init.defaultBranch=main', '-c', 'user.name=A', '-c', 'user.email=a@x', ...args], { cwd: shell.ws.root, stdio: 'ignore' });
      git('init', '-q');
      git('add', 'a.txt');
      git('commit', '-q', '-m', 'a');
      const root = shell.ws.root;
      const result = await shell.call('run_in_sandbox', { command: `ls -A ${root}/.bulkhead/approvals ${root}/.bulkhead/keys; cat ${root}/.bulkhead/approvals/ap-7f3a.json 2>&1; echo done` });
      expect(result.text).not.toMatch(LEAKS);
      expect(result.text).toContain(`${root}/.bulkhead/approvals:\n\n${root}/.bulkhead/keys:\ncat: ${root}/.bulkhead/approvals/ap-7f3a.json: No such file or directory\ndone\n`);
    } finally {
      await shell.close();
    }
  });
});

describe('the shell sandbox and a console on loopback', () => {
  let console: Server;
  let port: number;
  beforeAll(async () => {
    console = createServer((_request, response) => response.end('CONSOLE_PAGE\n'));
    await new Promise<void>((resolve) => console.listen(0, '127.0.0.1', resolve));
    port = (console.address() as AddressInfo).port;
  });
  afterAll(async () => {
    await new Promise((resolve) => console.close(resolve));
  });

  it('cannot reach it without network (the default): loopback in the sandbox is its own', async () => {
    const shell = await startShell({ files: CONTROL_PLANE });
    try {
      const curl = await shell.call<RunResult>('run_shell', { command: `curl -sS -m 3 'http://127.0.0.1:${port}/console/?secret=guess' 2>&1; echo "curl $?"` });
      expect(curl.text).toMatch(new RegExp(`^curl: \\(7\\) Failed to connect to 127\\.0\\.0\\.1 port ${port}[^\\n]*\\ncurl 7\\n`));
      const tcp = await shell.call<RunResult>('run_shell', { command: `(exec 3<>/dev/tcp/127.0.0.1/${port}) 2>/dev/null; echo "tcp $?"` });
      expect(tcp.text).toMatch(/^tcp 1\n/);
    } finally {
      await shell.close();
    }
  });

  it('reaches it with network: true, which is why the console wants its own secret as well', async () => {
    const shell = await startShell({ files: CONTROL_PLANE, policy: { network: true } });
    try {
      const curl = await shell.call<RunResult>('run_shell', { command: `curl -sS -m 3 http://127.0.0.1:${port}/` });
      expect(curl.text).toMatch(/^CONSOLE_PAGE\n\[exit code 0 · /);
    } finally {
      await shell.close();
    }
  });
});
