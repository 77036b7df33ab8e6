import { join } from 'node:path';
import { z } from 'zod';
import { checkGitValue, checkRevision, defineTool, structuredReply, ToolError } from '@bulkhead/core';
import type { GitCapabilities } from '../context.js';
import { buildCommit } from '../lib/changeset.js';
import { parseAuthor, planChanges, protectedPathCheck } from '../lib/changeset-plan.js';
import { repoField, repoPathDescription } from '../lib/fields.js';

const ZERO_ID = /^(0{40}|0{64})$/;

const path = z.string().max(4096).describe(`The file, ${repoPathDescription}`);
const fileChange = z.union([
  z.strictObject({ path, content: z.string().max(2 ** 30).describe('The complete new content of the file (UTF-8; at most changeset_max_file_bytes)') }),
  z.strictObject({ path, delete: z.literal(true).describe('Remove the file') }),
]);

const input = z.strictObject({
  repo: repoField,
  branch: z.string().min(1).max(255).describe('The branch to commit on (main, feature/x)'),
  files: z.array(fileChange).min(1).max(10_000).describe('The changes: {path, content} writes a whole file, {path, delete: true} removes one'),
  message: z.string().min(1).max(100_000).describe('The commit message'),
  expected_head: z
    .string()
    .max(1024)
    .describe('The commit the branch is at now (full or short hash): the commit is made only if the branch is still there. With create: the commit to start the branch from, or 0000000000000000000000000000000000000000 for a first commit with no parent'),
  create: z.boolean().optional().describe('Create the branch; it must not exist yet'),
  author: z.string().max(1000).optional().describe('Author as "Name <email>" (default: the committer of git_policy.yaml)'),
});

const output = z.object({
  committed: z.boolean().describe('false when every file already had this content: nothing was committed'),
  commit: z.string().nullable().describe('The new commit'),
  branch: z.string(),
  parent: z.string().nullable().describe('Its parent (expected_head); null for a first commit'),
  files: z.array(z.object({ path: z.string(), action: z.enum(['created', 'updated', 'deleted', 'unchanged']) })),
});

/** The commit's parent and the branch's value now, checked against expected_head before anything is built. */
async function resolveBase(
  repository: Awaited<ReturnType<GitCapabilities['openRepository']>>,
  args: { branch: string; expected_head: string; create?: boolean | undefined },
  signal: AbortSignal,
): Promise<{ parent: string | undefined; expectedOld: string }> {
  const tipAnswer = await repository.run(['rev-parse', '-q', '--verify', '--end-of-options', `refs/heads/${args.branch}^{commit}`], { okExitCodes: [1], signal });
  const tip = tipAnswer.exitCode === 0 ? tipAnswer.stdout.toString('utf8').trim() : undefined;
  const parent = ZERO_ID.test(args.expected_head) ? undefined : await repository.resolveCommit(args.expected_head, 'expected_head', signal);
  if (args.create) {
    if (tip !== undefined) throw new ToolError(`branch ${args.branch} already exists (at ${tip}); nothing was written. Leave out create to commit on it, with expected_head ${tip}.`, 'conflict');
    return { parent, expectedOld: '0'.repeat(parent?.length ?? args.expected_head.length) };
  }
  if (tip === undefined) throw new ToolError(`branch ${args.branch} does not exist in ${repository.shownAs}; nothing was written. Pass create: true to start it from expected_head.`, 'not_found');
  if (parent === undefined) throw new ToolError(`expected_head is the zero id, but branch ${args.branch} exists (at ${tip}); nothing was written`, 'conflict');
  if (tip !== parent) {
    throw new ToolError(`branch ${args.branch} is at ${tip}, not at expected_head ${parent}: it moved since you looked. Nothing was written. See what changed (git_log rev=${parent}..${tip}) and retry with expected_head ${tip}.`, 'conflict');
  }
  return { parent, expectedOld: tip };
}

export const commitChangeset = defineTool<GitCapabilities, typeof input, typeof output>({
  name: 'commit_changeset',
  title: 'Commit a set of files',
  description:
    'Make one commit on a branch from full file contents (and deletions), without touching the working tree or the index: the commit is built with git plumbing and the branch moves only if it is still at expected_head, so a concurrent change fails cleanly with nothing written. Paths in the protected set (.git, .github/, secrets, policy and agent config files) are refused. Off unless git_policy.yaml has allow_write: true.',
  input,
  output,
  annotations: { readOnlyHint: false, destructiveHint: false, idempotentHint: false, openWorldHint: false },
  risk: 'medium',
  subjectArg: 'branch',
  async run(args, ctx) {
    checkGitValue(args.branch, 'branch');
    checkRevision(args.expected_head, 'expected_head');
    if (ZERO_ID.test(args.expected_head) && !args.create) throw new ToolError('expected_head is the zero id, which only makes sense with create: true (a first commit with no parent)', 'bad_argument');
    if (args.message.includes('\0')) throw new ToolError('message contains a NUL byte; remove it', 'bad_argument');
    const author = args.author !== undefined ? parseAuthor(args.author) : ctx.committer;
    const repository = await ctx.openRepository(args.repo);
    const workTree = repository.layout.workTree;
    const inRepository = protectedPathCheck(ctx.writeProtected);
    const changes = planChanges(
      args.files,
      { maxFiles: ctx.limits.changeset_max_files, maxFileBytes: ctx.limits.changeset_max_file_bytes, maxTotalBytes: ctx.limits.changeset_max_total_bytes },
      (shown, argument) => {
        inRepository(shown, argument);
        // Where the repository's files sit inside a root, the roots' own protected set (the control-plane folder, protect globs) holds too.
        if (workTree !== undefined) ctx.paths.checkProtected(`${argument} ${JSON.stringify(shown)}`, join(workTree, shown), 'write');
      },
    );
    const validBranch = await repository.run(['check-ref-format', `refs/heads/${args.branch}`], { okExitCodes: [1], signal: ctx.signal });
    // As git branch: HEAD (and @, which stands for it) is a valid ref name but never a branch.
    if (validBranch.exitCode !== 0 || args.branch === 'HEAD' || args.branch === '@') throw new ToolError(`branch ${JSON.stringify(args.branch)} is not a valid branch name`, 'bad_argument');

    const { parent, expectedOld } = await resolveBase(repository, args, ctx.signal);
    const outcome = await buildCommit(repository, { branch: args.branch, parent, expectedOld, changes, message: args.message, author, committer: ctx.committer, signal: ctx.signal });
    const files = outcome.actions.map((a) => ({ path: a.path, action: a.action }));
    const summary = files.map((f) => `  ${f.action} ${f.path}`).join('\n');
    if (outcome.commit === undefined) {
      return structuredReply(`No change needed: every file already has this content at ${parent}; nothing was committed.\n${summary}`, { committed: false, commit: null, branch: args.branch, parent: parent ?? null, files });
    }
    const head = workTree !== undefined ? await repository.headState(ctx.signal) : undefined;
    const checkedOut =
      head?.branch === args.branch
        ? `\nNote: ${args.branch} is checked out in ${repository.shownAs}. Its working tree and index were not touched, so they still hold the old state; git_status there now shows this commit's changes reversed until they are brought up to date (for example with git reset).`
        : '';
    return structuredReply(`Committed ${outcome.commit} on ${args.branch} (parent ${parent ?? 'none'}):\n${summary}${checkedOut}`, {
      committed: true,
      commit: outcome.commit,
      branch: args.branch,
      parent: parent ?? null,
      files,
    });
  },
});
