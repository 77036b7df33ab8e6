import { resolve } from 'node:path';
import { createToolServer, DEFAULT_MAX_REQUEST_BYTES, DEFAULT_OUTPUT_LIMITS, errorMessage, loadYamlFile, Roots, Trash, type CommonOptions, type ToolServer } from '@bulkhead/core';
import type { FsWriteCapabilities } from './context.js';
import { PathLocks } from './lib/locks.js';
import { FS_WRITE_POLICY_FILE, fsWritePolicySchema, type FsWritePolicy } from './policy.js';
import { createDirectory } from './tools/create_directory.js';
import { deletePath } from './tools/delete_path.js';
import { editFile } from './tools/edit_file.js';
import { movePath } from './tools/move_path.js';
import { multiEdit } from './tools/multi_edit.js';
import { writeFile } from './tools/write_file.js';

export const FS_WRITE_VERSION = '0.1.0';
export const fsWriteTools = [writeFile, editFile, multiEdit, createDirectory, movePath, deletePath];

export type FsWriteServerOptions = Pick<CommonOptions, 'roots' | 'controlDir' | 'gate' | 'audit'> & {
  /** Overrides fs_write_policy.yaml (tests build policies in code). */
  readonly policy?: FsWritePolicy;
};

export function loadFsWritePolicy(controlDir: string): FsWritePolicy {
  return loadYamlFile(controlDir, FS_WRITE_POLICY_FILE, fsWritePolicySchema).value;
}

/** The writing fs server: every change confined, atomic, diffed, and refused on the protected set. */
export function createFsWriteServer(options: FsWriteServerOptions): ToolServer {
  const policy = options.policy ?? loadFsWritePolicy(options.controlDir);
  const roots = [...options.roots, ...policy.roots.map((root) => resolve(options.roots[0]!, root))];
  const paths = new Roots(roots, { controlDir: options.controlDir, denyRead: [], protectWrite: policy.protect, protectWriteSource: FS_WRITE_POLICY_FILE });
  const trash = new Trash(paths.controlDir, policy.trash, { policySource: FS_WRITE_POLICY_FILE });
  // The retention policy applies from the start, not only after the next delete.
  const startupPurge = trash.purge().then(
    () => undefined,
    (error: unknown) => void process.stderr.write(`bulkhead-fs-write: the trash could not be purged: ${errorMessage(error)}\n`),
  );
  return createToolServer<FsWriteCapabilities>({
    namespace: 'fs_write',
    version: FS_WRITE_VERSION,
    instructions: `Writes files under ${paths.real.join(', ')}. Paths are relative to ${paths.primary}. Every change returns a diff; deletes, and the previous version of every file a write or an edit replaces, go to a trash that \`bulkhead trash restore\` brings back.`,
    tools: fsWriteTools,
    policy,
    capabilities: { paths, limits: policy.limits, locks: new PathLocks(), trash },
    controlDir: options.controlDir,
    gate: options.gate,
    audit: options.audit,
    limits: { ...DEFAULT_OUTPUT_LIMITS, maxOutputBytes: policy.limits.max_output_bytes },
    // Content up to the byte cap must arrive whole: JSON escaping can double it, plus room for the rest.
    maxRequestBytes: Math.max(DEFAULT_MAX_REQUEST_BYTES, 2 * policy.limits.max_file_bytes + 1024 * 1024),
    onClose: () => startupPurge,
  });
}
