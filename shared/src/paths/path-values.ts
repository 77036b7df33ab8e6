import { posix } from 'node:path';

/**
 * Words that make an argument name a path: `path`, `file`, `src`, `target`, … alone or inside a
 * longer name (`source_path`, `targetDir`, `file-name`). `url` is not among them: a URL is a path
 * only when it is a `file:` one, which the value says.
 */
const PATH_WORDS = new Set([
  'path', 'paths', 'pathname', 'file', 'files', 'filename', 'filenames', 'filepath', 'filepaths',
  'source', 'sources', 'destination', 'destinations', 'src', 'dest', 'target', 'targets',
  'directory', 'directories', 'dir', 'dirs', 'folder', 'folders', 'cwd', 'uri', 'uris', 'root', 'roots',
]);

/** A scheme of two letters or more (`https:`), which a Windows drive (`C:`) is not. */
const URL_SCHEME = /^[a-z][a-z0-9+.-]+:/i;
const FILE_URL = /^file:/i;

function wordsOf(name: string): string[] {
  return name
    .replace(/([a-z0-9])([A-Z])/g, '$1 $2')
    .toLowerCase()
    .split(/[^a-z0-9]+/)
    .filter((word) => word.length > 0);
}

/** Whether an argument's name says it holds a path (see PATH_WORDS). */
export function isPathLikeName(name: string): boolean {
  return wordsOf(name).some((word) => PATH_WORDS.has(word));
}

/**
 * Whether a string argument is to be read as a path: a `file:` URL whatever its name, or a value
 * under a path-like name (or a `uri` format) that is not a URL of another scheme (an `https:`
 * source is not a local file).
 */
export function isPathValue(value: string, pathLikeName: boolean): boolean {
  if (FILE_URL.test(value)) return true;
  return pathLikeName && !URL_SCHEME.test(value);
}

/** `a/./b/../c/` as `a/c`: `.`, `..` and repeated or trailing slashes resolved as a server would. */
function normalizePath(path: string): string {
  const normalized = posix.normalize(path);
  return normalized.length > 1 && normalized.endsWith('/') ? normalized.slice(0, -1) : normalized;
}

/** The path of a `file:` URL, percent-decoded, or undefined for a value that is none. */
function fileUrlPath(value: string): string | undefined {
  if (!FILE_URL.test(value)) return undefined;
  try {
    return decodePercent(new URL(value).pathname);
  } catch {
    return decodePercent(value.replace(FILE_URL, '').replace(/^\/\/[^/]*/, ''));
  }
}

/** Every `%XX` run decoded, again while that changes anything (a `%252E` is a `.` to a server that decodes twice); a run that is not UTF-8 stays as it is. */
function decodePercent(text: string): string {
  let current = text;
  for (let round = 0; round < 4 && current.includes('%'); round++) {
    const next = current.replace(/(?:%[0-9A-Fa-f]{2})+/g, (run) => {
      try {
        return decodeURIComponent(run);
      } catch {
        return run;
      }
    });
    if (next === current) break;
    current = next;
  }
  return current;
}

/**
 * The value as a rule that allows it compares it: a `file:` URL as its path, anything else with
 * `.`, `..` and repeated slashes resolved. Percent signs of a plain path stay (they are part of
 * the name to a server that does not decode), so an allow never matches more than was written.
 */
export function canonicalPathValue(value: string): string {
  return normalizePath(fileUrlPath(value) ?? value);
}

/**
 * Every file a server might take the value to name: as written, normalised, with backslashes as
 * separators, percent-decoded, a `file:` URL's path. A restrictive check (a deny, the protected
 * set) looks at all of them, so no spelling slips past.
 */
export function pathValueForms(value: string): string[] {
  const forms = new Set<string>();
  const add = (form: string) => {
    if (form.length === 0) return;
    forms.add(normalizePath(form));
    if (form.includes('\\')) forms.add(normalizePath(form.replace(/\\/g, '/')));
  };
  // A file: URL's path first: it is the form a message shows and an allow rule names.
  const fromUrl = fileUrlPath(value);
  if (fromUrl !== undefined) add(fromUrl);
  add(value);
  add(decodePercent(value));
  return [...forms];
}
