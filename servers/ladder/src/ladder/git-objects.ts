import { decodeGitName, NUL, ToolError, type GitRepository, type RevisionRequest } from '@bulkhead/core';

export type ObjectType = 'blob' | 'tree' | 'commit' | 'tag';

export interface GitObject {
  readonly oid: string;
  readonly type: ObjectType;
}

/** The tags of a repository that name a commit, as `RepositoryObjects.commitTags` lists them. */
export interface CommitTags {
  /** Tag names (without `refs/tags/`), in git's byte order of names. */
  readonly names: string[];
  /** The repository has more tags than were asked for; only the first ones by name were read. */
  readonly truncated: boolean;
}

interface TagRecord {
  readonly name: string;
  /** The type of the object the tag ends at: the ref's own object, or an annotated tag's target. */
  readonly targetType: string;
}

/**
 * A whole tree listing of a large repository is tens of MiB at most (a 20,000-file repository
 * lists in about 2 MiB); past this the ladder refuses rather than answering from part of the tree.
 */
const LISTING_MAX_BYTES = 256 * 1024 * 1024;

/**
 * Each tag as `<type> NUL <peeled type> NUL <refname> NUL`, then the newline for-each-ref ends
 * every record with. A refname holds neither NUL nor newline, so the fields cannot run together.
 */
const TAG_FORMAT = '--format=%(objecttype)%00%(*objecttype)%00%(refname)%00';
const TAGS_REF_PREFIX = 'refs/tags/';

const BATCH_ANSWER = /^([0-9a-f]{40,64}) (blob|tree|commit|tag)$/;
const TAB = 0x09;
const SPACE = 0x20;

/**
 * Read-only object look-ups for the ladder, through the core's hardened git runner. Object names
 * (`<commit>:<path>`, `refs/tags/<tag>^{commit}`) go to `git cat-file --batch-check` on stdin, so
 * nothing an agent wrote is ever a command-line argument; the only arguments besides fixed ones are
 * commit ids that git itself resolved.
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

  /**
   * The first `limit` tags by name (one `git for-each-ref --count`), keeping those that name a
   * commit once an annotated tag is peeled; a tag of a tree or a blob is left out. Git (2.39 at
   * least) peels `%(*objecttype)` one level only, so a tag of an annotated tag shows as a `tag` and
   * is left out too: knowing where it ends would take another git process, and such chains are rare.
   */
  async commitTags(limit: number): Promise<CommitTags> {
    const result = await this.git.run(['for-each-ref', '--sort=refname', `--count=${limit + 1}`, TAG_FORMAT, TAGS_REF_PREFIX], { maxOutputBytes: LISTING_MAX_BYTES, ...(this.signal ? { signal: this.signal } : {}) });
    if (result.truncated) throw new ToolError(`${this.git.shownAs}: the first ${limit} tags list more than ${LISTING_MAX_BYTES} bytes; they are too large for one ladder`, 'too_large');
    const records = parseTagListing(result.stdout);
    return {
      names: records.slice(0, limit).flatMap((record) => (record.targetType === 'commit' ? [record.name] : [])),
      truncated: records.length > limit,
    };
  }
}

/** Parses the records of TAG_FORMAT. */
function parseTagListing(output: Buffer): TagRecord[] {
  const records: TagRecord[] = [];
  let start = 0;
  while (start < output.length) {
    const typeEnd = output.indexOf(NUL, start);
    const peeledTypeEnd = typeEnd === -1 ? -1 : output.indexOf(NUL, typeEnd + 1);
    const refnameEnd = peeledTypeEnd === -1 ? -1 : output.indexOf(NUL, peeledTypeEnd + 1);
    if (refnameEnd === -1) break;
    const type = output.toString('latin1', start, typeEnd);
    const peeledType = output.toString('latin1', typeEnd + 1, peeledTypeEnd);
    const refname = output.subarray(peeledTypeEnd + 1, refnameEnd);
    records.push({ name: decodeGitName(refname.subarray(TAGS_REF_PREFIX.length)), targetType: peeledType === '' ? type : peeledType });
    // Past the refname's NUL and the record's newline.
    start = refnameEnd + 2;
  }
  return records;
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
