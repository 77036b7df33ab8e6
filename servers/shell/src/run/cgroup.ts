import { randomBytes } from 'node:crypto';
import { existsSync, mkdirSync, readdirSync, readFileSync, rmdirSync, writeFileSync } from 'node:fs';
import { processAlive } from '@bulkhead/core';
import { join } from 'node:path';
import { isRunning } from './processes.js';

/**
 * Per-command control groups: a pids cgroup caps how many processes a command may have (root is exempt
 * from RLIMIT_NPROC, a cgroup is not), and lets us find every process the command started, even one that
 * left its process group with setsid, to kill it.
 */
export interface CgroupSupport {
  /** Folder under which per-command cgroups with pids.max are made (cgroup v1 pids hierarchy or cgroup2), if writable. */
  readonly pidsParent: string | null;
  /** cgroup2 folder under which per-command cgroups with cgroup.kill are made, if writable. */
  readonly killParent: string | null;
}

/** The cgroups one command runs in; its wrapper writes its own pid into every procsFiles entry before exec. */
export interface CommandCgroups {
  readonly procsFiles: readonly string[];
  /** Whether any process of the command still runs (zombies waiting for a reaper do not). */
  hasRunningMembers(): boolean;
  killAll(): void;
  /** Removes the cgroups, or retries with the next command while a killed member is still a zombie. */
  remove(): void;
}

const GROUP_FOLDER = 'bulkhead';

let detected: CgroupSupport | undefined;

/** Looks once for writable pids and cgroup2 hierarchies, under the server's own cgroup (so nested containers work). */
export function cgroupSupport(): CgroupSupport {
  detected ??= detectCgroupSupport();
  return detected;
}

function detectCgroupSupport(): CgroupSupport {
  const mounts = readText('/proc/self/mounts')?.split('\n') ?? [];
  const ownPaths = ownCgroupPaths();
  let pidsParent: string | null = null;
  let killParent: string | null = null;
  for (const line of mounts) {
    const [, mountPoint, type, options] = line.split(' ');
    if (mountPoint === undefined || options === undefined) continue;
    if (type === 'cgroup2') {
      const parent = usableParent(join(mountPoint, ownPaths.get('') ?? '/'));
      if (parent === null) continue;
      if (killParent === null && existsSync(join(parent, 'cgroup.kill'))) killParent = parent;
      if (pidsParent === null && enablePidsController(parent)) pidsParent = parent;
    } else if (type === 'cgroup' && options.split(',').includes('pids') && pidsParent === null) {
      pidsParent = usableParent(join(mountPoint, ownPaths.get('pids') ?? '/'));
    }
  }
  return { pidsParent, killParent };
}

/** Controller list ('' for cgroup2) → the server's cgroup path in it, from /proc/self/cgroup. */
function ownCgroupPaths(): Map<string, string> {
  const paths = new Map<string, string>();
  for (const line of readText('/proc/self/cgroup')?.split('\n') ?? []) {
    const match = /^\d+:([^:]*):(.*)$/.exec(line);
    if (match === null) continue;
    for (const controller of (match[1] ?? '').split(',')) paths.set(controller, match[2] ?? '/');
  }
  return paths;
}

/** The bulkhead folder under ownCgroup, made if missing, or null when we may not make cgroups in it. */
function usableParent(ownCgroup: string): string | null {
  const parent = join(ownCgroup, GROUP_FOLDER);
  try {
    mkdirSync(parent, { recursive: true });
  } catch {
    return null;
  }
  // It may exist already, made by another user's server (root's): only a trial cgroup tells.
  return canMakeChildWith(parent, 'cgroup.procs') ? parent : null;
}

function canMakeChildWith(parent: string, file: string): boolean {
  const probe = join(parent, `probe-${process.pid}`);
  try {
    mkdirSync(probe);
    return existsSync(join(probe, file));
  } catch {
    return false;
  } finally {
    tryRemove(probe);
  }
}

/** cgroup2 gives children pids.max only when the pids controller is enabled in the parent (and every ancestor). */
function enablePidsController(parent: string): boolean {
  if (canMakeChildWith(parent, 'pids.max')) return true;
  try {
    writeFileSync(join(parent, 'cgroup.subtree_control'), '+pids');
  } catch {
    return false;
  }
  return canMakeChildWith(parent, 'pids.max');
}

let commandCount = 0;
let sweptParents = false;

/**
 * Removes the empty cgroups a server that died mid-command left behind (named `<pid>-…`, the pid
 * no longer running); one still holding a process is not empty, so rmdir leaves it.
 */
function sweepCgroupsOfGoneServers(support: CgroupSupport): void {
  for (const parent of new Set([support.pidsParent, support.killParent])) {
    if (parent === null) continue;
    let names: string[];
    try {
      names = readdirSync(parent, { withFileTypes: true }).filter((entry) => entry.isDirectory()).map((entry) => entry.name);
    } catch {
      continue;
    }
    for (const name of names) {
      const owner = Number(/^(\d+)-/.exec(name)?.[1]);
      if (Number.isInteger(owner) && owner !== process.pid && !processAlive(owner)) tryRemove(join(parent, name));
    }
  }
}
/** Tells this server's cgroups from those a crashed server with the same pid left behind. */
const serverToken = randomBytes(4).toString('hex');

/** Makes the cgroups for one command, with pids.max = maxProcesses; null when there is nothing usable. */
export function createCommandCgroups(support: CgroupSupport, maxProcesses: number): CommandCgroups | null {
  if (!sweptParents) {
    sweptParents = true;
    sweepCgroupsOfGoneServers(support);
  }
  for (const folder of [...notYetRemoved]) removeOrRetryLater(folder);
  commandCount += 1;
  const name = `${process.pid}-${serverToken}-${commandCount}`;
  const folders: string[] = [];
  let killFile: string | null = null;
  try {
    if (support.pidsParent !== null) {
      const folder = join(support.pidsParent, name);
      mkdirSync(folder);
      folders.push(folder);
      writeFileSync(join(folder, 'pids.max'), String(maxProcesses));
    }
    if (support.killParent !== null && support.killParent !== support.pidsParent) {
      const folder = join(support.killParent, name);
      mkdirSync(folder);
      folders.push(folder);
    }
    const cgroup2Folder = folders.find((folder) => existsSync(join(folder, 'cgroup.kill')));
    killFile = cgroup2Folder === undefined ? null : join(cgroup2Folder, 'cgroup.kill');
  } catch (error) {
    for (const folder of folders) tryRemove(folder);
    throw new Error(`could not make the cgroup that limits the command's processes: ${(error as Error).message}`);
  }
  if (folders.length === 0) return null;
  return new CommandCgroupFolders(folders, killFile);
}

class CommandCgroupFolders implements CommandCgroups {
  readonly procsFiles: readonly string[];

  constructor(
    private readonly folders: readonly string[],
    private readonly killFile: string | null,
  ) {
    this.procsFiles = folders.map((folder) => join(folder, 'cgroup.procs'));
  }

  hasRunningMembers(): boolean {
    return this.procsFiles.some((file) => memberPids(file).some(isRunning));
  }

  killAll(): void {
    if (this.killFile !== null) {
      try {
        writeFileSync(this.killFile, '1');
        return;
      } catch {
        // Fall through to killing the members one by one.
      }
    }
    // cgroup v1 has no cgroup.kill: a member may fork between reading the list and the kill, so read it again
    // until it comes back empty (pids.max bounds how many there can be).
    for (let round = 0; round < 10; round += 1) {
      const pids = this.procsFiles.flatMap(memberPids);
      if (pids.length === 0) return;
      for (const pid of pids) killQuietly(pid);
    }
  }

  remove(): void {
    for (const folder of this.folders) removeOrRetryLater(folder);
  }
}

function memberPids(procsFile: string): number[] {
  return (readText(procsFile) ?? '')
    .split('\n')
    .filter((line) => line !== '')
    .map(Number);
}

function killQuietly(pid: number): void {
  try {
    process.kill(pid, 'SIGKILL');
  } catch {
    // Already gone.
  }
}

/** Cgroups whose last member had not been reaped yet when their command ended. */
const notYetRemoved = new Set<string>();

function removeOrRetryLater(folder: string): void {
  try {
    rmdirSync(folder);
    notYetRemoved.delete(folder);
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') notYetRemoved.delete(folder);
    else notYetRemoved.add(folder);
  }
}

function tryRemove(folder: string): void {
  try {
    rmdirSync(folder);
  } catch {
    // Still has members (or already removed): an empty cgroup left behind costs nothing.
  }
}

function readText(path: string): string | null {
  try {
    return readFileSync(path, 'utf8');
  } catch {
    return null;
  }
}
