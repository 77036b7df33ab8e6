import { resolve } from 'node:path';
import { createToolServer, DEFAULT_OUTPUT_LIMITS, GitRepository, loadYamlFile, PathGlobSet, Roots, WRITE_PROTECTED_GLOBS, type CommonOptions, type ToolServer } from '@bulkhead/core';
import type { GitCapabilities } from './context.js';
import { RepositoryDenyRead } from './lib/deny-read.js';
import { GIT_POLICY_FILE, gitPolicySchema, type GitPolicy } from './policy.js';
import { commitChangeset } from './tools/commit_changeset.js';
import { gitBlame } from './tools/git_blame.js';
import { gitDiff } from './tools/git_diff.js';
import { gitLog } from './tools/git_log.js';
import { gitRefs } from './tools/git_refs.js';
import { gitShow } from './tools/git_show.js';
import { gitShowFile } from './tools/git_show_file.js';
import { gitStatus } from './tools/git_status.js';

export const GIT_VERSION = '0.1.0';
/** The tools that only read. */
export const gitReadTools = [gitStatus, gitLog, gitDiff, gitShow, gitShowFile, gitBlame, gitRefs];
/** Every tool; commit_changeset is registered only with `allow_write: true`. */
export const gitTools = [...gitReadTools, commitChangeset];

export type GitServerOptions = Pick<CommonOptions, 'roots' | 'controlDir' | 'gate' | 'audit'> & {
  /** Overrides git_policy.yaml (tests build policies in code). */
  readonly policy?: GitPolicy;
};

export function loadGitPolicy(controlDir: string): GitPolicy {
  return loadYamlFile(controlDir, GIT_POLICY_FILE, gitPolicySchema).value;
}

/** The git server: reads repositories inside the roots; writes commits only when the policy allows. */
export function createGitServer(options: GitServerOptions): ToolServer {
  const policy = options.policy ?? loadGitPolicy(options.controlDir);
  const roots = [...options.roots, ...policy.roots.map((root) => resolve(options.roots[0]!, root))];
  const paths = new Roots(roots, { controlDir: options.controlDir, denyRead: [], protectWrite: policy.protect, protectWriteSource: GIT_POLICY_FILE });
  const runLimits = { timeoutMs: policy.limits.timeout_ms, maxOutputBytes: policy.limits.max_read_bytes };
  return createToolServer<GitCapabilities>({
    namespace: 'git',
    version: GIT_VERSION,
    instructions: `Reads git repositories under ${paths.real.join(', ')} (repo defaults to ${paths.primary}). Paths inside a repository are relative to its top folder.${policy.allow_write ? ' commit_changeset writes commits without touching the working tree.' : ''}`,
    tools: policy.allow_write ? gitTools : gitReadTools,
    policy,
    capabilities: {
      paths,
      limits: policy.limits,
      openRepository: (repo) => GitRepository.open(paths, repo, runLimits),
      denyRead: new RepositoryDenyRead(policy.deny_read, paths.controlDir),
      lockfiles: new PathGlobSet(policy.lockfiles),
      writeProtected: new PathGlobSet([...WRITE_PROTECTED_GLOBS, ...policy.protect], { ignoreCase: true }),
      committer: policy.committer,
    },
    controlDir: options.controlDir,
    gate: options.gate,
    audit: options.audit,
    limits: { ...DEFAULT_OUTPUT_LIMITS, maxOutputBytes: policy.limits.max_output_bytes },
  });
}
