import { decodeGitName, ToolError, type GitRepository, type RevisionRequest } from '@bulkhead/core';

export type ObjectType = 'blob' | 'tree' | 'commit' | 'tag';

export interface GitObject {
  readonly oid: string;
  readonly type: ObjectType;
}

/**
 * A whole tree listing of a large repository is tens of MiB at most (a 20,000-file repository
 * lists in about 2 MiB); past this the ladder refuses rather than answering from part of the tree.
 */
const LISTING_MAX_BYTES = 256 * 1024 * 1024;

const BATCH_ANSWER = /^([0-9a-f]{40,64}) (blob|tree|commit|tag)$/;
const TAB = 0x09;
const SPACE = 0x20;

/**
 * Read-only object look-ups for the ladder, through the core's hardened git runner. Object names
 * (`<commit>:<path>`, `refs/tags/<tag>^{commit}`) go to `git cat-file --batch-check` on stdin, so
 * nothing an agent wrote is ever a command-line argument; the only arguments are commit ids that
 * git itself resolved.
 */
export class RepositoryObjects {
  constructor(
    private readonly git: GitRepository,
    private readonly signal?: AbortSignal,
  ) {}

  get shownAs(): string {
    return this.git.shownAs;
  }

  /** HEAD's commit id; a clear refusal in a repository with no commits. */
  async head(): Promise<string> {
    const { oid } = await this.git.headState(this.signal);
    if (oid === undefined) throw new ToolError(`${this.git.shownAs} has no commits yet, so nothing can be anchored or checked against HEAD`, 'no_commits');
    return oid;
  }

  /** Resolves revisions (`HEAD`, a branch, a hash) to commit ids in one git process; a missing one is refused by name. */
  async commits(requests: readonly RevisionRequest[]): Promise<string[]> {
    return this.git.resolveCommits(requests, this.signal);
  }

  /** The commit `value` names, or HEAD's when it is not given. */
  async commitOrHead(value: string | undefined, argument = 'commit'): Promise<string> {
    return value === undefined ? this.head() : (await this.commits([{ value, argument }]))[0]!;
  }

  /** Looks objects up by name in one git process; undefined for a name that does not exist. */
  async lookup(names: readonly Buffer[]): Promise<(GitObject | undefined)[]> {
    if (names.length === 0) return [];
    const stdin = Buffer.concat(names.flatMap((name) => [name, Buffer.from('\n')]));
    const result = await this.git.run(['cat-file', '--batch-check=%(objectname) %(objecttype)'], { stdin, maxOutputBytes: LISTING_MAX_BYTES, ...(this.signal ? { signal: this.signal } : {}) });
    if (result.truncated) throw new ToolError(`${this.git.shownAs}: too many objects to look up at once`, 'too_large');
    const answers = result.stdout.toString('latin1').split('\n');
    return names.map((_, i) => {
      const match = BATCH_ANSWER.exec(answers[i] ?? '');
      return match ? { oid: match[1]!, type: match[2] as ObjectType } : undefined;
    });
  }

  /**
   * Every path at `commit` (directories and files, recursively) with its object id, from one
   * `git ls-tree -r -t -z --full-tree`. Submodules appear as `commit` objects.
   */
  async listTree(commit: string): Promise<Map<string, GitObject>> {
    const result = await this.git.run(['ls-tree', '-r', '-t', '-z', '--full-tree', commit], { maxOutputBytes: LISTING_MAX_BYTES, ...(this.signal ? { signal: this.signal } : {}) });
    if (result.truncated) throw new ToolError(`${this.git.shownAs}: the tree at ${commit.slice(0, 12)} lists more than ${LISTING_MAX_BYTES} bytes; it is too large for one ladder`, 'too_large');
    return parseTreeListing(result.stdout);
  }
}

/** Parses `<mode> SP <type> SP <oid> TAB <path> NUL` entries without copying the whole output to a string. */
export function parseTreeListing(output: Buffer): Map<string, GitObject> {
  const entries = new Map<string, GitObject>();
  let start = 0;
  while (start < output.length) {
    let end = output.indexOf(0, start);
    if (end === -1) end = output.length;
    const tab = output.indexOf(TAB, start);
    if (tab !== -1 && tab < end) {
      const typeStart = output.indexOf(SPACE, start) + 1;
      const oidStart = output.indexOf(SPACE, typeStart) + 1;
      const type = output.toString('latin1', typeStart, oidStart - 1) as ObjectType;
      const oid = output.toString('latin1', oidStart, tab);
      entries.set(decodeGitName(output.subarray(tab + 1, end)), { oid, type });
    }
    start = end + 1;
  }
  return entries;
}
