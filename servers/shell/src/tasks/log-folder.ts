import { chmodSync, lstatSync, mkdirSync, mkdtempSync, readdirSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { processAlive } from '@bulkhead/core';

/**
 * Creates this server's own log folder, `<stateDir>/tasks/<pid>-<random>/`, mode 0700.
 *
 * Task ids restart at bash_1 with every server, and two servers may share a state folder, so each
 * server writes into a folder of its own instead of `<stateDir>/tasks/` itself; folders left by
 * servers that are gone are removed here, which keeps the state folder bounded across restarts.
 */
export function createLogFolder(stateDir: string): string {
  const tasksDir = join(stateDir, 'tasks');
  mkdirSync(tasksDir, { recursive: true, mode: 0o700 });
  const stat = lstatSync(tasksDir);
  // A symlink or someone else's folder here would send the logs where that person chose.
  if (!stat.isDirectory() || stat.uid !== process.getuid?.()) {
    throw new Error(`${tasksDir} is not a folder owned by this user; remove it so the shell server can create it`);
  }
  chmodSync(tasksDir, 0o700);
  removeFoldersOfEndedServers(tasksDir);
  return mkdtempSync(join(tasksDir, `${process.pid}-`));
}

function removeFoldersOfEndedServers(tasksDir: string): void {
  for (const entry of readdirSync(tasksDir, { withFileTypes: true })) {
    const pid = Number(/^(\d+)-/.exec(entry.name)?.[1]);
    if (!entry.isDirectory() || !Number.isInteger(pid) || processAlive(pid)) continue;
    rmSync(join(tasksDir, entry.name), { recursive: true, force: true });
  }
}
