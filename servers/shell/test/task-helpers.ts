import { spawn } from 'node:child_process';
import { readdirSync, readFileSync } from 'node:fs';
import { setTimeout as sleep } from 'node:timers/promises';
import { tempWorkspace, type TempWorkspace } from '@bulkhead/core/testing';
import type { RunningCommand, RunOutcome, RunRequest } from '../src/run/types.js';
import { TaskManager, type BackgroundRequest, type TaskManagerOptions } from '../src/tasks/task-manager.js';

/**
 * A small real runner for the task tests until servers/shell/src/run has its own: `bash -c` in a
 * process group of its own; stop() and the timeout send SIGTERM to the group, then SIGKILL after
 * the grace period; done settles once the group is gone.
 */
export function startBashCommand(request: RunRequest): RunningCommand {
  const started = performance.now();
  const child = spawn('bash', ['-c', request.command], {
    cwd: request.cwd,
    env: request.env,
    detached: true,
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  const pid = child.pid!;
  child.stdout!.on('data', request.onOutput);
  child.stderr!.on('data', request.onOutput);
  let timedOut = false;
  let cancelled = false;
  let killTimer: NodeJS.Timeout | undefined;
  const stopGroup = () => {
    if (killTimer) return;
    signalGroup(pid, 'SIGTERM');
    killTimer = setTimeout(() => signalGroup(pid, 'SIGKILL'), request.killGraceMs);
  };
  const timeout = setTimeout(() => {
    timedOut = true;
    stopGroup();
  }, request.timeoutMs);
  const onAbort = () => {
    cancelled = true;
    stopGroup();
  };
  request.signal.addEventListener('abort', onAbort, { once: true });
  const done = new Promise<RunOutcome>((resolve) => {
    // 'close' waits for the pipes, which every process of the group still holding them keeps open.
    child.once('close', async (exitCode, signal) => {
      clearTimeout(timeout);
      request.signal.removeEventListener('abort', onAbort);
      // Whatever of the group let go of the pipes and is still alive goes with the command.
      signalGroup(pid, 'SIGKILL');
      while (groupAlive(pid)) await sleep(5);
      clearTimeout(killTimer);
      resolve({ exitCode, signal, timedOut, cancelled, durationMs: performance.now() - started });
    });
  });
  return {
    pid,
    done,
    stop: () => {
      stopGroup();
      return done;
    },
  };
}

function signalGroup(pid: number, signal: NodeJS.Signals): void {
  try {
    process.kill(-pid, signal);
  } catch {
    // The group is already gone.
  }
}

/** Whether the group has a member that is not a zombie (an init that never reaps leaves those). */
function groupAlive(pgid: number): boolean {
  for (const entry of readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      const stat = readFileSync(`/proc/${entry}/stat`, 'utf8');
      // Fields after the command name, which may itself hold spaces and parentheses.
      const [state, , group] = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
      if (Number(group) === pgid && state !== 'Z') return true;
    } catch {
      // The process ended while we looked.
    }
  }
  return false;
}

/** Pids of live (not zombie) processes whose command line contains `marker`. */
export function processesWithMarker(marker: string): number[] {
  const pids: number[] = [];
  for (const entry of readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      if (readFileSync(`/proc/${entry}/cmdline`, 'utf8').includes(marker)) pids.push(Number(entry));
    } catch {
      // The process ended while we looked.
    }
  }
  return pids;
}

export interface TaskHarness {
  readonly ws: TempWorkspace;
  readonly manager: TaskManager;
  /** Starts `command` in the workspace with the harness defaults. */
  run(command: string, more?: Partial<BackgroundRequest>): ReturnType<TaskManager['start']>;
  close(): Promise<void>;
}

export function taskHarness(options: Partial<TaskManagerOptions> = {}): TaskHarness {
  const ws = tempWorkspace({}, 'bulkhead-tasks-');
  const manager = new TaskManager({
    stateDir: ws.mkdir('state'),
    start: startBashCommand,
    maxTasks: 10,
    maxFinishedTasks: 50,
    maxLogBytes: 1024 * 1024,
    ...options,
  });
  return {
    ws,
    manager,
    run: (command, more = {}) =>
      manager.start({
        command,
        cwd: ws.root,
        timeoutMs: 60_000,
        env: { PATH: process.env['PATH'] ?? '/usr/bin:/bin', LANG: 'C.UTF-8' },
        sandbox: { kind: 'none', network: false, writable: [ws.root], readOnly: [] },
        maxProcesses: 256,
        killGraceMs: 300,
        ...more,
      }),
    close: async () => {
      await manager.closeAll();
      ws.cleanup();
    },
  };
}

/** Polls `check` until it returns true or `ms` pass. */
export async function eventually(check: () => boolean, ms = 10_000): Promise<void> {
  const deadline = Date.now() + ms;
  while (!check()) {
    if (Date.now() > deadline) throw new Error('condition not met in time');
    await sleep(20);
  }
}
