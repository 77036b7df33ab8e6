import { join } from 'node:path';
import { PathGlobSet, type Roots } from '@bulkhead/core';

/**
 * deny_read globs are relative to the roots, but the search engines match them relative to the
 * folder searched, so a glob that names a folder (`secrets/prod.yaml`) would miss when that folder
 * is the one searched. This checks each result again by its root-relative path.
 */
export function allowedByDenyRead(paths: Roots, denyRead: readonly string[], folder: string): (relative: string) => boolean {
  const deny = new PathGlobSet(denyRead);
  return (relative) => deny.match(paths.relativeToRoot(join(folder, relative))) === undefined;
}
