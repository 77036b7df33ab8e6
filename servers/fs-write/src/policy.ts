import { z } from 'zod';
import { serverPolicySchema, trashPolicySchema } from '@bulkhead/core';

export const FS_WRITE_POLICY_FILE = 'fs_write_policy.yaml';

const MIB = 1024 * 1024;

export const fsWriteLimitsSchema = z
  .strictObject({
    max_file_bytes: z.number().int().min(1).max(1024 * MIB).default(10 * MIB).describe('Largest content written or file edited, in bytes'),
    diff_max_lines: z.number().int().min(10).max(100_000).default(400).describe('Lines of unified diff a result shows; the rest is counted'),
    max_output_bytes: z.number().int().min(0).default(512 * 1024).describe('Hard cap on any result text; 0 turns it off'),
  })
  .prefault({});

export const fsWritePolicySchema = serverPolicySchema(true, {
  roots: z.array(z.string().min(1)).default([]).describe('Folders added to the --root folders (relative paths are resolved against the first root)'),
  protect: z
    .array(z.string().min(1))
    .default([])
    .describe('Globs added to the protected set (.gitignore style); the built-in protected set always applies and cannot be removed'),
  limits: fsWriteLimitsSchema,
  trash: trashPolicySchema,
});

export type FsWritePolicy = z.output<typeof fsWritePolicySchema>;
export type FsWriteLimits = FsWritePolicy['limits'];
