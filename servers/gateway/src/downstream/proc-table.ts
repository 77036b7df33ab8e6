import { readdirSync, readFileSync } from 'node:fs';

/** Processes as Linux lists them in /proc; empty elsewhere, where only process groups are known. */
export interface ProcessRow {
  readonly pid: number;
  readonly ppid: number;
  readonly group: number;
  readonly session: number;
  readonly startTime: string;
}

/** Fields of /proc/PID/stat after the command name, which may itself hold spaces and parentheses. */
export function readStat(pid: number): ProcessRow | undefined {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    // fields[0] is the state; ppid, pgrp and session follow; starttime is field 22 of the whole line.
    return { pid, ppid: Number(fields[1]), group: Number(fields[2]), session: Number(fields[3]), startTime: fields[19] ?? '' };
  } catch {
    return undefined;
  }
}

export function processTable(): ProcessRow[] {
  let names: string[];
  try {
    names = readdirSync('/proc');
  } catch {
    return [];
  }
  return names.filter((name) => /^\d+$/.test(name)).flatMap((name) => readStat(Number(name)) ?? []);
}

export function signal(pid: number, name: NodeJS.Signals): void {
  try {
    process.kill(pid, name);
  } catch {
    // gone already
  }
}

/**
 * The processes that belong to children started in sessions of their own (`leaders`): their
 * sessions, their groups, those `also` names, and every process below any of these by parent
 * links (which a grandchild that called setsid keeps while its parent lives). `known` are left out.
 */
export function familyOf(
  leaders: ReadonlySet<number>,
  table: readonly ProcessRow[] = processTable(),
  also: (row: ProcessRow) => boolean = () => false,
  known: ReadonlySet<number> = new Set(),
): ProcessRow[] {
  const found = new Set(known);
  const family: ProcessRow[] = [];
  for (let grown = true; grown; ) {
    grown = false;
    for (const row of table) {
      if (found.has(row.pid) || row.pid === process.pid) continue;
      if (leaders.has(row.pid) || leaders.has(row.session) || leaders.has(row.group) || found.has(row.ppid) || also(row)) {
        found.add(row.pid);
        family.push(row);
        grown = true;
      }
    }
  }
  return family;
}

/** Kills each of `rows` that still runs as the same process (same start time), not a reused pid. */
export function killSurvivors(rows: readonly ProcessRow[]): void {
  for (const row of rows) if (readStat(row.pid)?.startTime === row.startTime) signal(row.pid, 'SIGKILL');
}
