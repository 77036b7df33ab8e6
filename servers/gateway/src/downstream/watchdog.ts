/**
 * The gateway's watchdog, run as its own process (`node watchdog.js`) in its own session. The
 * gateway holds its stdin and writes `+PID` when it starts a child in a new session (every
 * downstream server and hook command) and `-PID` when that child has ended. The pipe closes when
 * the gateway dies, however it dies (SIGKILL included), and then the watchdog ends every process
 * it can attribute to those children and exits.
 *
 * A process is attributed to a child when it is in the child's session or process group (a
 * grandchild that moved to a group of its own with `set -m` stays in the session), or descends
 * from such a process by parent links (a grandchild that called setsid while its parent lives).
 * What escapes: a process that left the session and whose parent chain was already cut (a
 * daemon that double-forked away to init) before the sweep.
 */
import { readdirSync, readFileSync } from 'node:fs';
import { createInterface } from 'node:readline';

interface ProcessRow {
  readonly pid: number;
  readonly ppid: number;
  readonly group: number;
  readonly session: number;
  readonly startTime: string;
}

/** Fields of /proc/PID/stat after the command name, which may itself hold spaces and parentheses. */
function readStat(pid: number): ProcessRow | undefined {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    // fields[0] is the state; ppid, pgrp and session follow; starttime is field 22 of the whole line.
    return { pid, ppid: Number(fields[1]), group: Number(fields[2]), session: Number(fields[3]), startTime: fields[19] ?? '' };
  } catch {
    return undefined;
  }
}

function processTable(): ProcessRow[] {
  let names: string[];
  try {
    names = readdirSync('/proc');
  } catch {
    return [];
  }
  return names.filter((name) => /^\d+$/.test(name)).flatMap((name) => readStat(Number(name)) ?? []);
}

function signal(pid: number, name: NodeJS.Signals): void {
  try {
    process.kill(pid, name);
  } catch {
    // gone already
  }
}

/** Each tracked session leader with its start time, so that a reused pid is told from the child. */
const leaders = new Map<number, string | undefined>();

/**
 * The leaders whose sessions may still hold processes: a live process under a leader's pid that
 * started at another time means the pid was reused, and a pid is only reused once no process is
 * left in the session or group it named.
 */
function liveSessions(table: readonly ProcessRow[], chosen: readonly number[]): Set<number> {
  const byPid = new Map(table.map((row) => [row.pid, row]));
  return new Set(
    chosen.filter((leader) => {
      const row = byPid.get(leader);
      return !row || row.startTime === leaders.get(leader);
    }),
  );
}

/**
 * Stops (SIGSTOP) every process attributed to the sessions, rescanning until a scan finds none
 * new, so that nothing forks past the sweep; then kills them all. Without /proc (not Linux) only
 * the process groups are killed.
 */
function sweep(chosen: readonly number[]): void {
  const targets = new Set<number>();
  for (let round = 0; round < 50; round++) {
    const table = processTable().filter((row) => row.pid !== process.pid);
    if (table.length === 0) break;
    const sessions = liveSessions(table, chosen);
    let found = false;
    for (let grown = true; grown; ) {
      grown = false;
      for (const row of table) {
        if (targets.has(row.pid)) continue;
        if (sessions.has(row.session) || sessions.has(row.group) || sessions.has(row.pid) || targets.has(row.ppid)) {
          signal(row.pid, 'SIGSTOP');
          targets.add(row.pid);
          grown = found = true;
        }
      }
    }
    if (!found) break;
  }
  for (const leader of chosen) signal(-leader, 'SIGKILL');
  for (const pid of targets) signal(pid, 'SIGKILL');
}

function record(leader: number): void {
  leaders.set(leader, readStat(leader)?.startTime);
}

const lines = createInterface({ input: process.stdin });
lines.on('line', (line) => {
  const pid = Number(line.slice(1));
  if (!Number.isInteger(pid) || pid <= 1) return;
  if (line.startsWith('+')) record(pid);
  else if (line.startsWith('-') && leaders.has(pid)) {
    // The child has ended: what it left behind in its session goes too.
    sweep([pid]);
    leaders.delete(pid);
  }
});
lines.on('close', () => {
  sweep([...leaders.keys()]);
  process.exit(0);
});
// The gateway's own signals (a terminal's Ctrl-C reaches its whole group) must not end the watchdog first.
for (const name of ['SIGINT', 'SIGHUP', 'SIGPIPE'] as const) process.on(name, () => undefined);
