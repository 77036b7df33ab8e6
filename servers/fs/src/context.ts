import type { Roots } from '@bulkhead/core';
import type { FsLimits } from './policy.js';
import type { SearchEngine } from './lib/search-engine.js';
import type { DenyInodes } from './lib/deny-inodes.js';

/** What fs tools may touch: nothing but these. */
export interface FsCapabilities {
  readonly paths: Roots;
  readonly limits: FsLimits;
  readonly search: SearchEngine;
  readonly denyRead: readonly string[];
  /** The inodes of the deny_read files: a hard link to one is refused like the file itself. */
  readonly denyInodes: DenyInodes;
}
