import { spawn, type ChildProcess } from 'node:child_process';
import { existsSync } from 'node:fs';
import type { Socket } from 'node:net';
import { fileURLToPath } from 'node:url';

/**
 * Every child the gateway started in a session of its own (downstream servers, hook commands),
 * so that any exit of the gateway ends them and all their descendants. An exit hook covers a
 * normal exit at once; the watchdog (downstream/watchdog.ts) covers every exit, SIGKILL included,
 * because it sees the pipe the gateway holds close.
 */
const liveGroups = new Set<number>();
let exitHookInstalled = false;
let watchdog: ChildProcess | undefined;

const WATCHDOG_SCRIPT = fileURLToPath(new URL('./downstream/watchdog.js', import.meta.url));
const WATCHDOG_MIN_LIFE_MS = 1000;

export function killGroup(pid: number): void {
  try {
    process.kill(-pid, 'SIGKILL');
  } catch {
    // the group is already gone
  }
}

/** Started with the first child, not with the gateway, and never waited for: it costs the start nothing. */
function watchdogPipe(): ChildProcess | undefined {
  if (watchdog) return watchdog;
  // Run from its TypeScript sources (unit tests) there is no compiled watchdog; the exit hook remains.
  if (!existsSync(WATCHDOG_SCRIPT)) return undefined;
  let started: ChildProcess;
  try {
    started = spawn(process.execPath, [WATCHDOG_SCRIPT], { stdio: ['pipe', 'ignore', 'ignore'], detached: true });
  } catch {
    return undefined;
  }
  watchdog = started;
  const startedAt = Date.now();
  // A watchdog that is killed is replaced at once while children run, and told of every child; one
  // that exits by itself at its start is broken and replaced only at the next child, not in a loop.
  started.once('exit', (_code, signal) => {
    if (watchdog !== started) return;
    watchdog = undefined;
    if (liveGroups.size > 0 && (signal !== null || Date.now() - startedAt >= WATCHDOG_MIN_LIFE_MS)) watchdogPipe();
  });
  started.once('error', () => {
    if (watchdog === started) watchdog = undefined;
  });
  started.stdin!.on('error', () => undefined);
  // Neither the process nor its pipe keeps the gateway's event loop alive.
  started.unref();
  // With stdio 'pipe', a child's stdin is a net.Socket.
  (started.stdin as Socket).unref();
  for (const group of liveGroups) started.stdin!.write(`+${group}\n`);
  return started;
}

function tell(line: string): void {
  const pipe = watchdog?.stdin;
  if (pipe && !pipe.destroyed) pipe.write(`${line}\n`);
}

export function trackGroup(pid: number): void {
  if (!exitHookInstalled) {
    exitHookInstalled = true;
    process.on('exit', () => {
      for (const group of liveGroups) killGroup(group);
    });
  }
  liveGroups.add(pid);
  if (!watchdog) watchdogPipe();
  else tell(`+${pid}`);
}

export function untrackGroup(pid: number): void {
  if (!liveGroups.delete(pid)) return;
  tell(`-${pid}`);
}
