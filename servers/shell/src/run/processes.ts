import { readdirSync, readFileSync } from 'node:fs';

/** State letter and process group of a pid from /proc/<pid>/stat, or null once it is gone. */
function readStat(pid: number): { state: string; processGroup: number } | null {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    // The command name is in parentheses and may itself contain spaces and parentheses.
    const [state, , processGroup] = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    return { state: state ?? '', processGroup: Number(processGroup) };
  } catch {
    return null;
  }
}

/**
 * Whether pid still runs. A zombie does not: it holds no resources and only waits for its parent (pid 1
 * for orphans) to reap it, which some container inits do late or never.
 */
export function isRunning(pid: number): boolean {
  const stat = readStat(pid);
  return stat !== null && stat.state !== 'Z';
}

/** Whether any process of the group still runs (a zombie does not count). */
export function groupIsRunning(processGroup: number): boolean {
  try {
    process.kill(-processGroup, 0);
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== 'EPERM') return false;
  }
  // The kernel counts zombies as members: look for a member that still runs.
  for (const entry of readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    const stat = readStat(Number(entry));
    if (stat !== null && stat.processGroup === processGroup && stat.state !== 'Z') return true;
  }
  return false;
}
