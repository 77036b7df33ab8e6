import { isUtf8 } from 'node:buffer';
import { ToolError } from '../errors.js';
import { decodeGitName, encodeGitName, utf8SequenceLength } from './names.js';

const MAX_REVISION_CHARS = 512;
const MAX_VALUE_CHARS = 1024;

function shown(value: string): string {
  return JSON.stringify(value.length > 80 ? `${value.slice(0, 80)}…` : value);
}

/**
 * Refuses a value git could read as an option (`--output=…`, `--upload-pack=…`, `-c …`) before
 * git runs. Values also go after `--end-of-options` or `--`, or inside one `--key=value` argument;
 * this refusal is the first line, and it names the argument so the model can fix it.
 */
export function refuseOptionLike(value: string, argument: string): void {
  if (value.startsWith('-')) {
    throw new ToolError(`${argument} ${shown(value)} starts with "-", so git could take it for an option; it is refused and git was not run`, 'option_like');
  }
}

/** A free-text value such as `author`, `grep` or `since`: one line, not option-like, bounded. */
export function checkGitValue(value: string, argument: string): string {
  refuseOptionLike(value, argument);
  if (value.length === 0) throw new ToolError(`${argument} is empty; leave it out instead`, 'bad_argument');
  if (value.length > MAX_VALUE_CHARS) throw new ToolError(`${argument} is ${value.length} characters long; the limit is ${MAX_VALUE_CHARS}`, 'bad_argument');
  if (/[\0-\x1f\x7f]/.test(value)) throw new ToolError(`${argument} ${shown(value)} holds a control character (a newline?); give one line`, 'bad_argument');
  return value;
}

/** A revision as written by the model (`HEAD~2`, `main`, `v1.0`, a hash), checked before git sees it. */
export function checkRevision(value: string, argument: string): string {
  checkGitValue(value, argument);
  if (value.length > MAX_REVISION_CHARS) throw new ToolError(`${argument} is ${value.length} characters long; the limit is ${MAX_REVISION_CHARS}`, 'bad_argument');
  return value;
}

/**
 * A path inside the repository, relative to its top folder, as the bytes git stores. `./` and a
 * trailing `/` are dropped; `.` (or an empty path) means the whole tree and gives an empty buffer.
 * Absolute paths, `..` and option-like paths are refused.
 */
export function repositoryPath(value: string, argument: string): Buffer {
  refuseOptionLike(value, argument);
  if (value.includes('\0')) throw new ToolError(`${argument} contains a NUL byte; remove it`, 'bad_argument');
  if (value.startsWith('/')) throw new ToolError(`${argument} ${shown(value)} is absolute; give a path relative to the repository's top folder`, 'bad_argument');
  const parts = value.split('/').filter((part) => part !== '' && part !== '.');
  if (parts.includes('..')) throw new ToolError(`${argument} ${shown(value)} contains "..": give a path inside the repository, relative to its top folder`, 'bad_argument');
  const bytes = encodeGitName(parts.join('/'));
  refuseOptionLike(decodeGitName(bytes), argument);
  return bytes;
}

const GLOB_SPECIAL = new Set(['*', '?', '[', '\\']);

/**
 * A pathspec that matches exactly `path` (and everything under it when it is a folder). Git
 * arguments pass through Node as UTF-8, so a name with other bytes is matched by a glob with `?`
 * standing for each of them; such a glob can match another name that differs only in those bytes.
 */
export function exactPathspec(path: Buffer): string {
  if (isUtf8(path)) return `:(literal)${path.toString('utf8')}`;
  let glob = '';
  let i = 0;
  while (i < path.length) {
    const length = utf8SequenceLength(path, i);
    if (length === 0) {
      glob += '?';
      i++;
      continue;
    }
    const char = path.subarray(i, i + length).toString('utf8');
    glob += GLOB_SPECIAL.has(char) ? `\\${char}` : char;
    i += length;
  }
  return `:(glob)${glob}`;
}

/** A path that must reach git as one exact argument (blame's file), which Node can pass only as UTF-8. */
export function utf8PathArgument(path: Buffer, argument: string): string {
  if (!isUtf8(path)) {
    throw new ToolError(`${argument} ${shown(decodeGitName(path))} is not valid UTF-8, and this command can only be given UTF-8 file names`, 'bad_argument');
  }
  return path.toString('utf8');
}
