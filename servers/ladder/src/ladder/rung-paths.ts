import { checkGitValue, decodeGitName, encodeGitName, repositoryPath, ToolError } from '@bulkhead/core';

export const RUNG_KINDS = ['repo', 'directory', 'file', 'release', 'changeset'] as const;
export type RungKind = (typeof RUNG_KINDS)[number];

export const REPO_PATH = '_repo';
const RELEASE_PREFIX = '_release/';
const CHANGESET_PREFIX = '_changeset/';
const MAX_PATH_CHARS = 4096;

/**
 * What a rung path names. Paths in the tree keep their bytes, because git names are bytes and a
 * name that is not UTF-8 is only shown escaped (see decodeGitName).
 */
export type RungTarget =
  | { readonly shape: 'repo'; readonly path: string }
  | { readonly shape: 'release'; readonly path: string; readonly tag: string }
  | { readonly shape: 'changeset'; readonly path: string; readonly changeset: string }
  | { readonly shape: 'tree'; readonly path: string; readonly bytes: Buffer };

/** The parts of check-ref-format that matter here: no `..`, `@{`, spaces, control or glob characters, no `.`/`/` at the ends. */
const TAG_NAME = /^(?![./])(?!.*\.\.)(?!.*@\{)(?!.*\/\/)(?!.*\.lock$)[^\s~^:?*[\\\0-\x1f\x7f]+(?<![./])$/;
const CHANGESET_ID = /^[A-Za-z0-9][A-Za-z0-9._-]{0,127}$/;

/** Control characters would break the line-per-object protocol of `git cat-file --batch-check`. */
const CONTROL = /[\0-\x1f\x7f]/;

function shown(value: string): string {
  return JSON.stringify(value.length > 80 ? `${value.slice(0, 80)}…` : value);
}

/**
 * Reads a rung path as given by an agent: `_repo`, `_release/<tag>`, `_changeset/<id>`, or a path
 * relative to the repository's top folder (`src`, `src/index.js`; `./` and a trailing `/` dropped).
 */
export function parseRungPath(value: string, argument = 'path'): RungTarget {
  if (value.length > MAX_PATH_CHARS) throw new ToolError(`${argument} is ${value.length} characters long; the limit is ${MAX_PATH_CHARS}`, 'bad_argument');
  if (CONTROL.test(value)) throw new ToolError(`${argument} ${shown(value)} holds a control character (a newline?); give one path`, 'bad_argument');
  if (value === REPO_PATH) return { shape: 'repo', path: REPO_PATH };
  if (value.startsWith(RELEASE_PREFIX)) {
    const tag = value.slice(RELEASE_PREFIX.length);
    checkGitValue(tag, `${argument} (the tag after ${RELEASE_PREFIX})`);
    if (!TAG_NAME.test(tag)) throw new ToolError(`${argument} ${shown(value)}: ${shown(tag)} is not a valid tag name`, 'bad_argument');
    return { shape: 'release', path: value, tag };
  }
  if (value.startsWith(CHANGESET_PREFIX)) {
    const changeset = value.slice(CHANGESET_PREFIX.length);
    if (!CHANGESET_ID.test(changeset)) {
      throw new ToolError(`${argument} ${shown(value)}: a changeset id is 1-128 letters, digits, ".", "_" or "-", starting with a letter or digit`, 'bad_argument');
    }
    return { shape: 'changeset', path: value, changeset };
  }
  const bytes = repositoryPath(value, argument);
  if (bytes.length === 0) throw new ToolError(`${argument} ${shown(value)} names the whole repository; its rung is at "${REPO_PATH}"`, 'bad_argument');
  const path = decodeGitName(bytes);
  const top = path.split('/')[0]!;
  if (top === REPO_PATH || top === '_release' || top === '_changeset') {
    throw new ToolError(`${argument} ${shown(value)}: "${top}" is reserved for the ladder's own rungs (${REPO_PATH}, _release/<tag>, _changeset/<id>)`, 'bad_argument');
  }
  return { shape: 'tree', path, bytes };
}

/**
 * The release path of a tag git listed, or undefined when parseRungPath would refuse it (a name
 * that starts with "-", is not UTF-8 or is too long), since no rung could ever be written there.
 */
export function releasePathOf(tag: string): string | undefined {
  const path = `${RELEASE_PREFIX}${tag}`;
  try {
    parseRungPath(path);
    return path;
  } catch (error) {
    if (error instanceof ToolError) return undefined;
    throw error;
  }
}

/** The target of a path that was stored, so validated already when it was written. */
export function storedTarget(path: string): RungTarget {
  if (path === REPO_PATH) return { shape: 'repo', path };
  if (path.startsWith(RELEASE_PREFIX)) return { shape: 'release', path, tag: path.slice(RELEASE_PREFIX.length) };
  if (path.startsWith(CHANGESET_PREFIX)) return { shape: 'changeset', path, changeset: path.slice(CHANGESET_PREFIX.length) };
  return { shape: 'tree', path, bytes: encodeGitName(path) };
}

/** The kind a path's shape requires; a path in the tree may be a directory or a file, which only git can tell. */
export function kindsForShape(target: RungTarget): readonly RungKind[] {
  switch (target.shape) {
    case 'repo':
      return ['repo'];
    case 'release':
      return ['release'];
    case 'changeset':
      return ['changeset'];
    case 'tree':
      return ['directory', 'file'];
  }
}
