import type { Roots, Trash } from '@bulkhead/core';
import type { PathLocks } from './lib/locks.js';
import type { FsWriteLimits } from './policy.js';

/** What fs_write tools may touch: nothing but these. */
export interface FsWriteCapabilities {
  readonly paths: Roots;
  readonly limits: FsWriteLimits;
  readonly locks: PathLocks;
  /** Where deletes and replaced entries go, recoverable. */
  readonly trash: Trash;
}
