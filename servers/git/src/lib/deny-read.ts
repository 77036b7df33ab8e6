import { join } from 'node:path';
import { PathGlobSet, privateControlFolderGlobs, privateControlFolderOf, privateFolderRefusal, type GitRepository } from '@bulkhead/core';
import { GIT_POLICY_FILE } from '../policy.js';

/**
 * What is never shown of a repository's files: deny_read of git_policy.yaml, and, where the
 * repository's work tree holds the control-plane folder, its private folders (`keys/`,
 * `approvals/`), committed or not, whatever deny_read says.
 */
export class RepositoryDenyRead {
  private readonly byWorkTree = new Map<string, PathGlobSet>();
  private readonly policy: PathGlobSet;

  constructor(
    private readonly denyRead: readonly string[],
    private readonly controlDir: string,
  ) {
    this.policy = new PathGlobSet(denyRead);
  }

  /** The globs over paths in `repository` (relative to its top folder). */
  in(repository: GitRepository): PathGlobSet {
    const workTree = repository.layout.workTree;
    if (workTree === undefined) return this.policy;
    let globs = this.byWorkTree.get(workTree);
    if (globs === undefined) {
      const privateGlobs = privateControlFolderGlobs([workTree], this.controlDir);
      globs = privateGlobs.length === 0 ? this.policy : new PathGlobSet([...this.denyRead, ...privateGlobs]);
      this.byWorkTree.set(workTree, globs);
    }
    return globs;
  }

  /** Why the content of `shown` (a path in the repository) is not shown, or undefined; `what` ends the deny_read message ("its lines are not shown"). */
  refusal(repository: GitRepository, shown: string, what: string): string | undefined {
    const workTree = repository.layout.workTree;
    const folder = workTree === undefined ? undefined : privateControlFolderOf(this.controlDir, join(workTree, shown));
    if (folder !== undefined) return privateFolderRefusal(shown, folder);
    const glob = this.policy.match(shown);
    return glob === undefined ? undefined : `${shown} is a protected secret (matches \`${glob}\` in deny_read of ${GIT_POLICY_FILE}); ${what}`;
  }

  /**
   * Pathspecs that leave the private folders out of a diff altogether (`:(exclude,literal).bulkhead/keys`):
   * not even the names of files committed there by mistake are listed.
   */
  excludes(repository: GitRepository): string[] {
    const workTree = repository.layout.workTree;
    if (workTree === undefined) return [];
    return privateControlFolderGlobs([workTree], this.controlDir).map((glob) => (glob === '/**' ? ':(exclude)*' : `:(exclude,literal)${glob.slice(1)}`));
  }

  /** Whether a path in the repository's work tree (a file, or a folder ending in `/`) lies in a private folder: git_status leaves it out. */
  hides(repository: GitRepository, path: string): boolean {
    const workTree = repository.layout.workTree;
    return workTree !== undefined && privateControlFolderOf(this.controlDir, join(workTree, path)) !== undefined;
  }
}
