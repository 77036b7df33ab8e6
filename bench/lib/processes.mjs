// Every child the bench starts is registered here so that Ctrl-C or a crash still stops it.
import { readFileSync } from 'node:fs';

const live = new Set();

export function track(pid) {
  if (pid) live.add(pid);
}

export function untrack(pid) {
  live.delete(pid);
}

function killAll() {
  for (const pid of live) {
    try {
      process.kill(pid, 'SIGKILL');
    } catch {
      // already gone
    }
  }
  live.clear();
}

export function stopChildrenOnExit() {
  process.once('exit', killAll);
  for (const signal of ['SIGINT', 'SIGTERM']) {
    process.once(signal, () => {
      killAll();
      process.exit(signal === 'SIGINT' ? 130 : 143);
    });
  }
}

/** CPU time (user + system) a running process has used, in ms, from /proc (clock ticks of 10 ms); undefined once it is gone. */
export function cpuTimeMs(pid) {
  try {
    const fields = readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1].split(' ');
    return (Number(fields[11]) + Number(fields[12])) * 10;
  } catch {
    return undefined;
  }
}

/** Peak resident set size of a running process in KiB (VmHWM), or undefined once it is gone. */
export function peakRssKb(pid) {
  try {
    const match = /^VmHWM:\s+(\d+) kB/m.exec(readFileSync(`/proc/${pid}/status`, 'utf8'));
    return match ? Number(match[1]) : undefined;
  } catch {
    return undefined;
  }
}
