import { spawnSync } from 'node:child_process';
import { existsSync, lstatSync, realpathSync } from 'node:fs';
import { homedir } from 'node:os';
import { findExecutable } from './executables.js';
import { emptySource, NOTHING_HELD, type HeldPaths } from './held.js';
import type { SandboxSpec } from './types.js';

export type SandboxProbe =
  | { readonly available: true; readonly version: string; /** The bwrap to run (absolute); '' for none. */ readonly executable: string }
  | { readonly available: false; readonly reason: string; readonly fix: string };

/** Refused command: the configured sandbox cannot run here, so nothing runs at all. */
export class SandboxUnavailableError extends Error {
  constructor(readonly probe: Extract<SandboxProbe, { available: false }>) {
    super(`the bubblewrap sandbox is unavailable: ${probe.reason}. Fix: ${probe.fix}`);
    this.name = 'SandboxUnavailableError';
  }
}

const SET_NONE = 'or set sandbox: none in shell_policy.yaml (commands then run unconfined)';

const probes = new Map<string, SandboxProbe>();

/**
 * Whether `kind` can contain commands here. For bubblewrap this runs bwrap once with the namespaces the
 * sandbox uses (the result is kept per searchPath), so a kernel without user namespaces is caught before the first command.
 */
export function probeSandbox(kind: SandboxSpec['kind'], searchPath: string | undefined = process.env['PATH']): SandboxProbe {
  if (kind === 'none') return { available: true, version: 'none', executable: '' };
  const key = searchPath ?? '';
  let probe = probes.get(key);
  if (probe === undefined) {
    probe = probeBubblewrap(searchPath);
    probes.set(key, probe);
  }
  return probe;
}

function probeBubblewrap(searchPath: string | undefined): SandboxProbe {
  if (process.platform !== 'linux') {
    return { available: false, reason: `bubblewrap runs only on Linux (this is ${process.platform})`, fix: `set sandbox: none in shell_policy.yaml (commands then run unconfined)` };
  }
  const executable = findExecutable('bwrap', searchPath);
  if (executable === null) {
    return { available: false, reason: 'bubblewrap (bwrap) is not installed', fix: `install bubblewrap (apt-get install bubblewrap) ${SET_NONE}` };
  }
  const version = spawnSync(executable, ['--version'], { encoding: 'utf8', timeout: 5000 });
  const trial = spawnSync(executable, ['--ro-bind', '/', '/', '--unshare-all', ...unprivilegedUser(), '--die-with-parent', '--new-session', 'true'], {
    encoding: 'utf8',
    timeout: 5000,
  });
  if (trial.status !== 0) {
    const said = `${trial.stderr ?? ''}`.trim() || trial.error?.message || `exit ${String(trial.status)}`;
    return {
      available: false,
      reason: `bwrap cannot create its namespaces (${said}); user namespaces are probably disabled`,
      fix: `allow unprivileged user namespaces (sysctl kernel.unprivileged_userns_clone=1; on Ubuntu 23.10+ kernel.apparmor_restrict_unprivileged_userns=0 or an AppArmor profile for bwrap) ${SET_NONE}`,
    };
  }
  return { available: true, version: `${version.stdout ?? ''}`.trim() || 'bubblewrap', executable };
}

/**
 * bwrap arguments (without the bwrap executable and the command) for `spec`, starting in cwd.
 * Later mounts cover earlier ones, so the order is the policy: the system read-only, then the private and
 * hidden folders emptied, then the roots made writable again, then the control-plane folders read-only again.
 */
export function buildBwrapArgs(spec: SandboxSpec, cwd: string, held: HeldPaths = NOTHING_HELD): string[] {
  const tmpfs = (folder: string) => [...(spec.tmpfsBytes !== undefined ? ['--size', String(spec.tmpfsBytes)] : []), '--tmpfs', folder];
  // bwrap covers /proc/sys only when the user cannot write it anyway; a uid that is root on the host can
  // (sysctls check the uid, not capabilities: core_pattern would run a program as root outside the sandbox).
  const args = ['--ro-bind', '/', '/', '--dev', '/dev', ...tmpfs('/dev/shm'), '--proc', '/proc', '--ro-bind', '/proc/sys', '/proc/sys'];
  // A private /tmp and /var/tmp; /run emptied because a read-only bind does not stop connecting to the
  // sockets in it (docker.sock, the D-Bus system bus, agents).
  args.push(...tmpfs('/tmp'), ...tmpfs('/run'));
  if (lstatSync('/var/tmp', { throwIfNoEntry: false })?.isDirectory()) args.push(...tmpfs('/var/tmp'));
  // /etc/resolv.conf often links into /run (systemd-resolved, NetworkManager): name lookups need it back.
  const resolver = spec.network ? resolverFile() : null;
  if (resolver?.startsWith('/run/')) args.push('--ro-bind', resolver, resolver);
  for (const folder of hiddenFolders(spec)) args.push(...tmpfs(folder));
  for (const folder of spec.visible ?? []) args.push('--ro-bind', folder, folder);
  for (const root of spec.writable) args.push('--bind', root, root);
  // Only those inside a root need it: the rest is read-only already, or hidden (binding it would show it again).
  for (const folder of spec.readOnly.filter((path) => spec.writable.some((root) => isInside(path, root)))) {
    if (existsSync(folder)) args.push('--ro-bind', folder, folder);
    // A control-plane folder not made yet must not be made from inside: an empty read-only tmpfs holds its place
    // (bwrap leaves the empty folder behind on the host as the mount point).
    else args.push('--tmpfs', folder, '--remount-ro', folder);
  }
  for (const folder of (spec.secret ?? []).filter((path) => existsSync(path))) args.push('--tmpfs', folder, '--remount-ro', folder);
  // What becomes code outside the sandbox later (see held.ts): read-only where it is, an empty read-only folder where it is not yet.
  for (const path of held.existing) args.push('--ro-bind', path, path);
  for (const { path, kind } of held.placeholders) args.push('--ro-bind', emptySource(kind), path);
  args.push('--unshare-all');
  if (spec.network) args.push('--share-net');
  args.push(...unprivilegedUser());
  // --die-with-parent: the sandbox goes when bwrap's parent does. --new-session: the command cannot push
  // keystrokes into the server's terminal (TIOCSTI). bwrap stays the PID namespace's init (no --as-pid-1),
  // so bash is not pid 1 (which would ignore SIGTERM) and every process in the namespace dies when the command ends.
  args.push('--die-with-parent', '--new-session', '--chdir', cwd);
  return args;
}

/** The uid and gid a command runs as when the server is root: unprivileged in the sandbox, and not the overflow uid (65534) that files of unmapped users show. */
export const SANDBOX_ID = 1000;

/**
 * As root bwrap keeps every capability in the sandbox (a command could remount its read-only binds
 * writable, or unmount what hides files). So as root: a user namespace of its own in which the command is
 * an ordinary uid with no capability at all, and no further user namespace (where it would get them back).
 * As another user bwrap already drops every capability and maps the user as it is.
 */
export function unprivilegedUser(uid: number | undefined = process.getuid?.()): string[] {
  if (uid !== 0) return [];
  return ['--unshare-user', '--disable-userns', '--uid', String(SANDBOX_ID), '--gid', String(SANDBOX_ID), '--cap-drop', 'ALL'];
}

function resolverFile(): string | null {
  try {
    return realpathSync('/etc/resolv.conf');
  } catch {
    return null;
  }
}

/** The folders to empty: those asked for (default: the server user's home, its keys and tokens) that exist and are not / itself. */
function hiddenFolders(spec: SandboxSpec): string[] {
  const asked = spec.hidden ?? [homedir()];
  return asked.filter((folder) => folder !== '/' && !isInside(folder, '/tmp') && !isInside(folder, '/run') && existsSync(folder));
}

function isInside(path: string, folder: string): boolean {
  return folder === '/' || path === folder || path.startsWith(`${folder}/`);
}
