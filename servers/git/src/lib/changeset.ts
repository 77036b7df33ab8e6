import { lstat, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join, relative } from 'node:path';
import { decodeGitName, ToolError, type GitRepository } from '@bulkhead/core';
import type { Identity } from '../policy.js';
import { ancestorsOf, type PlannedChange } from './changeset-plan.js';
import { FOLDER_MODE, readFolders, type Folder, type TreeEntry } from './trees.js';

export type ChangeAction = 'created' | 'updated' | 'deleted' | 'unchanged';

export interface ChangesetRequest {
  readonly branch: string;
  /** The commit the new one builds on; undefined for a first commit with no parent. */
  readonly parent: string | undefined;
  /** The branch's value now, for update-ref to compare: the parent, or the zero id when creating. */
  readonly expectedOld: string;
  readonly changes: readonly PlannedChange[];
  readonly message: string;
  readonly author: Identity;
  readonly committer: Identity;
  readonly signal: AbortSignal;
}

export interface ChangesetOutcome {
  /** The new commit; undefined when every file already had its content (nothing was committed). */
  readonly commit: string | undefined;
  readonly tree: string;
  readonly actions: readonly { path: string; action: ChangeAction }[];
}

interface Decided {
  readonly change: PlannedChange;
  /** The mode the file gets (its old one when it keeps being a file). */
  readonly mode: string;
  readonly existing: TreeEntry | undefined;
}

function folderOf(path: string): [folder: string, name: string] {
  const slash = path.lastIndexOf('/');
  return slash === -1 ? ['', path] : [path.slice(0, slash), path.slice(slash + 1)];
}

/**
 * Each change checked against the parent's tree: a deletion needs a file there, a write may not
 * replace a folder, a symlink or a submodule, and nothing may go under a file the changeset keeps.
 */
function decide(changes: readonly PlannedChange[], folders: Map<string, Folder>): Decided[] {
  const deleted = new Set(changes.filter((change) => !change.content).map((change) => change.path.toString('latin1')));
  const entryAt = (path: string) => {
    const [folder, name] = folderOf(path);
    return folders.get(folder)?.get(name);
  };
  return changes.map((change) => {
    const key = change.path.toString('latin1');
    for (const ancestor of ancestorsOf(key)) {
      const entry = entryAt(ancestor);
      if (entry && entry.mode !== FOLDER_MODE && !deleted.has(ancestor)) {
        throw new ToolError(`${change.shown} cannot be written: ${decodeGitName(Buffer.from(ancestor, 'latin1'))} is a file at expected_head, not a folder. Nothing was written.`, 'conflict');
      }
    }
    const existing = entryAt(key);
    if (!change.content) {
      if (!existing) throw new ToolError(`${change.shown} does not exist at expected_head, so it cannot be deleted. Nothing was written.`, 'not_found');
      if (existing.mode === FOLDER_MODE) throw new ToolError(`${change.shown} is a folder at expected_head; delete the files in it one by one. Nothing was written.`, 'not_a_file');
      if (existing.mode === '160000') throw new ToolError(`${change.shown} is a submodule; commit_changeset changes files only. Nothing was written.`, 'not_a_file');
      return { change, mode: existing.mode, existing };
    }
    if (existing?.mode === FOLDER_MODE) throw new ToolError(`${change.shown} is a folder at expected_head; a file cannot replace it. Nothing was written.`, 'conflict');
    if (existing?.mode === '120000') throw new ToolError(`${change.shown} is a symlink at expected_head; commit_changeset writes regular files only. Nothing was written.`, 'conflict');
    if (existing?.mode === '160000') throw new ToolError(`${change.shown} is a submodule; commit_changeset writes regular files only. Nothing was written.`, 'conflict');
    return { change, mode: existing?.mode === '100755' ? '100755' : '100644', existing };
  });
}

function identityEnv(author: Identity, committer: Identity): Record<string, string> {
  return { GIT_AUTHOR_NAME: author.name, GIT_AUTHOR_EMAIL: author.email, GIT_COMMITTER_NAME: committer.name, GIT_COMMITTER_EMAIL: committer.email };
}

function lines(output: Buffer): string[] {
  return output.toString('utf8').split('\n').filter(Boolean);
}

/**
 * Builds one commit from full file contents with plumbing only: blobs are hashed into the object
 * store, a temporary index (in a temp folder, never the repository's) is filled from the parent's
 * tree and the changes, written as a tree, committed, and the branch is moved with update-ref
 * only if it still has its expected value. The working tree and the real index are never
 * touched; a failure at any step leaves the refs as they were (unreferenced objects may stay
 * until git gc).
 */
export async function buildCommit(repository: GitRepository, request: ChangesetRequest): Promise<ChangesetOutcome> {
  const { signal } = request;
  const keys = request.changes.map((change) => change.path.toString('latin1'));
  const folderNames = [...new Set(['', ...keys.flatMap((key) => ancestorsOf(key))])];
  const folders = request.parent ? await readFolders(repository, request.parent, folderNames, signal) : new Map<string, Folder>();
  const decided = decide(request.changes, folders);

  const temp = await mkdtemp(join(tmpdir(), 'bulkhead-changeset-'));
  try {
    const env = { GIT_INDEX_FILE: join(temp, 'index') };
    const written = decided.filter((d) => d.change.content);
    const blobFiles = await Promise.all(
      written.map(async (d, i) => {
        const file = join(temp, `blob-${i}`);
        await writeFile(file, d.change.content!);
        return file;
      }),
    );
    const blobIds = written.length
      ? lines((await repository.run(['hash-object', '-w', '--no-filters', '--stdin-paths'], { stdin: Buffer.from(`${blobFiles.join('\n')}\n`), signal })).stdout)
      : [];
    if (blobIds.length !== written.length) throw new ToolError('git hash-object did not return an id for every file; nothing was written', 'git_failed');
    const idOf = new Map(written.map((d, i) => [d, blobIds[i]!]));

    if (request.parent) await repository.run(['read-tree', request.parent], { env, signal });
    const zero = '0'.repeat(request.expectedOld.length);
    const indexInfo = decided.map((d) => {
      const info = d.change.content ? `${d.mode} ${idOf.get(d)!}` : `0 ${zero}`;
      return Buffer.concat([Buffer.from(`${info}\t`), d.change.path, Buffer.from([0])]);
    });
    const indexed = await repository.run(['update-index', '-z', '--index-info'], { stdin: Buffer.concat(indexInfo), env, signal });
    // git leaves out a path it will not hold (verify_path), exit code 0: the commit would lack it.
    const ignored = /^Ignoring path (.*)$/m.exec(indexed.stderr);
    if (ignored) throw new ToolError(`git refused the path ${ignored[1]} (not a valid path in a commit); nothing was committed`, 'bad_argument');
    const tree = lines((await repository.run(['write-tree'], { env, signal })).stdout)[0]!;

    const actions = decided.map((d) => ({
      path: d.change.shown,
      action: (!d.change.content ? 'deleted' : !d.existing ? 'created' : d.existing.oid === idOf.get(d) && d.existing.mode === d.mode ? 'unchanged' : 'updated') as ChangeAction,
    }));
    const parentTree = request.parent ? lines((await repository.run(['rev-parse', '--verify', '--end-of-options', `${request.parent}^{tree}`], { signal })).stdout)[0] : undefined;
    if (parentTree === tree) return { commit: undefined, tree, actions };

    const message = request.message.endsWith('\n') ? request.message : `${request.message}\n`;
    const commitArgs = ['commit-tree', '--no-gpg-sign', ...(request.parent ? ['-p', request.parent] : []), '-F', '-', tree];
    const commit = lines((await repository.run(commitArgs, { stdin: Buffer.from(message, 'utf8'), env: identityEnv(request.author, request.committer), signal })).stdout)[0]!;

    await refuseLinkedRefFolders(repository.layout.commonDir, request.branch);
    const reflog = `commit_changeset: ${request.message.split('\n')[0]!.slice(0, 200)}`;
    // --no-deref: a branch that is a symbolic ref (to a tag, say) becomes a branch; the ref it names is never moved.
    const moved = await repository.run(['update-ref', '--no-deref', '-m', reflog, `refs/heads/${request.branch}`, commit, request.expectedOld], { okExitCodes: [1, 128], signal });
    if (moved.exitCode !== 0) {
      throw new ToolError(
        `branch ${request.branch} changed while the commit was being made (${moved.stderr.trim().split('\n')[0]}); it was left as it is and nothing was committed. Look at the branch again (git_log) and retry with its new head as expected_head.`,
        'conflict',
      );
    }
    return { commit, tree, actions };
  } finally {
    await rm(temp, { recursive: true, force: true });
  }
}

/**
 * The repository check looks at the top folders git keeps refs and logs in; a branch with slashes
 * (`feature/x`) also goes through folders below them, and update-ref would follow a symlink there
 * to write the ref or its reflog outside the roots.
 */
async function refuseLinkedRefFolders(commonDir: string, branch: string): Promise<void> {
  const folders = branch.split('/').slice(0, -1);
  for (const base of ['refs/heads', 'logs/refs/heads']) {
    let path = join(commonDir, base);
    for (const folder of folders) {
      path = join(path, folder);
      const stat = await lstat(path).catch(() => undefined);
      if (stat === undefined) break;
      if (!stat.isDirectory()) {
        throw new ToolError(`the branch ${branch} cannot be written: ${base}/${relative(join(commonDir, base), path)} in the repository is ${stat.isSymbolicLink() ? 'a symlink' : 'not a folder'}; nothing was committed`, 'outside_roots');
      }
    }
  }
}
