import { z } from 'zod';
import { SECRET_GLOBS, serverPolicySchema } from '@bulkhead/core';

export const FS_POLICY_FILE = 'fs_policy.yaml';

export const fsLimitsSchema = z
  .strictObject({
    read_max_lines: z.number().int().min(1).max(100_000).default(2000).describe('Lines read_file returns when no limit is given'),
    read_max_bytes: z.number().int().min(1024).max(16 * 1024 * 1024).default(256 * 1024).describe('Most bytes of text one read_file call returns'),
    line_max_chars: z.number().int().min(80).max(100_000).default(2000).describe('Longer lines are cut with a marker'),
    image_max_bytes: z.number().int().min(0).max(50 * 1024 * 1024).default(5 * 1024 * 1024).describe('PNG/JPEG/GIF/WebP up to this size come back as images'),
    count_lines_max_bytes: z.number().int().min(0).default(32 * 1024 * 1024).describe('read_file counts the total lines of files up to this size'),
    grep_timeout_ms: z.number().int().min(100).max(600_000).default(20_000).describe('A search is stopped after this long'),
    grep_head_limit: z.number().int().min(1).max(10_000).default(250).describe('Default head_limit of grep'),
    glob_max_results: z.number().int().min(1).max(100_000).default(1000).describe('Most paths glob_files returns'),
    list_max_entries: z.number().int().min(1).max(10_000).default(200).describe('Most entries list_files shows per folder'),
    max_output_bytes: z.number().int().min(0).default(512 * 1024).describe('Hard cap on any result text; 0 turns it off'),
  })
  .prefault({});

export const fsPolicySchema = serverPolicySchema(true, {
  roots: z.array(z.string().min(1)).default([]).describe('Folders added to the --root folders (relative paths are resolved against the first root)'),
  deny_read: z.array(z.string().min(1)).default([...SECRET_GLOBS]).describe('Globs that are never read, listed in grep or returned by glob_files (.gitignore style)'),
  search_engine: z
    .enum(['auto', 'ripgrep', 'builtin'])
    .default('auto')
    .describe('auto: ripgrep when its binary runs, else the built-in engine; ripgrep or builtin force one'),
  limits: fsLimitsSchema,
});

export type FsPolicy = z.output<typeof fsPolicySchema>;
export type FsLimits = FsPolicy['limits'];
