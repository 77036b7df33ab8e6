import { mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { cgroupSupport } from '../src/run/cgroup.js';
import { describeContainment, processLimit } from '../src/run/containment.js';
import { OutputCap } from '../src/run/output-cap.js';
import { startCommand } from '../src/run/start.js';
import type { RunRequest, SandboxSpec } from '../src/run/types.js';

const root = mkdtempSync(join(tmpdir(), 'bulkhead-run-'));
afterAll(() => rmSync(root, { recursive: true, force: true }));

const unconfined: SandboxSpec = { kind: 'none', network: false, writable: [root], readOnly: [] };

function request(command: string, overrides: Partial<RunRequest> = {}): RunRequest & { output: () => string } {
  const chunks: Buffer[] = [];
  return {
    command,
    cwd: root,
    timeoutMs: 10_000,
    env: { PATH: process.env['PATH'] ?? '/usr/bin:/bin', HOME: root, LANG: 'C.UTF-8' },
    sandbox: unconfined,
    maxProcesses: 64,
    signal: new AbortController().signal,
    killGraceMs: 300,
    onOutput: (chunk) => chunks.push(chunk),
    output: () => Buffer.concat(chunks).toString('utf8'),
    ...overrides,
  };
}

/** Pids of live processes whose command line contains marker (zombies are dead: they hold no resources). */
function processesWith(marker: string): number[] {
  const found: number[] = [];
  for (const entry of readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      const state = /^State:\s+(\S)/m.exec(readFileSync(`/proc/${entry}/status`, 'utf8'))?.[1];
      if (state !== 'Z' && readFileSync(`/proc/${entry}/cmdline`, 'utf8').includes(marker)) found.push(Number(entry));
    } catch {
      // Gone while we looked.
    }
  }
  return found;
}

const uniqueMarker = (): string => `bulkhead-marker-${process.pid}-${Math.random().toString(36).slice(2)}`;
/** Processes are killable by a cgroup when the command cannot hide from it (no sandbox). */
const cgroupContains = cgroupSupport().pidsParent !== null || cgroupSupport().killParent !== null;

describe('startCommand without a sandbox', () => {
  it('reports the exit code, in the cwd, with exactly the given environment', async () => {
    const run = request('echo "$PWD $HOME ${SECRET_TOKEN:-unset}"; exit 7');
    process.env['SECRET_TOKEN'] = 'leaked';
    const outcome = await startCommand(run).done.finally(() => delete process.env['SECRET_TOKEN']);
    expect(outcome).toMatchObject({ exitCode: 7, signal: null, timedOut: false, cancelled: false });
    expect(run.output()).toBe(`${root} ${root} unset\n`);
  });

  it('closes stdin and reads no profile', async () => {
    const run = request('cat; echo "read: $?"; shopt -q login_shell && echo login || echo not-login');
    await startCommand(run).done;
    expect(run.output()).toBe('read: 0\nnot-login\n');
  });

  it('delivers stdout and stderr in the order they were written', async () => {
    const run = request('echo out1; sleep 0.05; echo err1 >&2; sleep 0.05; echo out2; sleep 0.05; echo err2 >&2');
    const outcome = await startCommand(run).done;
    expect(outcome.exitCode).toBe(0);
    expect(run.output()).toBe('out1\nerr1\nout2\nerr2\n');
  });

  it('kills the whole group at the timeout and says it timed out', async () => {
    const marker = uniqueMarker();
    const run = request(`bash -c 'exec -a ${marker} sleep 30' & sleep 30`, { timeoutMs: 300 });
    const started = Date.now();
    const outcome = await startCommand(run).done;
    expect(outcome).toMatchObject({ exitCode: null, signal: 'SIGTERM', timedOut: true, cancelled: false });
    expect(Date.now() - started).toBeLessThan(5000);
    expect(processesWith(marker)).toEqual([]);
  });

  it('SIGKILLs a command that ignores SIGTERM once the grace period is over', async () => {
    const marker = uniqueMarker();
    const run = request(`trap '' TERM; bash -c 'exec -a ${marker} sleep 30' & wait; echo "survived"`, { timeoutMs: 300, killGraceMs: 400 });
    const started = Date.now();
    const outcome = await startCommand(run).done;
    const elapsed = Date.now() - started;
    expect(outcome).toMatchObject({ exitCode: null, signal: 'SIGKILL', timedOut: true });
    expect(elapsed).toBeGreaterThanOrEqual(650);
    expect(elapsed).toBeLessThan(5000);
    expect(run.output()).toBe('');
    expect(processesWith(marker)).toEqual([]);
  });

  it('cancels through the abort signal, before or during the run', async () => {
    const controller = new AbortController();
    const running = startCommand(request('sleep 30', { signal: controller.signal }));
    setTimeout(() => controller.abort(), 100);
    expect(await running.done).toMatchObject({ signal: 'SIGTERM', timedOut: false, cancelled: true });

    const aborted = AbortSignal.abort();
    expect(await startCommand(request('sleep 30', { signal: aborted })).done).toMatchObject({ signal: 'SIGTERM', cancelled: true });
  });

  it('stop() ends the group and resolves with the outcome', async () => {
    const running = startCommand(request('echo started; sleep 30'));
    await new Promise((resolve) => setTimeout(resolve, 100));
    const outcome = await running.stop();
    expect(outcome).toMatchObject({ signal: 'SIGTERM', cancelled: true });
    expect(await running.done).toBe(outcome);
  });

  it('kills what the command left running in the background when it ends', async () => {
    const marker = uniqueMarker();
    const run = request(`bash -c 'exec -a ${marker} sleep 30' & echo left`);
    const started = Date.now();
    const outcome = await startCommand(run).done;
    expect(outcome.exitCode).toBe(0);
    expect(run.output()).toBe('left\n');
    expect(Date.now() - started).toBeLessThan(3000);
    expect(processesWith(marker)).toEqual([]);
  });

  it('does not hang on a grandchild that double-forks out of the group holding the pipe', async () => {
    const marker = uniqueMarker();
    const run = request(`( setsid bash -c 'exec -a ${marker} sleep 30' & ); echo escaped`);
    const started = Date.now();
    const outcome = await startCommand(run).done;
    try {
      expect(outcome.exitCode).toBe(0);
      expect(run.output()).toBe('escaped\n');
      expect(Date.now() - started).toBeLessThan(3000);
      // Found and killed through the cgroup; without one it escapes, as describeContainment says.
      if (cgroupContains) expect(processesWith(marker)).toEqual([]);
      else expect(describeContainment(unconfined, 64)).toContain('leaves the process group (setsid) outlives');
    } finally {
      for (const pid of processesWith(marker)) process.kill(pid, 'SIGKILL');
    }
  });

  it.skipIf(processLimit().kind === 'none')('bounds a fork bomb and leaves nothing behind', async () => {
    const marker = uniqueMarker();
    const run = request(`: ${marker}; bomb() { bomb | bomb & }; bomb; sleep 1`, { timeoutMs: 1500, killGraceMs: 200 });
    const running = startCommand(run);
    let most = 0;
    const sampler = setInterval(() => (most = Math.max(most, processesWith(marker).length)), 50);
    const outcome = await running.done.finally(() => clearInterval(sampler));
    expect(outcome.exitCode === 0 || outcome.timedOut).toBe(true);
    expect(run.output()).toContain('fork: retry: Resource temporarily unavailable');
    expect(most).toBeLessThanOrEqual(64);
    expect(processesWith(marker)).toEqual([]);
    const after = request('echo usable');
    await startCommand(after).done;
    expect(after.output()).toBe('usable\n');
  });

  it('keeps bounded memory and the cap\'s text for a command printing 1 GiB', async () => {
    const cap = new OutputCap(32 * 1024, false);
    const rssBefore = process.memoryUsage().rss;
    let peakRss = rssBefore;
    const sampler = setInterval(() => (peakRss = Math.max(peakRss, process.memoryUsage().rss)), 20);
    const outcome = await startCommand(request('head -c 1G /dev/zero | tr "\\0" y', { onOutput: (chunk) => cap.write(chunk) })).done.finally(() =>
      clearInterval(sampler),
    );
    expect(outcome.exitCode).toBe(0);
    expect(cap.writtenBytes).toBe(1024 ** 3);
    expect(cap.text()).toBe(`…(${1024 ** 3 - 32 * 1024} bytes truncated from head)…\n${'y'.repeat(32 * 1024)}`);
    expect(peakRss - rssBefore).toBeLessThan(200 * 1024 * 1024);
  });

  it('rejects done when the command cannot start', async () => {
    await expect(startCommand(request('true', { cwd: join(root, 'missing') })).done).rejects.toThrow(/ENOENT/);
  });

  it('states what contains the commands', () => {
    const description = describeContainment(unconfined, 64);
    expect(description).toMatch(/^no sandbox \(sandbox: none\)/);
    if (processLimit().kind === 'pids-cgroup') expect(description).toContain('processes limited to 64 by a pids cgroup');
  });
});
