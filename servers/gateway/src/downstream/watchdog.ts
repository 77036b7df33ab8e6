/**
 * The gateway's watchdog, run as its own process (`node watchdog.js`) in its own session. The
 * gateway holds its stdin and writes `+PID` when it starts a child in a new session (every
 * downstream server and hook command) and `-PID` when that child has ended. The pipe closes when
 * the gateway dies, however it dies (SIGKILL included), and then the watchdog ends every process
 * it can attribute to those children and exits.
 *
 * A process is attributed to a child when it is in the child's session or process group (a
 * grandchild that moved to a group of its own with `set -m` stays in the session), or descends
 * from such a process by parent links (a grandchild that called setsid). Parent links are cut
 * when a parent exits (its orphans move to init), so the watchdog also takes a census every
 * second and remembers each attributed process by pid and start time: a grandchild in a session
 * of its own is still ended after the server that started it was stopped or crashed. What
 * escapes: a process that left the session and whose parent chain was cut within the second
 * before (a daemon that double-forks away at once).
 */
import { createInterface } from 'node:readline';
import { familyOf, processTable, readStat, signal, type ProcessRow } from './proc-table.js';

/** Each tracked session leader with its start time, so that a reused pid is told from the child. */
const leaders = new Map<number, string | undefined>();
/** Processes the census attributed to a leader, by pid: their start time and the leader. */
const remembered = new Map<number, { readonly startTime: string; readonly leader: number }>();
const CENSUS_MS = 1000;

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
 * The processes of `table` attributed to the leaders `chosen`, beyond those already in `known`:
 * their sessions and groups, what the census remembered of them, and everything below those.
 */
function attributed(table: readonly ProcessRow[], chosen: readonly number[], known: ReadonlySet<number>): ProcessRow[] {
  const leaderSet = new Set(chosen);
  const recalled = (row: ProcessRow) => {
    const memory = remembered.get(row.pid);
    return memory !== undefined && memory.startTime === row.startTime && leaderSet.has(memory.leader);
  };
  return familyOf(liveSessions(table, chosen), table, recalled, known);
}

/**
 * Stops (SIGSTOP) every process attributed to the leaders, rescanning until a scan finds none
 * new, so that nothing forks past the sweep; then kills them all. Without /proc (not Linux) only
 * the process groups are killed.
 */
function sweep(chosen: readonly number[]): void {
  const targets = new Set<number>();
  for (let round = 0; round < 50; round++) {
    const table = processTable();
    const added = attributed(table, chosen, targets);
    for (const row of added) {
      signal(row.pid, 'SIGSTOP');
      targets.add(row.pid);
    }
    if (added.length === 0) break;
  }
  for (const leader of chosen) signal(-leader, 'SIGKILL');
  for (const pid of targets) signal(pid, 'SIGKILL');
  for (const [pid, memory] of remembered) if (chosen.includes(memory.leader)) remembered.delete(pid);
}

/** Remembers who belongs to which leader while parent links still say so. */
function census(): void {
  if (leaders.size === 0) return;
  const table = processTable();
  const live = new Map(table.map((row) => [row.pid, row.startTime]));
  for (const [pid, memory] of remembered) if (live.get(pid) !== memory.startTime) remembered.delete(pid);
  for (const leader of leaders.keys()) {
    for (const row of attributed(table, [leader], new Set())) if (!remembered.has(row.pid)) remembered.set(row.pid, { startTime: row.startTime, leader });
  }
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
setInterval(census, CENSUS_MS);
// The gateway's own signals (a terminal's Ctrl-C reaches its whole group) must not end the watchdog first.
for (const name of ['SIGINT', 'SIGHUP', 'SIGPIPE'] as const) process.on(name, () => undefined);
