import { resolve } from 'node:path';
import { createToolServer, DEFAULT_OUTPUT_LIMITS, loadYamlFile, privateControlFolderGlobs, Roots, type CommonOptions, type ToolServer } from '@bulkhead/core';
import type { FsCapabilities } from './context.js';
import { chooseSearchEngine } from './lib/search-engine.js';
import { DenyInodes } from './lib/deny-inodes.js';
import { FS_POLICY_FILE, fsPolicySchema, type FsPolicy } from './policy.js';
import { globFiles } from './tools/glob_files.js';
import { grep } from './tools/grep.js';
import { listFiles } from './tools/list_files.js';
import { readFile } from './tools/read_file.js';

export const FS_VERSION = '0.1.0';
export const fsTools = [readFile, grep, globFiles, listFiles];

export type FsServerOptions = Pick<CommonOptions, 'roots' | 'controlDir' | 'gate' | 'audit'> & {
  /** Overrides fs_policy.yaml (tests build policies in code). */
  readonly policy?: FsPolicy;
};

export function loadFsPolicy(controlDir: string): FsPolicy {
  return loadYamlFile(controlDir, FS_POLICY_FILE, fsPolicySchema).value;
}

/** The read-only fs server: no side effects until a client connects. */
export function createFsServer(options: FsServerOptions): ToolServer {
  const policy = options.policy ?? loadFsPolicy(options.controlDir);
  const roots = [...options.roots, ...policy.roots.map((root) => resolve(options.roots[0]!, root))];
  const paths = new Roots(roots, { controlDir: options.controlDir, denyRead: policy.deny_read, denyReadSource: FS_POLICY_FILE });
  // The control plane's private folders (keys/, approvals/) are kept from searches whatever deny_read says.
  const privateRead = privateControlFolderGlobs(paths.real, options.controlDir);
  const denyRead = [...policy.deny_read, ...privateRead];
  return createToolServer<FsCapabilities>({
    namespace: 'fs',
    version: FS_VERSION,
    instructions: `Read-only access to ${paths.real.join(', ')}. Paths are relative to ${paths.primary}.`,
    tools: fsTools,
    policy,
    capabilities: { paths, limits: policy.limits, search: chooseSearchEngine(policy.search_engine), denyRead, denyInodes: new DenyInodes(paths.real, denyRead, { privateRead }) },
    controlDir: options.controlDir,
    gate: options.gate,
    audit: options.audit,
    limits: { ...DEFAULT_OUTPUT_LIMITS, maxOutputBytes: policy.limits.max_output_bytes },
  });
}
