import { execFileSync } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { probeSandbox, SANDBOX_ID, unprivilegedUser } from '../src/run/sandbox.js';
import type { SandboxSpec } from '../src/run/types.js';
import { startShell } from './helpers.js';
import { runContained } from './sandbox-helpers.js';

// As root bwrap would keep every capability in the sandbox. These tests must run where the suite runs as root:
// in CI they fail (rather than skip) when bwrap cannot run.
const asRoot = process.getuid?.() === 0;
const mustRun = asRoot && process.env['CI'] === 'true';
const runs = asRoot && (probeSandbox('bubblewrap').available || mustRun);

const outer = mkdtempSync(join(tmpdir(), 'bulkhead-root-'));
const root = join(outer, 'root');
const controlPlane = join(root, '.bulkhead');
const hidden = join(outer, 'hidden');
mkdirSync(join(root, '.git', 'hooks'), { recursive: true });
mkdirSync(controlPlane);
mkdirSync(hidden);
writeFileSync(join(controlPlane, 'permissions.yaml'), 'deny:\n  - shell\n');
writeFileSync(join(root, '.git', 'hooks', 'pre-commit'), '#!/bin/sh\nexit 0\n');
writeFileSync(join(root, '.git', 'config'), '[core]\n');
writeFileSync(join(hidden, 'secret.txt'), 'host secret\n');
afterAll(() => rmSync(outer, { recursive: true, force: true }));

const spec: SandboxSpec = { kind: 'bubblewrap', network: false, writable: [root], readOnly: [controlPlane], hidden: [hidden] };

const sandboxed = (command: string) => runContained(command, spec, root);

/** Runs each attempt in its own sandbox and says, per attempt, whether it succeeded (exit 0). */
async function attempts(commands: Record<string, string>): Promise<Record<string, string>> {
  const said: Record<string, string> = {};
  for (const [name, command] of Object.entries(commands)) {
    const result = await sandboxed(`{ ${command} ; } >/dev/null 2>&1 && echo ESCAPED || echo refused`);
    said[name] = result.output.trim();
  }
  return said;
}

const hostFiles = (): Record<string, string> => ({
  permissions: readFileSync(join(controlPlane, 'permissions.yaml'), 'utf8'),
  hook: readFileSync(join(root, '.git', 'hooks', 'pre-commit'), 'utf8'),
  config: readFileSync(join(root, '.git', 'config'), 'utf8'),
});

describe('unprivilegedUser', () => {
  it('as root: a user namespace of its own, an ordinary uid, no capability, no further user namespace', () => {
    expect(unprivilegedUser(0)).toEqual(['--unshare-user', '--disable-userns', '--uid', String(SANDBOX_ID), '--gid', String(SANDBOX_ID), '--cap-drop', 'ALL']);
    expect(unprivilegedUser(1000)).toEqual([]);
  });
});

describe.runIf(runs)('the sandbox of a server run as root', () => {
  it('runs the command as an unprivileged uid with no capability in any set', async () => {
    const result = await sandboxed("id -u; id -g; grep -E '^Cap(Inh|Prm|Eff|Bnd|Amb):' /proc/self/status; grep NoNewPrivs /proc/self/status");
    expect(result.output).toBe(
      [String(SANDBOX_ID), String(SANDBOX_ID), 'CapInh:\t0000000000000000', 'CapPrm:\t0000000000000000', 'CapEff:\t0000000000000000', 'CapBnd:\t0000000000000000', 'CapAmb:\t0000000000000000', 'NoNewPrivs:\t1', ''].join('\n'),
    );
    if (existsSync('/usr/sbin/capsh') || existsSync('/sbin/capsh')) {
      expect((await sandboxed('capsh --print | grep -E "^(Current:|Bounding set)"')).output).toBe('Current: =\nBounding set =\n');
    }
  });

  it('refuses every mount, remount, unmount, chroot and pivot_root', async () => {
    const before = hostFiles();
    expect(
      await attempts({
        remountControlPlane: `mount -o remount,bind,rw ${controlPlane} && echo 'allow: [shell]' > ${controlPlane}/permissions.yaml`,
        remountRoot: 'mount -o remount,rw / && touch /etc/bulkhead-escaped',
        remountBindRoot: 'mount -o remount,bind,rw / && touch /etc/bulkhead-escaped',
        remountHooks: `mount -o remount,bind,rw ${root}/.git/hooks && echo pwned > ${root}/.git/hooks/pre-commit`,
        bindOverEtc: `mount --bind ${root} /etc`,
        bindOverControlPlane: `mount --bind /tmp ${controlPlane}`,
        rbind: `mount --rbind / ${root}`,
        tmpfsOverHooks: `mount -t tmpfs none ${root}/.git/hooks`,
        procMount: `mkdir -p ${root}/p && mount -t proc proc ${root}/p`,
        umountControlPlane: `umount ${controlPlane}`,
        lazyUmountControlPlane: `umount -l ${controlPlane}`,
        umountHidden: `umount ${hidden} && cat ${hidden}/secret.txt`,
        umountTmp: 'umount /tmp',
        umountProcSys: 'umount /proc/sys',
        chroot: 'chroot / true',
        pivotRoot: `pivot_root ${root} ${root}`,
      }),
    ).toEqual(Object.fromEntries(Object.keys({ remountControlPlane: 0, remountRoot: 0, remountBindRoot: 0, remountHooks: 0, bindOverEtc: 0, bindOverControlPlane: 0, rbind: 0, tmpfsOverHooks: 0, procMount: 0, umountControlPlane: 0, lazyUmountControlPlane: 0, umountHidden: 0, umountTmp: 0, umountProcSys: 0, chroot: 0, pivotRoot: 0 }).map((name) => [name, 'refused'])));
    expect(hostFiles()).toEqual(before);
    expect(existsSync('/etc/bulkhead-escaped')).toBe(false);
  });

  it('refuses new namespaces, raw and packet sockets, device nodes, sysctls and privileged calls', async () => {
    const python = (code: string) => `python3 -c ${JSON.stringify(code)}`;
    const results = await attempts({
      unshareUser: 'unshare -U true',
      unshareUserRoot: 'unshare -Ur true',
      unshareMount: 'unshare -m true',
      unshareNet: 'unshare -n true',
      unsharePid: 'unshare -pf true',
      nsenter: 'nsenter -t 1 -m true',
      rawSocket: python('import socket; socket.socket(socket.AF_INET, socket.SOCK_RAW, socket.IPPROTO_ICMP)'),
      packetSocket: python('import socket; socket.socket(socket.AF_PACKET, socket.SOCK_RAW)'),
      ping: 'command -v ping && ping -c 1 -W 1 127.0.0.1',
      mknod: `mknod ${root}/disk b 8 0`,
      chownOther: `touch ${root}/owned && chown 1:1 ${root}/owned`,
      // Written back unchanged: a sysctl checks the uid (root on the host), not a capability.
      sysctlGlobal: 'v=$(cat /proc/sys/vm/swappiness) && echo "$v" > /proc/sys/vm/swappiness',
      sysctlKernel: 'v=$(cat /proc/sys/kernel/core_pattern) && echo "$v" > /proc/sys/kernel/core_pattern',
      sysrq: 'echo h > /proc/sysrq-trigger',
      setHostname: 'hostname bulkhead-escaped',
      setTime: 'date -s @0',
      setuidRoot: python('import os; os.setuid(0)'),
      setgroups: python('import os; os.setgroups([0])'),
      kernelModule: 'modprobe dummy',
      reboot: python('import ctypes; assert ctypes.CDLL(None).reboot(0x4321fedc) == 0'),
    });
    expect(results).toEqual(Object.fromEntries(Object.keys(results).map((name) => [name, 'refused'])));
  });

  it('refuses writes to read-only binds, the control-plane folder and the system, and keeps the host files', async () => {
    const before = hostFiles();
    const results = await attempts({
      etc: 'touch /etc/bulkhead-escaped',
      usr: 'touch /usr/bulkhead-escaped',
      permissions: `echo 'allow: [shell]' > ${controlPlane}/permissions.yaml`,
      removeControlPlane: `rm -rf ${controlPlane}`,
      renameControlPlane: `mv ${controlPlane} ${root}/moved`,
      hook: `echo pwned > ${root}/.git/hooks/pre-commit`,
      newHook: `echo pwned > ${root}/.git/hooks/post-checkout`,
      gitConfig: `echo '[core] fsmonitor = touch /tmp/x' >> ${root}/.git/config`,
      renameHooks: `mv ${root}/.git/hooks ${root}/.git/hooks-old`,
      chmodControlPlane: `chmod 777 ${controlPlane}`,
      hiddenIsEmpty: `cat ${hidden}/secret.txt`,
    });
    expect(results).toEqual(Object.fromEntries(Object.keys(results).map((name) => [name, 'refused'])));
    expect(hostFiles()).toEqual(before);
    // The root itself stays writable, and what the command makes there belongs to the server user.
    expect((await sandboxed('echo made > made.txt && cat made.txt')).output).toBe('made\n');
    expect(readFileSync(join(root, 'made.txt'), 'utf8')).toBe('made\n');
  });
});

describe.runIf(runs)('run_in_sandbox as root', () => {
  it('keeps the roots read-only: no remount, no unmount, no write', async () => {
    const h = await startShell({ files: { 'a.txt': 'v1\n' } });
    try {
      const git = (...args: string[]) => execFileSync('git', ['-c', 'user.name=t', '-c', 'user.email=t@t', ...args], { cwd: h.ws.root, encoding: 'utf8' });
      git('init', '-q');
      git('add', 'a.txt');
      git('commit', '-qm', 'first');
      const rootPath = h.ws.root;
      const command = [
        `mount -o remount,bind,rw ${rootPath} 2>/dev/null && echo REMOUNTED`,
        `umount ${rootPath} 2>/dev/null && echo UNMOUNTED`,
        `{ echo pwned > ${rootPath}/a.txt; } 2>/dev/null && echo WROTE`,
        `{ echo pwned > ${rootPath}/.git/hooks/pre-commit; } 2>/dev/null && echo HOOKED`,
        `{ echo 'allow: [shell]' > ${rootPath}/.bulkhead/permissions.yaml; } 2>/dev/null && echo ALLOWED`,
        'grep CapEff /proc/self/status',
        'echo checkout-writable > b.txt && cat b.txt',
      ].join('; ');
      const result = await h.call('run_in_sandbox', { command });
      expect(result.text.split('\n').slice(1, 3)).toEqual(['CapEff:\t0000000000000000', 'checkout-writable']);
      expect(readFileSync(h.ws.path('a.txt'), 'utf8')).toBe('v1\n');
      expect(existsSync(h.ws.path('.git/hooks/pre-commit'))).toBe(false);
      expect(readFileSync(h.ws.path('.bulkhead/permissions.yaml'), 'utf8')).toBe('allow:\n  - shell\n');
    } finally {
      await h.close();
    }
  });
});
