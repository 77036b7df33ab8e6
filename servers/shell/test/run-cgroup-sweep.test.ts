import { existsSync, mkdirSync, rmdirSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { processAlive } from '@bulkhead/core';
import { cgroupSupport, createCommandCgroups } from '../src/run/cgroup.js';

const { pidsParent } = cgroupSupport();

/** A pid no process has now: the cgroup named after it was left by a server that died. */
function deadPid(): number {
  for (let pid = 4_000_000; ; pid += 1) if (!processAlive(pid)) return pid;
}

describe.runIf(pidsParent !== null)('cgroups left by a server that died', () => {
  it('are removed when this server makes its first command cgroup; live ones are left alone', () => {
    const stale = join(pidsParent!, `${deadPid()}-deadbeef-1`);
    const live = join(pidsParent!, `${process.ppid}-cafef00d-1`);
    mkdirSync(stale);
    mkdirSync(live);
    try {
      // The first cgroup this process makes sweeps the parent (this file runs in a process of its own).
      const cgroups = createCommandCgroups({ pidsParent, killParent: null }, 8);
      cgroups?.remove();
      expect(existsSync(stale)).toBe(false);
      expect(existsSync(live)).toBe(true);
    } finally {
      for (const folder of [stale, live]) if (existsSync(folder)) rmdirSync(folder);
    }
  });
});
