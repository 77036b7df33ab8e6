import { spawn } from 'node:child_process';
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { dirname } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { describe, expect, it } from 'vitest';
import { cgroupSupport, createCommandCgroups } from '../src/run/cgroup.js';

function processesWith(marker: string): number[] {
  return readdirSync('/proc')
    .filter((entry) => {
      try {
        return /^\d+$/.test(entry) && !/^State:\s+Z/m.test(readFileSync(`/proc/${entry}/status`, 'utf8')) && readFileSync(`/proc/${entry}/cmdline`, 'utf8').includes(marker);
      } catch {
        return false;
      }
    })
    .map(Number);
}

async function until(condition: () => boolean): Promise<void> {
  for (let waited = 0; !condition() && waited < 3000; waited += 20) await sleep(20);
}

const { pidsParent } = cgroupSupport();

describe.runIf(pidsParent !== null)('per-command cgroups', () => {
  it('limit the processes and kill every member, even one that left the process group, without cgroup.kill', async () => {
    // Only the pids hierarchy: on cgroup v1 that means no cgroup.kill, so members are killed one by one.
    const cgroups = createCommandCgroups({ pidsParent, killParent: null }, 4);
    if (cgroups === null) throw new Error('no cgroup made');
    const [procsFile] = cgroups.procsFiles;
    const marker = `bulkhead-cgroup-${process.pid}-${Math.random().toString(36).slice(2)}`;
    const script = `echo $$ > ${procsFile}; ( setsid bash -c 'exec -a ${marker} sleep 30' & ); for i in 1 2 3 4 5; do bash -c 'exec -a ${marker} sleep 30' & done; wait`;
    const output: Buffer[] = [];
    const child = spawn('bash', ['-c', script], { stdio: ['ignore', 'ignore', 'pipe'] });
    child.stderr.on('data', (chunk: Buffer) => output.push(chunk));
    try {
      // The leader (its command line has the marker too), the escaped sleep and two more sleeps fill the 4; the other forks fail.
      await until(() => processesWith(marker).length === 4 && Buffer.concat(output).toString().includes('fork: retry'));
      expect(processesWith(marker)).toHaveLength(4);
      expect(Buffer.concat(output).toString()).toContain('fork: retry: Resource temporarily unavailable');
      expect(cgroups.hasRunningMembers()).toBe(true);

      cgroups.killAll();
      await until(() => !cgroups.hasRunningMembers());
      expect(cgroups.hasRunningMembers()).toBe(false);
      expect(processesWith(marker)).toEqual([]);
    } finally {
      for (const pid of processesWith(marker)) process.kill(pid, 'SIGKILL');
      child.kill('SIGKILL');
    }
    await until(() => child.exitCode !== null || child.signalCode !== null);
    cgroups.remove();
    expect(existsSync(dirname(procsFile ?? '/'))).toBe(false);
  });
});
