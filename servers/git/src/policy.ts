import { z } from 'zod';
import { SECRET_GLOBS, serverPolicySchema } from '@bulkhead/core';

export const GIT_POLICY_FILE = 'git_policy.yaml';

const KIB = 1024;
const MIB = 1024 * KIB;

/** Files whose diffs are machine-made and long: summarised as +N −M, never shown line by line. */
export const LOCKFILE_GLOBS: readonly string[] = [
  'package-lock.json',
  'npm-shrinkwrap.json',
  'pnpm-lock.yaml',
  'yarn.lock',
  'bun.lockb',
  'Cargo.lock',
  'Gemfile.lock',
  'composer.lock',
  'poetry.lock',
  'Pipfile.lock',
  'uv.lock',
  'go.sum',
  'flake.lock',
  'mix.lock',
  'pubspec.lock',
  'packages.lock.json',
];

export const gitLimitsSchema = z
  .strictObject({
    timeout_ms: z.number().int().min(100).max(600_000).default(30_000).describe('Each git process is killed after this long'),
    max_read_bytes: z.number().int().min(MIB).max(1024 * MIB).default(64 * MIB).describe('Most bytes read from one git process; past this it is killed and the result says so'),
    log_default_count: z.number().int().min(1).max(10_000).default(50).describe('Commits git_log shows when max_count is not given'),
    log_max_count: z.number().int().min(1).max(10_000).default(500).describe('Largest max_count git_log accepts'),
    body_max_chars: z.number().int().min(100).max(1_000_000).default(4000).describe('Longer commit messages are cut with a marker'),
    diff_file_max_lines: z.number().int().min(10).max(100_000).default(400).describe('Patch lines shown per file; the rest of that file is counted'),
    diff_total_max_bytes: z.number().int().min(4 * KIB).max(16 * MIB).default(200 * KIB).describe('Patch bytes shown per call; files past this are listed without their patch'),
    diff_max_files: z.number().int().min(1).max(100_000).default(1000).describe('Files listed per diff'),
    show_file_max_lines: z.number().int().min(1).max(100_000).default(2000).describe('Lines git_show_file returns when no limit is given'),
    file_max_bytes: z.number().int().min(KIB).max(16 * MIB).default(256 * KIB).describe('Most bytes of file lines one git_show_file or git_blame call returns'),
    line_max_chars: z.number().int().min(80).max(100_000).default(2000).describe('Longer lines (file, patch or blame) are cut with a marker'),
    blame_max_lines: z.number().int().min(1).max(100_000).default(2000).describe('Most lines one git_blame call covers'),
    status_max_entries: z.number().int().min(1).max(100_000).default(1000).describe('Most files git_status lists'),
    refs_max: z.number().int().min(1).max(100_000).default(500).describe('Most refs git_refs lists'),
    changeset_max_files: z.number().int().min(1).max(10_000).default(200).describe('Most files one commit_changeset may change'),
    changeset_max_file_bytes: z.number().int().min(1).max(1024 * MIB).default(10 * MIB).describe('Largest file content commit_changeset accepts'),
    changeset_max_total_bytes: z.number().int().min(1).max(4096 * MIB).default(50 * MIB).describe('Largest sum of contents in one commit_changeset'),
    max_output_bytes: z.number().int().min(0).default(512 * KIB).describe('Hard cap on any result text; 0 turns it off'),
  })
  .prefault({});

/** One line with no angle brackets: git writes it into a commit header as it is. */
const identityPart = (what: string) =>
  z
    .string()
    .min(1)
    .max(200)
    .regex(/^[^<>\0-\x1f]+$/, `${what} may not hold <, > or control characters`);

export const identitySchema = z.strictObject({
  name: identityPart('a name').describe('Name written into the commit'),
  email: identityPart('an email').describe('Email written into the commit'),
});

export const gitPolicySchema = serverPolicySchema(true, {
  roots: z.array(z.string().min(1)).default([]).describe('Folders added to the --root folders (relative paths are resolved against the first root)'),
  allow_write: z
    .boolean()
    .default(false)
    .describe('true registers commit_changeset (creates commits and moves branches); false leaves it out: not listed, not callable'),
  deny_read: z
    .array(z.string().min(1))
    .default([...SECRET_GLOBS])
    .describe('Files whose content is never shown (.gitignore style, on the path in the repository): git_show_file and git_blame refuse them, diffs list them without their lines'),
  lockfiles: z.array(z.string().min(1)).default([...LOCKFILE_GLOBS]).describe('Files whose diffs are summarised (+N −M lines), not shown'),
  protect: z
    .array(z.string().min(1))
    .default([])
    .describe('Globs added to the protected set that commit_changeset refuses; the built-in protected set always applies'),
  committer: identitySchema.default({ name: 'Bulkhead', email: 'bulkhead@localhost' }).describe('Committer of commit_changeset commits, and their author when none is given'),
  limits: gitLimitsSchema,
});

export type GitPolicy = z.output<typeof gitPolicySchema>;
export type GitLimits = GitPolicy['limits'];
export type Identity = z.output<typeof identitySchema>;
