import { existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { createServer, type Server } from 'node:net';
import { homedir, tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { describeContainment, processLimit } from '../src/run/containment.js';
import { bashPath } from '../src/run/executables.js';
import { emptySource } from '../src/run/held.js';
import { buildBwrapArgs, probeSandbox, SandboxUnavailableError, unprivilegedUser } from '../src/run/sandbox.js';
import { startCommand } from '../src/run/start.js';
import type { RunRequest, SandboxSpec } from '../src/run/types.js';

const root = mkdtempSync(join(tmpdir(), 'bulkhead-sandbox-'));
const controlPlane = join(root, '.bulkhead');
mkdirSync(controlPlane);
writeFileSync(join(controlPlane, 'policy.yaml'), 'enabled: true\n');
afterAll(() => rmSync(root, { recursive: true, force: true }));

const sandboxed: SandboxSpec = { kind: 'bubblewrap', network: false, writable: [root], readOnly: [controlPlane] };

async function run(command: string, overrides: Partial<RunRequest> = {}): Promise<{ exitCode: number | null; output: string; timedOut: boolean }> {
  const chunks: Buffer[] = [];
  const outcome = await startCommand({
    command,
    cwd: root,
    timeoutMs: 10_000,
    env: { PATH: process.env['PATH'] ?? '/usr/bin:/bin', HOME: homedir(), LANG: 'C' },
    sandbox: sandboxed,
    maxProcesses: 64,
    signal: new AbortController().signal,
    killGraceMs: 300,
    onOutput: (chunk) => chunks.push(chunk),
    ...overrides,
  }).done;
  return { exitCode: outcome.exitCode, output: Buffer.concat(chunks).toString('utf8'), timedOut: outcome.timedOut };
}

function processesWith(marker: string): number[] {
  return readdirSync('/proc').filter((entry) => {
    try {
      return /^\d+$/.test(entry) && readFileSync(`/proc/${entry}/cmdline`, 'utf8').includes(marker);
    } catch {
      return false;
    }
  }).map(Number);
}

/** A home under /tmp is already behind the private /tmp, so it is not hidden on its own. */
const homeIsPrivateTmp = homedir().startsWith('/tmp/');
const uniqueMarker = (): string => `bulkhead-marker-${process.pid}-${Math.random().toString(36).slice(2)}`;

describe('probeSandbox', () => {
  it('says how to fix a missing bwrap', () => {
    const probe = probeSandbox('bubblewrap', '/nonexistent');
    expect(probe).toEqual({
      available: false,
      reason: 'bubblewrap (bwrap) is not installed',
      fix: 'install bubblewrap (apt-get install bubblewrap) or set sandbox: none in shell_policy.yaml (commands then run unconfined)',
    });
  });

  // Elsewhere the sandbox tests below skip when bwrap cannot run; CI installs it, so there they must run.
  it.runIf(process.env['CI'] === 'true')('finds bwrap and checks it can make its namespaces', () => {
    expect(probeSandbox('bubblewrap')).toMatchObject({ available: true, version: expect.stringMatching(/^bubblewrap \d/), executable: expect.stringMatching(/\/bwrap$/) });
  });

  it('refuses to run a command when the configured sandbox is unavailable, and says so at start-up', () => {
    const path = process.env['PATH'];
    process.env['PATH'] = '/nonexistent';
    try {
      expect(() => startCommand({ command: 'true', cwd: root, timeoutMs: 1000, env: {}, sandbox: sandboxed, maxProcesses: 8, signal: new AbortController().signal, killGraceMs: 100, onOutput: () => {} })).toThrow(
        SandboxUnavailableError,
      );
      expect(describeContainment(sandboxed, 8)).toMatch(/^commands refused: the bubblewrap sandbox is unavailable \(bubblewrap \(bwrap\) is not installed\); fix: install bubblewrap/);
    } finally {
      process.env['PATH'] = path;
    }
  });
});

describe('buildBwrapArgs', () => {
  it('lays out the mounts so later ones win: system read-only, private folders, roots writable, control plane read-only (held by an empty read-only tmpfs while missing)', () => {
    const args = buildBwrapArgs({ kind: 'bubblewrap', network: false, writable: ['/work/a', '/work/b'], readOnly: ['/work/a/.bulkhead'], hidden: ['/'], visible: ['/work/c'], tmpfsBytes: 1024 }, '/work/a/src');
    expect(args).toEqual([
      '--ro-bind', '/', '/', '--dev', '/dev', '--size', '1024', '--tmpfs', '/dev/shm', '--proc', '/proc', '--ro-bind', '/proc/sys', '/proc/sys',
      '--size', '1024', '--tmpfs', '/tmp', '--size', '1024', '--tmpfs', '/run', '--size', '1024', '--tmpfs', '/var/tmp',
      '--ro-bind', '/work/c', '/work/c',
      '--bind', '/work/a', '/work/a', '--bind', '/work/b', '/work/b',
      '--tmpfs', '/work/a/.bulkhead', '--remount-ro', '/work/a/.bulkhead',
      '--unshare-all', ...unprivilegedUser(), '--die-with-parent', '--new-session', '--chdir', '/work/a/src',
    ]);
  });

  it('binds the held paths read-only after the roots: existing ones over themselves, missing ones as an empty read-only folder', () => {
    const args = buildBwrapArgs({ kind: 'bubblewrap', network: false, writable: ['/work/a'], readOnly: [], hidden: ['/'] }, '/work/a', { existing: ['/work/a/.git/config'], placeholders: [{ path: '/work/a/.mcp.json', kind: 'file' }, { path: '/work/a/.claude', kind: 'folder' }] });
    const at = args.indexOf('--unshare-all');
    expect(args.slice(at - 12, at)).toEqual(['--bind', '/work/a', '/work/a', '--ro-bind', '/work/a/.git/config', '/work/a/.git/config', '--ro-bind', emptySource('file'), '/work/a/.mcp.json', '--ro-bind', emptySource('folder'), '/work/a/.claude']);
  });

  it('does not bind read-only folders outside the roots, which may sit in a hidden folder', () => {
    const args = buildBwrapArgs({ kind: 'bubblewrap', network: false, writable: ['/work/a'], readOnly: ['/srv/home/.config/bulkhead'], hidden: ['/'] }, '/work/a');
    expect(args).not.toContain('/srv/home/.config/bulkhead');
  });

  it.skipIf(homeIsPrivateTmp)('shares the network only when asked, and hides the server user\'s home by default', () => {
    const args = buildBwrapArgs({ kind: 'bubblewrap', network: true, writable: [root], readOnly: [] }, root);
    expect(args.join(' ')).toContain(`--tmpfs ${homedir()} --bind ${root} ${root}`);
    expect(args.join(' ')).toContain('--unshare-all --share-net');
  });
});

describe.runIf(probeSandbox('bubblewrap').available)('startCommand in the bubblewrap sandbox', () => {
  it('runs the command in cwd and reports its exit code', async () => {
    expect(await run('pwd; exit 3')).toEqual({ exitCode: 3, output: `${root}\n`, timedOut: false });
  });

  it('refuses writes outside the roots', async () => {
    const result = await run('echo x > /etc/bulkhead-test; touch /usr/bulkhead-test; echo done');
    expect(result.output).toBe(
      `${bashPath()}: line 1: /etc/bulkhead-test: Read-only file system\ntouch: cannot touch \'/usr/bulkhead-test\': Read-only file system\ndone\n`,
    );
    expect(existsSync('/etc/bulkhead-test')).toBe(false);
  });

  it('hides the control plane\'s keys, however readable the files in it are', async () => {
    const keys = join(controlPlane, 'keys');
    mkdirSync(keys, { recursive: true });
    writeFileSync(join(keys, 'bulkhead.http.token'), 'a-bearer-token-of-the-gateway\n', { mode: 0o644 });
    const command = 'ls -A .bulkhead/keys; cat .bulkhead/keys/bulkhead.http.token 2>&1; echo done';
    expect(await run(command, { sandbox: { ...sandboxed, secret: [keys] } })).toEqual({
      exitCode: 0,
      output: 'cat: .bulkhead/keys/bulkhead.http.token: No such file or directory\ndone\n',
      timedOut: false,
    });
    // Without it the sandbox would show the file: the test above is not passing by accident.
    expect((await run(command)).output).toBe('bulkhead.http.token\na-bearer-token-of-the-gateway\ndone\n');
    rmSync(keys, { recursive: true });
  });

  it('keeps a control-plane folder that does not exist yet from being made inside the sandbox', async () => {
    const missing = join(root, '.not-yet');
    const result = await run('mkdir -p .not-yet/sub; touch .not-yet/policy.yaml; ls -A .not-yet | wc -l', { sandbox: { ...sandboxed, readOnly: [controlPlane, missing] } });
    expect(result.output).toBe(
      "mkdir: cannot create directory '.not-yet/sub': Read-only file system\ntouch: cannot touch '.not-yet/policy.yaml': Read-only file system\n0\n",
    );
    expect(readdirSync(missing)).toEqual([]);
  });

  it('lets the command write inside the roots, but not into the control-plane folder', async () => {
    const result = await run('echo written > inside.txt && echo x > .bulkhead/policy.yaml; rm .bulkhead/policy.yaml; cat inside.txt');
    expect(result.output).toBe(
      `${bashPath()}: line 1: .bulkhead/policy.yaml: Read-only file system\nrm: cannot remove '.bulkhead/policy.yaml': Read-only file system\nwritten\n`,
    );
    expect(readFileSync(join(root, 'inside.txt'), 'utf8')).toBe('written\n');
    expect(readFileSync(join(controlPlane, 'policy.yaml'), 'utf8')).toBe('enabled: true\n');
  });

  it.skipIf(homeIsPrivateTmp)('gives the command a private /tmp, an empty /run and an empty throwaway home', async () => {
    const name = `bulkhead-private-${Math.random().toString(36).slice(2)}`;
    const hostSecret = join(homedir(), `.${name}`);
    writeFileSync(join(tmpdir(), name), 'host');
    writeFileSync(hostSecret, 'token');
    try {
      const result = await run(`cat /tmp/${name} ~/.${name} 2>&1 | sed 's/^.*: //'; echo mine > /tmp/${name}-inside; echo mine > ~/note; ls -A /run | wc -l`);
      expect(result.output).toBe('No such file or directory\nNo such file or directory\n0\n');
      expect(existsSync(join(tmpdir(), `${name}-inside`))).toBe(false);
      expect(existsSync(join(homedir(), 'note'))).toBe(false);
    } finally {
      rmSync(join(tmpdir(), name), { force: true });
      rmSync(hostSecret, { force: true });
    }
  });

  describe('network', () => {
    let server: Server;
    let port = 0;
    beforeAll(async () => {
      server = createServer((socket) => socket.end('hello\n'));
      await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
      const address = server.address();
      port = typeof address === 'object' && address !== null ? address.port : 0;
    });
    afterAll(() => new Promise<void>((resolve) => server.close(() => resolve())));

    it('has no network without network: true (even loopback is another one)', async () => {
      const result = await run(`exec 3<>/dev/tcp/127.0.0.1/${port} && echo connected`);
      expect(result.exitCode).toBe(1);
      expect(result.output).toBe(`${bashPath()}: connect: Connection refused\n${bashPath()}: line 1: /dev/tcp/127.0.0.1/${port}: Connection refused\n`);
    });

    it('reaches the host network with network: true', async () => {
      const result = await run(`exec 3<>/dev/tcp/127.0.0.1/${port} && head -n 1 <&3`, { sandbox: { ...sandboxed, network: true } });
      expect(result).toEqual({ exitCode: 0, output: 'hello\n', timedOut: false });
    });
  });

  it('kills the sandbox at the timeout', async () => {
    const marker = uniqueMarker();
    const started = Date.now();
    const result = await run(`trap '' TERM; bash -c 'exec -a ${marker} sleep 30' & wait`, { timeoutMs: 300 });
    expect(result).toMatchObject({ exitCode: null, timedOut: true });
    expect(Date.now() - started).toBeLessThan(5000);
    expect(processesWith(marker)).toEqual([]);
  });

  it('leaves nothing behind from a grandchild that double-forks and calls setsid', async () => {
    const marker = uniqueMarker();
    const started = Date.now();
    const result = await run(`( setsid bash -c 'exec -a ${marker} sleep 30' & ); ( ( bash -c 'exec -a ${marker} sleep 30' & ) & ); echo escaped`);
    expect(result).toEqual({ exitCode: 0, output: 'escaped\n', timedOut: false });
    expect(Date.now() - started).toBeLessThan(3000);
    expect(processesWith(marker)).toEqual([]);
  });

  it.skipIf(processLimit().kind === 'none')('bounds a fork bomb and leaves nothing behind', async () => {
    const marker = uniqueMarker();
    let most = 0;
    const sampler = setInterval(() => (most = Math.max(most, processesWith(marker).length)), 50);
    const result = await run(`: ${marker}; bomb() { bomb | bomb & }; bomb; sleep 1`, { timeoutMs: 1500, killGraceMs: 200 }).finally(() => clearInterval(sampler));
    expect(result.exitCode === 0 || result.timedOut).toBe(true);
    expect(result.output).toContain('fork: retry: Resource temporarily unavailable');
    expect(most).toBeLessThanOrEqual(64);
    expect(processesWith(marker)).toEqual([]);
    expect(await run('echo usable')).toMatchObject({ exitCode: 0, output: 'usable\n' });
  });

  it('states the sandbox in force', () => {
    const description = describeContainment(sandboxed, 64);
    if (processLimit().kind === 'pids-cgroup') expect(description).toBe('bubblewrap sandbox, no network, processes limited to 64 by a pids cgroup');
    else expect(description).toMatch(/^bubblewrap sandbox, no network, /);
  });
});
