import { spawn } from 'node:child_process';
import { existsSync } from 'node:fs';
import { setTimeout as sleep } from 'node:timers/promises';
import { cgroupSupport, createCommandCgroups, type CommandCgroups } from './cgroup.js';
import { nprocLimitFor, processLimit } from './containment.js';
import { groupIsRunning } from './processes.js';
import { bashArgs, bashPath } from './executables.js';
import { holdPaths } from './held.js';
import { buildBwrapArgs, probeSandbox, SandboxUnavailableError } from './sandbox.js';
import type { RunningCommand, RunOutcome, RunRequest } from './types.js';

/** How long the pipes may stay open once every process we can see is gone (a process that escaped keeps them). */
const PIPE_DRAIN_MS = 500;
/** Bound on waiting for killed processes to disappear (one whose parent never reaps it stays a zombie). */
const VANISH_WAIT_MS = 2000;
const POLL_MS = 10;
const FIRST_POLL_MS = 0.5;
const POSIX_SHELL = '/bin/sh';

/**
 * Moves the wrapper into the command's cgroups and sets its RLIMIT_NPROC, then execs the command, so the
 * command's first instruction already runs limited. Arguments: nproc limit ('' for none), number of
 * cgroup.procs files, the files, the command.
 */
const CONTAIN_THEN_EXEC = [
  'limit=$1; count=$2; shift 2',
  'while [ "$count" -gt 0 ]; do echo $$ > "$1" || { echo "bulkhead: could not enter the cgroup $1" >&2; exit 125; }; shift; count=$((count - 1)); done',
  '[ -z "$limit" ] || ulimit -u "$limit" || { echo "bulkhead: could not set the process limit" >&2; exit 125; }',
  'exec "$@"',
].join('\n');

interface Launch {
  readonly argv: readonly [string, ...string[]];
  readonly cgroups: CommandCgroups | null;
  /** Lets go of the sandbox's placeholders (once it has ended). */
  readonly release: () => void;
}

/**
 * Starts `bash -c command` in its own process group (inside bubblewrap when the spec says so).
 * Throws SandboxUnavailableError rather than running a command without its configured sandbox.
 */
export function startCommand(request: RunRequest): RunningCommand {
  const launch = prepareLaunch(request);
  const startedAt = performance.now();
  const [executable, ...args] = launch.argv;
  let child;
  try {
    child = spawn(executable, args, {
      cwd: request.cwd,
      env: { ...request.env },
      stdio: ['ignore', 'pipe', 'pipe'],
      detached: true,
    });
  } catch (error) {
    launch.release();
    launch.cgroups?.remove();
    throw error;
  }
  const pid = child.pid ?? -1;
  const { cgroups } = launch;

  let timedOut = false;
  let cancelled = false;
  let terminating = false;
  let leaderGone = false;
  let killTimer: NodeJS.Timeout | undefined;

  const signalGroup = (signal: NodeJS.Signals): void => {
    // Without a pid (spawn failed) -pid would address every process we may signal.
    if (pid <= 0) return;
    try {
      process.kill(-pid, signal);
    } catch {
      // The group is gone already.
    }
  };
  const anyAlive = (): boolean => (pid > 0 && groupIsRunning(pid)) || (cgroups?.hasRunningMembers() ?? false);
  const killEverything = (): void => {
    signalGroup('SIGKILL');
    cgroups?.killAll();
  };

  const terminate = (reason: 'timeout' | 'cancel'): void => {
    if (terminating || leaderGone || pid < 0) return;
    terminating = true;
    if (reason === 'timeout') timedOut = true;
    else cancelled = true;
    signalGroup('SIGTERM');
    killTimer = setTimeout(killEverything, request.killGraceMs);
  };

  const timeoutTimer = setTimeout(() => terminate('timeout'), request.timeoutMs);
  const onAbort = (): void => terminate('cancel');
  request.signal.addEventListener('abort', onAbort, { once: true });

  const pipesClosed = Promise.all(
    [child.stdout, child.stderr].map((pipe) => {
      pipe.on('data', (chunk: Buffer) => request.onOutput(chunk));
      return new Promise<void>((resolve) => pipe.once('close', () => resolve()));
    }),
  );

  const leaderExit = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((resolve, reject) => {
    child.once('exit', (code, signal) => resolve({ code, signal }));
    child.once('error', reject);
  });

  const done = (async (): Promise<RunOutcome> => {
    try {
      const exit = await leaderExit;
      leaderGone = true;
      // Whatever the command left running dies with it, as it does in the sandbox's PID namespace.
      if (anyAlive()) killEverything();
      await waitUntil(() => !anyAlive(), VANISH_WAIT_MS, killEverything);
      await Promise.race([pipesClosed, sleep(PIPE_DRAIN_MS)]);
      child.stdout.destroy();
      child.stderr.destroy();
      return { exitCode: exit.code, signal: exit.signal, timedOut, cancelled, durationMs: Math.round(performance.now() - startedAt) };
    } finally {
      clearTimeout(timeoutTimer);
      clearTimeout(killTimer);
      request.signal.removeEventListener('abort', onAbort);
      cgroups?.remove();
      launch.release();
    }
  })();

  if (request.signal.aborted) onAbort();

  return {
    pid,
    done,
    stop: () => {
      terminate('cancel');
      return done;
    },
  };
}

function prepareLaunch(request: RunRequest): Launch {
  let command: [string, ...string[]] = [bashPath(), ...bashArgs(request.command)];
  let release = (): void => {};
  if (request.sandbox.kind === 'bubblewrap') {
    const probe = probeSandbox('bubblewrap');
    if (!probe.available) throw new SandboxUnavailableError(probe);
    const holding = holdPaths(request.sandbox);
    release = holding.release;
    command = [probe.executable, ...buildBwrapArgs(request.sandbox, request.cwd, holding.held), ...command];
  }
  const support = cgroupSupport();
  let cgroups: CommandCgroups | null;
  try {
    cgroups = createCommandCgroups(support, request.maxProcesses);
  } catch (error) {
    release();
    throw error;
  }
  const nprocLimit = processLimit().kind === 'rlimit-nproc' ? String(nprocLimitFor(request.maxProcesses)) : '';
  const procsFiles = cgroups?.procsFiles ?? [];
  if (procsFiles.length === 0 && nprocLimit === '') return { argv: command, cgroups, release };
  // dash starts in half bash's time; only RLIMIT_NPROC needs bash's `ulimit -u`.
  const wrapper = nprocLimit === '' && existsSync(POSIX_SHELL) ? [POSIX_SHELL, '-c', CONTAIN_THEN_EXEC] : [bashPath(), ...bashArgs(CONTAIN_THEN_EXEC)];
  return { argv: [wrapper[0]!, ...wrapper.slice(1), 'bulkhead-contain', nprocLimit, String(procsFiles.length), ...procsFiles, ...command], cgroups, release };
}

/**
 * Polls until `condition` holds or `limitMs` passes, calling `onEachPoll` between polls (to kill late
 * forks). The first polls come quickly: a sandbox's last process is usually gone within a millisecond.
 */
async function waitUntil(condition: () => boolean, limitMs: number, onEachPoll: () => void): Promise<void> {
  const deadline = performance.now() + limitMs;
  for (let pause = FIRST_POLL_MS; !condition() && performance.now() < deadline; pause = Math.min(pause * 2, POLL_MS)) {
    await sleep(pause);
    onEachPoll();
  }
}
