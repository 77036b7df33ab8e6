import type { GitObject } from './git-objects.js';
import type { RungTarget } from './rung-paths.js';

/**
 * `fresh`: the path's object at the commit checked is the one the rung was written against;
 * `stale`: it changed since; `missing`: the path (tag, changeset commit) is gone; `unwritten`: the
 * path exists but has no rung.
 */
export type Freshness = 'fresh' | 'stale' | 'missing' | 'unwritten';

export function freshnessOf(storedObjectId: string, current: GitObject | undefined): Freshness {
  if (current === undefined) return 'missing';
  return current.oid === storedObjectId ? 'fresh' : 'stale';
}

/**
 * The object a rung's freshness is measured by, named for `git cat-file --batch-check`:
 * the root tree, the path at the commit checked, the commit a release tag points at now, or the
 * changeset's own commit (a commit never changes, so it is fresh while it exists).
 */
export function objectName(target: RungTarget, checkedCommit: string, anchoredCommit: string): Buffer {
  switch (target.shape) {
    case 'repo':
      return Buffer.from(`${checkedCommit}^{tree}`);
    case 'tree':
      return Buffer.concat([Buffer.from(`${checkedCommit}:`), target.bytes]);
    case 'release':
      return Buffer.from(`refs/tags/${target.tag}^{commit}`);
    case 'changeset':
      return Buffer.from(`${anchoredCommit}^{commit}`);
  }
}
