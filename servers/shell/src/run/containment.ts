import { readdirSync, readFileSync, statSync } from 'node:fs';
import { cgroupSupport } from './cgroup.js';
import { probeSandbox } from './sandbox.js';
import type { SandboxSpec } from './types.js';

/** How `maxProcesses` is enforced on this machine. */
export type ProcessLimit =
  | { readonly kind: 'pids-cgroup' }
  /** RLIMIT_NPROC counts every process and thread of the real uid, so the limit is set to (what the uid runs now + maxProcesses). */
  | { readonly kind: 'rlimit-nproc' }
  | { readonly kind: 'none'; readonly reason: string };

export function processLimit(): ProcessLimit {
  if (cgroupSupport().pidsParent !== null) return { kind: 'pids-cgroup' };
  if (process.getuid?.() !== 0) return { kind: 'rlimit-nproc' };
  return { kind: 'none', reason: 'root is exempt from RLIMIT_NPROC and no writable pids cgroup was found' };
}

/** The RLIMIT_NPROC value that leaves room for maxProcesses more processes of the current uid. */
export function nprocLimitFor(maxProcesses: number): number {
  return tasksOfCurrentUser() + maxProcesses;
}

function tasksOfCurrentUser(): number {
  const uid = process.getuid?.();
  let tasks = 0;
  for (const entry of readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      if (statSync(`/proc/${entry}`).uid !== uid) continue;
      const threads = /^Threads:\s+(\d+)$/m.exec(readFileSync(`/proc/${entry}/status`, 'utf8'));
      tasks += Number(threads?.[1] ?? 1);
    } catch {
      // Ended while we looked.
    }
  }
  return tasks;
}

/**
 * One line for the server's start-up message and instructions, e.g.
 * "bubblewrap sandbox, no network, processes limited to 256 by a pids cgroup".
 */
export function describeContainment(spec: SandboxSpec, maxProcesses: number): string {
  const parts: string[] = [];
  if (spec.kind === 'bubblewrap') {
    const probe = probeSandbox('bubblewrap');
    if (!probe.available) return `commands refused: the bubblewrap sandbox is unavailable (${probe.reason}); fix: ${probe.fix}`;
    parts.push('bubblewrap sandbox', spec.network ? 'network allowed' : 'no network');
  } else {
    parts.push('no sandbox (sandbox: none): commands can read and change whatever the server user can');
  }
  const limit = processLimit();
  if (limit.kind === 'pids-cgroup') parts.push(`processes limited to ${maxProcesses} by a pids cgroup`);
  else if (limit.kind === 'rlimit-nproc') parts.push(`processes limited to about ${maxProcesses} by RLIMIT_NPROC (counted with every process of the server user)`);
  else parts.push(`processes not limited (${limit.reason})`);
  if (spec.kind === 'none' && cgroupSupport().pidsParent === null && cgroupSupport().killParent === null) {
    parts.push('a process that leaves the process group (setsid) outlives its command');
  }
  return parts.join(', ');
}
