import { ToolError, type GitRepository } from '@bulkhead/core';
import type { Rung, RungStore, RungWrite, SearchResult } from '../store/rungs.js';
import { freshnessOf, objectName, type Freshness } from './freshness.js';
import { RepositoryObjects, type GitObject } from './git-objects.js';
import { kindsForShape, parseRungPath, releasePathOf, REPO_PATH, storedTarget, type RungKind, type RungTarget } from './rung-paths.js';

export const MAX_RUNGS_PER_WRITE = 500;
export const SUMMARY_MAX_CHARS = 1_000;
export const BODY_MAX_CHARS = 64_000;
export const QUERY_MAX_CHARS = 1_000;
export const SEARCH_DEFAULT_LIMIT = 20;
export const SEARCH_MAX_LIMIT = 100;
/** Tags `ladder_tree` reads for unwritten releases; a repository with more gets the first ones by name. */
export const UNWRITTEN_RELEASES_MAX_TAGS = 10_000;

/** A repository as the ladder sees it: its name on the server (the key of its rungs) and its git. */
export interface LadderRepository {
  readonly name: string;
  readonly git: GitRepository;
  readonly signal?: AbortSignal | undefined;
}

/** One rung of `ladder_write_rung`, named as in the tool's arguments. */
export interface RungInput {
  readonly path: string;
  readonly kind: RungKind;
  /** The commit the summary describes: a hash, a branch, a tag, HEAD. */
  readonly commit: string;
  readonly summary: string;
  readonly body?: string | undefined;
  /** The revision read before writing; 0 when the writer expects no rung yet. */
  readonly expected_revision?: number | undefined;
}

export interface RungWithFreshness extends Rung {
  readonly freshness: Freshness;
  /** The path's object id at the commit checked; null when it is gone there. */
  readonly currentObjectId: string | null;
}

export interface ChildSummary {
  readonly path: string;
  readonly kind: RungKind;
  readonly summary: string;
  readonly revision: number;
  readonly freshness: Freshness;
}

export interface RungReading {
  readonly repo: string;
  readonly path: string;
  /** The commit freshness was measured at (HEAD unless one was given). */
  readonly checkedAt: string;
  /** Null when the path exists but nobody wrote its rung (freshness `unwritten`). */
  readonly rung: RungWithFreshness | null;
  readonly freshness: Freshness;
  readonly children: ChildSummary[];
}

export interface TreeEntry {
  readonly path: string;
  readonly kind: RungKind;
  readonly summary: string;
  readonly revision: number;
  readonly commit: string;
  readonly author: string;
  readonly writtenAt: number;
  readonly freshness: Freshness;
}

export interface UnwrittenPath {
  readonly path: string;
  readonly kind: 'repo' | 'directory' | 'file' | 'release';
}

export interface LadderTree {
  readonly repo: string;
  readonly checkedAt: string;
  /** Every rung, by path. */
  readonly rungs: TreeEntry[];
  /**
   * Paths with no rung: `_repo` first when it has none, the paths at the commit by path, then
   * `_release/<tag>` for each tag that names a commit, by tag name.
   */
  readonly unwritten: UnwrittenPath[];
  /** The repository has more than UNWRITTEN_RELEASES_MAX_TAGS tags; only the first ones by name were listed. */
  readonly unwrittenReleasesTruncated: boolean;
  readonly counts: Readonly<Record<Freshness, number>>;
}

export interface ReindexResult {
  readonly repo: string;
  readonly indexed: number;
  readonly checkedAt: string;
  readonly counts: Readonly<Record<Freshness, number>>;
  /** Rungs to rewrite: their path changed (stale) or is gone (missing). */
  readonly outdated: { readonly path: string; readonly freshness: 'stale' | 'missing' }[];
}

export interface SearchRequest {
  readonly repo?: string | undefined;
  readonly limit?: number | undefined;
}

function short(oid: string): string {
  return oid.slice(0, 12);
}

function kindOfObject(object: GitObject): 'directory' | 'file' {
  return object.type === 'tree' ? 'directory' : 'file';
}

function emptyCounts(): Record<Freshness, number> {
  return { fresh: 0, stale: 0, missing: 0, unwritten: 0 };
}

function checkText(input: RungInput, i: number): void {
  const at = `rungs[${i}] (${input.path})`;
  if (input.summary.trim() === '') throw new ToolError(`${at}: summary is empty; give a short summary of the path`, 'bad_argument');
  if (input.summary.length > SUMMARY_MAX_CHARS) throw new ToolError(`${at}: summary is ${input.summary.length} characters; keep it under ${SUMMARY_MAX_CHARS} and put the rest in body`, 'bad_argument');
  if (input.body !== undefined && input.body.length > BODY_MAX_CHARS) throw new ToolError(`${at}: body is ${input.body.length} characters; the limit is ${BODY_MAX_CHARS}`, 'bad_argument');
  const expected = input.expected_revision;
  if (expected !== undefined && (!Number.isInteger(expected) || expected < 0)) throw new ToolError(`${at}: expected_revision must be a whole number, 0 for a rung not written yet`, 'bad_argument');
}

/**
 * The Ladder: rungs kept by a RungStore, anchored to and checked against git. A call starts the
 * same few git processes whatever the number of rungs: the commit's resolution, one
 * `cat-file --batch-check` for every object in question and, for the whole tree, one `ls-tree` and
 * one `for-each-ref` of the tags.
 */
export class Ladder {
  constructor(private readonly store: RungStore) {}

  /**
   * Writes rungs all or none: each path is checked for shape, its commit must exist, and the path
   * must exist at that commit with the kind claimed; the object id found there is recorded.
   */
  async writeRungs(repo: LadderRepository, inputs: readonly RungInput[], actor: string): Promise<Rung[]> {
    if (inputs.length === 0) throw new ToolError('rungs is empty; give at least one rung to write', 'bad_argument');
    if (inputs.length > MAX_RUNGS_PER_WRITE) throw new ToolError(`${inputs.length} rungs in one write; the limit is ${MAX_RUNGS_PER_WRITE}`, 'bad_argument');
    if (actor.trim() === '') throw new ToolError('actor is empty', 'bad_argument');
    const targets = inputs.map((input, i) => parseRungPath(input.path, `rungs[${i}].path`));
    const seen = new Set<string>();
    targets.forEach((target, i) => {
      const input = inputs[i]!;
      if (seen.has(target.path)) throw new ToolError(`rungs[${i}]: ${target.path} appears twice in this write; give each path once`, 'bad_argument');
      seen.add(target.path);
      const kinds = kindsForShape(target);
      if (!kinds.includes(input.kind)) throw new ToolError(`rungs[${i}]: ${target.path} is a ${kinds.join(' or ')} path, not a ${input.kind}`, 'bad_argument');
      checkText(input, i);
    });
    const objects = new RepositoryObjects(repo.git, repo.signal);
    const commits = await objects.commits(inputs.map((input, i) => ({ value: input.commit, argument: `rungs[${i}].commit` })));
    const found = await objects.lookup(targets.map((target, i) => objectName(target, commits[i]!, commits[i]!)));
    const writes = inputs.map((input, i): RungWrite => ({
      path: targets[i]!.path,
      kind: input.kind,
      commit: commits[i]!,
      objectId: this.anchoredObject(targets[i]!, input.kind, commits[i]!, found[i], `rungs[${i}]`, objects.shownAs),
      summary: input.summary.trim(),
      body: input.body,
      expectedRevision: input.expected_revision,
    }));
    return this.store.write(repo.name, writes, actor);
  }

  /** The object id a rung records at its commit, or a refusal saying what is wrong with the anchor. */
  private anchoredObject(target: RungTarget, kind: RungKind, commit: string, found: GitObject | undefined, at: string, shownAs: string): string {
    switch (target.shape) {
      case 'repo':
        // The commit exists, so its root tree does.
        return found!.oid;
      case 'changeset':
        // A changeset is its commit.
        return commit;
      case 'release':
        if (found === undefined) throw new ToolError(`${at}: tag ${target.tag} does not exist in ${shownAs}`, 'not_found');
        if (found.oid !== commit) throw new ToolError(`${at}: tag ${target.tag} points at ${short(found.oid)}, not at ${short(commit)}; anchor the release rung to the tag's commit`, 'bad_argument');
        return found.oid;
      case 'tree': {
        if (found === undefined) throw new ToolError(`${at}: ${target.path} does not exist at ${short(commit)}`, 'not_found');
        const actual = kindOfObject(found);
        if (actual !== kind) throw new ToolError(`${at}: ${target.path} is a ${actual} at ${short(commit)}, not a ${kind}; write it with kind "${actual}"`, 'bad_argument');
        return found.oid;
      }
    }
  }

  /** A rung with its freshness at `commit` (default HEAD) and the summaries of the rungs directly under it. */
  async readRung(repo: LadderRepository, path: string, commit?: string): Promise<RungReading> {
    const target = parseRungPath(path);
    const objects = new RepositoryObjects(repo.git, repo.signal);
    const checkedAt = await objects.commitOrHead(commit);
    const rung = await this.store.get(repo.name, target.path);
    const children = target.shape === 'repo' || target.shape === 'tree' ? await this.store.children(repo.name, target.path) : [];
    const names = [objectName(target, checkedAt, rung?.commit ?? checkedAt), ...children.map((child) => objectName(storedTarget(child.path), checkedAt, child.commit))];
    const [current, ...childObjects] = await objects.lookup(names);
    const childSummaries = children.map((child, i): ChildSummary => ({
      path: child.path,
      kind: child.kind,
      summary: child.summary,
      revision: child.revision,
      freshness: freshnessOf(child.objectId, childObjects[i]),
    }));
    const base = { repo: repo.name, path: target.path, checkedAt, children: childSummaries };
    if (rung === undefined) {
      if (current === undefined || target.shape === 'changeset') {
        throw new ToolError(`${target.path} has no rung${target.shape === 'changeset' ? '' : ` and does not exist at ${short(checkedAt)}`}`, 'not_found');
      }
      return { ...base, rung: null, freshness: 'unwritten' };
    }
    const freshness = freshnessOf(rung.objectId, current);
    return { ...base, rung: { ...rung, freshness, currentObjectId: current?.oid ?? null }, freshness };
  }

  /** Every revision of a rung, newest first. */
  async history(repo: LadderRepository, path: string): Promise<Rung[]> {
    return this.store.history(repo.name, parseRungPath(path).path);
  }

  /**
   * The whole ladder at `commit` (default HEAD): every rung with its freshness, and every path
   * with no rung, from one `ls-tree` of the commit, one look-up of the rungs outside the tree and
   * one listing of the tags.
   */
  async tree(repo: LadderRepository, commit?: string): Promise<LadderTree> {
    const objects = new RepositoryObjects(repo.git, repo.signal);
    const checkedAt = await objects.commitOrHead(commit);
    const rungs = await this.store.list(repo.name);
    const targets = rungs.map((rung) => storedTarget(rung.path));
    const outsideTree = targets.flatMap((target, i) => (target.shape === 'tree' ? [] : [i]));
    const [listing, looked, tags] = await Promise.all([
      objects.listTree(checkedAt),
      objects.lookup(outsideTree.map((i) => objectName(targets[i]!, checkedAt, rungs[i]!.commit))),
      // Every tag, whatever `commit` is: a release rung is measured against where its tag points
      // now (see objectName), not against the commit checked, so the releases still to write are
      // the repository's tags, not the tags that happen to reach that commit.
      objects.commitTags(UNWRITTEN_RELEASES_MAX_TAGS),
    ]);
    const outsideObjects = new Map(outsideTree.map((rungIndex, j) => [rungIndex, looked[j]]));
    const counts = emptyCounts();
    const entries = rungs.map((rung, i): TreeEntry => {
      const current = targets[i]!.shape === 'tree' ? listing.get(rung.path) : outsideObjects.get(i);
      const freshness = freshnessOf(rung.objectId, current);
      counts[freshness]++;
      return { path: rung.path, kind: rung.kind, summary: rung.summary, revision: rung.revision, commit: rung.commit, author: rung.author, writtenAt: rung.writtenAt, freshness };
    });
    const written = new Set(rungs.map((rung) => rung.path));
    const unwritten: UnwrittenPath[] = written.has(REPO_PATH) ? [] : [{ path: REPO_PATH, kind: 'repo' }];
    for (const [path, object] of listing) {
      if (!written.has(path)) unwritten.push({ path, kind: kindOfObject(object) });
    }
    for (const tag of tags.names) {
      const path = releasePathOf(tag);
      if (path !== undefined && !written.has(path)) unwritten.push({ path, kind: 'release' });
    }
    counts.unwritten = unwritten.length;
    return { repo: repo.name, checkedAt, rungs: entries, unwritten, unwrittenReleasesTruncated: tags.truncated, counts };
  }

  /** Full-text search over every repository's rungs (or one's), best first, with snippets. */
  async search(query: string, request: SearchRequest = {}): Promise<SearchResult> {
    if (query.length > QUERY_MAX_CHARS) throw new ToolError(`query is ${query.length} characters long; the limit is ${QUERY_MAX_CHARS}`, 'bad_argument');
    const limit = request.limit ?? SEARCH_DEFAULT_LIMIT;
    if (!Number.isInteger(limit) || limit < 1 || limit > SEARCH_MAX_LIMIT) throw new ToolError(`limit must be a whole number from 1 to ${SEARCH_MAX_LIMIT}`, 'bad_argument');
    return this.store.search(query, { repo: request.repo, limit });
  }

  /** Rebuilds the repository's search entries and measures every rung's freshness at HEAD again. */
  async reindex(repo: LadderRepository, progress?: (message: string) => void): Promise<ReindexResult> {
    progress?.('rebuilding the search index');
    const indexed = await this.store.reindex(repo.name);
    progress?.(`${indexed} ${indexed === 1 ? 'rung' : 'rungs'} indexed; measuring their freshness at HEAD`);
    const tree = await this.tree(repo);
    const outdated = tree.rungs.flatMap((entry) => (entry.freshness === 'stale' || entry.freshness === 'missing' ? [{ path: entry.path, freshness: entry.freshness }] : []));
    return { repo: repo.name, indexed, checkedAt: tree.checkedAt, counts: tree.counts, outdated };
  }
}
