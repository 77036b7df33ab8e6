import { execFileSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import { chmodSync, existsSync, mkdirSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { auditPolicySchema, PermissionGate } from '@bulkhead/core';
import { connectInProcess, tempWorkspace, type TempWorkspace } from '@bulkhead/core/testing';
import { createGitServer } from '@bulkhead/git';
import { gitPolicySchema, type GitLimits } from '../src/policy.js';
import { git } from './helpers.js';

/** The built server, for tests that need a real process. */
export const GIT_CLI = fileURLToPath(new URL('../dist/cli.js', import.meta.url));

/** Every tool with arguments that make it work on a repository at `repo` whose HEAD has `a.txt`. */
export function everyReadCall(repo: string | undefined): [string, Record<string, unknown>][] {
  return [
    ['git_status', { repo }],
    ['git_log', { repo }],
    ['git_diff', { repo }],
    ['git_show', { repo, rev: 'HEAD' }],
    ['git_show_file', { repo, rev: 'HEAD', path: 'a.txt' }],
    ['git_blame', { repo, path: 'a.txt' }],
    ['git_refs', { repo, kind: 'all' }],
  ];
}

export interface Outcome {
  readonly isError: boolean;
  readonly text: string;
}

export interface AttackServer {
  /** The served root (a fresh temp folder unless one was given). */
  readonly ws: TempWorkspace;
  readonly controlDir: string;
  call(name: string, args?: Record<string, unknown>): Promise<Outcome & { structured: Record<string, unknown> | undefined }>;
  /** The outcome alone, for exact comparisons. */
  outcome(name: string, args?: Record<string, unknown>): Promise<Outcome>;
  close(): Promise<void>;
}

export interface AttackServerOptions {
  readonly policy?: Omit<Partial<Record<string, unknown>>, 'limits'> & { limits?: Partial<GitLimits> };
  /** Put the control-plane folder at `<root>/.bulkhead`, as the CLI does by default. */
  readonly controlInRoot?: boolean;
  /** Serve this existing folder instead of a fresh one (left in place by close). */
  readonly root?: string;
}

/** A TempWorkspace view of a folder that exists already. */
function existingWorkspace(root: string): TempWorkspace {
  const path = (relative: string) => join(root, relative);
  return {
    root,
    path,
    write: (relative, content) => {
      mkdirSync(dirname(path(relative)), { recursive: true });
      writeFileSync(path(relative), content);
      return path(relative);
    },
    mkdir: (relative) => {
      mkdirSync(path(relative), { recursive: true });
      return path(relative);
    },
    cleanup: () => undefined,
  };
}

/** The git server in-process on a fresh root, every call allowed. */
export async function startAttackServer(options: AttackServerOptions = {}): Promise<AttackServer> {
  const ws = options.root !== undefined ? existingWorkspace(options.root) : tempWorkspace({}, 'bulkhead-git-attack-');
  const control = options.controlInRoot ? undefined : tempWorkspace({}, 'bulkhead-git-attack-control-');
  const controlDir = control ? control.path('.bulkhead') : ws.path('.bulkhead');
  mkdirSync(controlDir, { recursive: true });
  writeFileSync(join(controlDir, 'permissions.yaml'), 'allow:\n  - git\n');
  const { limits, ...rest } = options.policy ?? {};
  const server = createGitServer({
    roots: [ws.root],
    controlDir,
    gate: { kind: 'self', permissions: PermissionGate.load(controlDir) },
    audit: auditPolicySchema.parse({ enabled: false }),
    policy: gitPolicySchema.parse({ ...rest, limits: { ...limits } }),
  });
  const { client, close } = await connectInProcess(server);
  const call = async (name: string, args: Record<string, unknown> = {}) => {
    const r = (await client.callTool({ name, arguments: args })) as { isError?: boolean; content: { type: string; text?: string }[]; structuredContent?: Record<string, unknown> };
    const text = r.content
      .filter((block) => block.type === 'text')
      .map((block) => block.text)
      .join('\n');
    return { isError: r.isError === true, text, structured: r.structuredContent };
  };
  return {
    ws,
    controlDir,
    call,
    outcome: async (name, args) => {
      const { isError, text } = await call(name, args);
      return { isError, text };
    },
    close: async () => {
      await close();
      await server.close();
      if (options.root === undefined) ws.cleanup();
      control?.cleanup();
    },
  };
}

/** A refusal, as the client sees it. */
export const refused = (text: string): Outcome => ({ isError: true, text });

/**
 * A program for a hostile repository to name: when run it appends `name` to `marker`, then acts
 * as `cat` (so a filter or pager that git waits on still ends) or fails (a transport, which would
 * wait for git's input forever).
 */
export function evilProgram(bin: string, name: string, marker: string, then: 'cat' | 'fail' = 'cat'): string {
  mkdirSync(bin, { recursive: true });
  const path = join(bin, name);
  writeFileSync(path, `#!/bin/sh\necho ${name} >> '${marker}'\n${then === 'cat' ? 'cat' : 'exit 1'}\n`);
  chmodSync(path, 0o755);
  return path;
}

/** The names the hostile programs wrote to the marker file, each once, sorted. */
export function markers(marker: string): string[] {
  return existsSync(marker) ? [...new Set(readFileSync(marker, 'utf8').split('\n').filter(Boolean))].sort() : [];
}

const sha256 = (bytes: Uint8Array) => createHash('sha256').update(bytes).digest('hex');

/** Every file under `dir` (recursive) with its SHA-256: two equal results mean nothing was added, removed or changed. */
export function tree(dir: string): Record<string, string> {
  const out: Record<string, string> = {};
  const walk = (relative: string) => {
    for (const entry of readdirSync(join(dir, relative), { withFileTypes: true }).sort((a, b) => a.name.localeCompare(b.name))) {
      const rel = relative === '' ? entry.name : `${relative}/${entry.name}`;
      if (entry.isDirectory()) walk(rel);
      else if (entry.isFile()) out[rel] = sha256(readFileSync(join(dir, rel)));
      else out[rel] = entry.isSymbolicLink() ? 'symlink' : 'other';
    }
  };
  walk('');
  return out;
}

/**
 * What a write could change in a repository with a working tree: every ref and its value, HEAD,
 * the index file's bytes, `git status`, and every file of the working tree and of `.git` (objects
 * included; with `internals: false`, the working tree only). Equal states before and after mean
 * not one byte was written.
 */
export function repoState(repo: string, options: { internals?: boolean } = {}): Record<string, unknown> {
  const files = tree(repo);
  if (options.internals === false) for (const path of Object.keys(files)) if (path.startsWith('.git/')) delete files[path];
  return {
    refs: git(repo, ['for-each-ref', '--format=%(refname) %(objectname) %(symref)']),
    head: readFileSync(join(repo, '.git/HEAD'), 'utf8'),
    index: existsSync(join(repo, '.git/index')) ? sha256(readFileSync(join(repo, '.git/index'))) : null,
    status: git(repo, ['status', '--porcelain=v1', '-z', '--untracked-files=all']),
    files,
  };
}

/** Processes whose command line holds `text` (read from /proc; none of them this test process). */
export function processesMentioning(text: string): string[] {
  const found: string[] = [];
  for (const pid of readdirSync('/proc').filter((name) => /^\d+$/.test(name))) {
    if (Number(pid) === process.pid) continue;
    try {
      const cmdline = readFileSync(`/proc/${pid}/cmdline`, 'utf8');
      if (cmdline.includes(text)) found.push(`${pid} ${cmdline.replaceAll('\0', ' ')}`);
    } catch {
      // gone while we looked
    }
  }
  return found;
}

/** The real git, found on PATH before any test puts a wrapper in front of it. */
export const REAL_GIT = execFileSync('sh', ['-c', 'command -v git'], { encoding: 'utf8' }).trim();

export interface GitCallLog {
  /** A folder holding a `git` that records its arguments, then runs the real git. */
  readonly bin: string;
  /** Every git run since the last clear, each as its argument list. */
  calls(): string[][];
  clear(): void;
}

/**
 * A `git` wrapper for PATH that records each run's arguments (NUL after each, one more NUL after
 * the last) and then execs the real git, so a test can prove git never ran, or what it got.
 */
export function gitCallLog(dir: string): GitCallLog {
  const bin = join(dir, 'logging-bin');
  const log = join(dir, 'git-calls');
  mkdirSync(bin, { recursive: true });
  writeFileSync(join(bin, 'git'), `#!/bin/bash\n{ printf '%s\\0' "$@"; printf '\\0'; } >> '${log}'\nexec '${REAL_GIT}' "$@"\n`);
  chmodSync(join(bin, 'git'), 0o755);
  writeFileSync(log, '');
  return {
    bin,
    calls: () =>
      readFileSync(log, 'utf8')
        .split('\0\0')
        .filter((record) => record !== '')
        .map((record) => record.replace(/\0$/, '').split('\0')),
    clear: () => writeFileSync(log, ''),
  };
}
