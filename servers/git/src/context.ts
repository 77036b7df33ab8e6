import type { GitRepository, PathGlobSet, Roots } from '@bulkhead/core';
import type { RepositoryDenyRead } from './lib/deny-read.js';
import type { GitLimits, Identity } from './policy.js';

/** What git tools may touch: nothing but these. */
export interface GitCapabilities {
  readonly paths: Roots;
  readonly limits: GitLimits;
  /** The repository a call names (default: the first root), proven to lie inside the roots. */
  readonly openRepository: (repo: string | undefined) => Promise<GitRepository>;
  /** Paths in a repository whose content is never shown: deny_read, and the control plane's private folders. */
  readonly denyRead: RepositoryDenyRead;
  /** Paths whose diffs are summarised, not shown. */
  readonly lockfiles: PathGlobSet;
  /** The protected set (built in, plus protect) on paths in a repository: commit_changeset refuses them. */
  readonly writeProtected: PathGlobSet;
  readonly committer: Identity;
}
