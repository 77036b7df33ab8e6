import { execFileSync } from 'node:child_process';
import { mkdirSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { auditPolicySchema, PermissionGate } from '@bulkhead/core';
import { connectInProcess, tempWorkspace, toolCall, type TempWorkspace, type ToolCall } from '@bulkhead/core/testing';
import { createGitServer } from '@bulkhead/git';
import { gitPolicySchema, type GitLimits } from '../src/policy.js';

/** The environment the tests' own git runs in: no user or system config, fixed identities and dates. */
const TEST_GIT_ENV = {
  PATH: process.env['PATH'] ?? '/usr/bin:/bin',
  HOME: '/nonexistent',
  GIT_CONFIG_NOSYSTEM: '1',
  GIT_CONFIG_GLOBAL: '/dev/null',
  GIT_AUTHOR_NAME: 'Ada Tester',
  GIT_AUTHOR_EMAIL: 'ada@example.com',
  GIT_COMMITTER_NAME: 'Ada Tester',
  GIT_COMMITTER_EMAIL: 'ada@example.com',
  LC_ALL: 'C',
};

/** Runs the real git in `cwd` for a test's setup or check; returns stdout. */
export function git(cwd: string, args: readonly string[], options: { input?: string | Uint8Array; env?: Record<string, string> } = {}): string {
  return execFileSync('git', ['-c', 'init.defaultBranch=main', ...args], {
    cwd,
    env: { ...TEST_GIT_ENV, ...options.env },
    input: options.input,
    encoding: 'utf8',
    stdio: ['pipe', 'pipe', 'pipe'],
    maxBuffer: 256 * 1024 * 1024,
  });
}

/** Writes files under `dir` (relative path → content); paths may be Buffers for names that are not UTF-8. */
export function writeFiles(dir: string, files: Record<string, string | Uint8Array>): void {
  for (const [relative, content] of Object.entries(files)) {
    const file = join(dir, relative);
    mkdirSync(dirname(file), { recursive: true });
    writeFileSync(file, content);
  }
}

/** A file whose name is given as bytes (names that are not UTF-8); returns the name as git tools show it. */
export function writeRawName(dir: string, name: readonly number[], content: string | Uint8Array): Buffer {
  const bytes = Buffer.from(name);
  writeFileSync(Buffer.concat([Buffer.from(`${dir}/`), bytes]), content);
  return bytes;
}

/** `bad\xff.txt`: a name with one byte that is not UTF-8, as bytes. */
export const ODD_NAME = [0x62, 0x61, 0x64, 0xff, 0x2e, 0x74, 0x78, 0x74];
/** The same name as the tools show it and accept it. */
export const ODD_NAME_SHOWN = 'bad\\xff.txt';

/** A new repository in `dir` with `main` checked out and no commits. */
export function initRepo(dir: string): string {
  mkdirSync(dir, { recursive: true });
  git(dir, ['init', '-q']);
  return dir;
}

/** Writes `files`, stages everything and commits; returns the new commit id. */
export function commit(dir: string, message: string, files: Record<string, string | Uint8Array> = {}, date?: string): string {
  writeFiles(dir, files);
  git(dir, ['add', '-A']);
  const env: Record<string, string> = date ? { GIT_AUTHOR_DATE: date, GIT_COMMITTER_DATE: date } : {};
  git(dir, ['commit', '-q', '--allow-empty', '-m', message], { env });
  return git(dir, ['rev-parse', 'HEAD']).trim();
}

export type PolicyOverrides = Omit<Partial<Record<string, unknown>>, 'limits'> & { limits?: Partial<GitLimits> };

export interface GitHarness {
  /** The workspace the server serves (its only root); the repository is its `repo/` folder unless told otherwise. */
  readonly ws: TempWorkspace;
  readonly controlDir: string;
  readonly client: Awaited<ReturnType<typeof connectInProcess>>['client'];
  call<S = Record<string, unknown>>(name: string, args?: Record<string, unknown>): Promise<ToolCall<S>>;
  close(): Promise<void>;
}

export interface StartOptions {
  readonly policy?: PolicyOverrides;
  /** Serve an existing workspace (not cleaned up by close). */
  readonly ws?: TempWorkspace;
  /** Put the control-plane folder inside the workspace (`.bulkhead/`), as `bulkhead start` does. */
  readonly controlInside?: boolean;
}

/** Starts the git server in-process on a workspace, with a connected client; every call is allowed. */
export async function startGit(options: StartOptions = {}): Promise<GitHarness> {
  const ws = options.ws ?? tempWorkspace({}, 'bulkhead-git-');
  const control = tempWorkspace({}, 'bulkhead-git-control-');
  const controlDir = options.controlInside ? ws.path('.bulkhead') : control.path('.bulkhead');
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
  return {
    ws,
    controlDir,
    client,
    call: async <S,>(name: string, args: Record<string, unknown> = {}) => toolCall<S>(await client.callTool({ name, arguments: args })),
    close: async () => {
      await close();
      await server.close();
      if (!options.ws) ws.cleanup();
      control.cleanup();
    },
  };
}
