import { constants, promises as fsp, type Stats } from 'node:fs';
import { basename, dirname, join, resolve } from 'node:path';
import { randomBytes } from 'node:crypto';
import { isDeepStrictEqual, parseArgs } from 'node:util';
import { applyEdits, format, modify, parse, printParseErrorCode, type Edit, type FormattingOptions, type JSONPath, type ParseError } from 'jsonc-parser';
import { z } from 'zod';
import { checkRoots, errorMessage, unifiedDiff, usageMistake } from '@bulkhead/core';
import {
  CLIENT_SPECS,
  CLIENTS,
  configFile,
  currentHost,
  GATEWAY_SCRIPT,
  gatewayEntry,
  isClientId,
  scopesOf,
  snippetOf,
  type ClientSpec,
  type Host,
  type Scope,
  type ServerEntry,
} from './clients.js';

export const SETUP_USAGE = `usage: bulkhead setup <client> [options]

Adds a bulkhead entry (\`bulkhead start --root ...\`) to an MCP client's configuration file,
keeping every other server, setting and comment; the previous file is kept as <file>.bak-<time>.

clients: ${CLIENTS.join(', ')}

options:
  --root DIR          a folder the gateway serves (repeatable; default: the current folder);
                      the first is also the project folder of --scope project
  --scope SCOPE       project (default, where the client has project files: claude-code, cursor,
                      vscode) or user (the client's file in your home folder)
  --name NAME         the entry's name (default: bulkhead)
  --config-file PATH  write this file instead of the client's usual one
  --dry-run           print the diff of what would change; write nothing
  -h, --help          this text`;

const OPTIONS = {
  root: { type: 'string', multiple: true },
  scope: { type: 'string' },
  name: { type: 'string' },
  'config-file': { type: 'string' },
  'dry-run': { type: 'boolean' },
  help: { type: 'boolean', short: 'h' },
} as const;

/** Claude Code accepts only these names; the other clients accept them too. */
const NAME_PATTERN = /^[A-Za-z0-9_-]{1,64}$/;
/** Fields that make an entry a remote server; left beside `command` they would confuse the client. */
const REMOTE_FIELDS = ['url', 'serverUrl'] as const;

/** Bad arguments: exit 2 with the usage. */
class SetupUsageError extends Error {}
/** The file cannot be edited safely: exit 1, nothing written. */
class SetupRefusal extends Error {}

/** What the command may differ in under test; each defaults to this process. */
export interface SetupContext {
  readonly host?: Host;
  readonly cwd?: string;
  readonly script?: string;
  readonly execPath?: string;
  readonly stdout?: (text: string) => void;
  readonly stderr?: (text: string) => void;
}

interface Request {
  readonly spec: ClientSpec;
  readonly scope: Scope;
  readonly name: string;
  readonly roots: readonly string[];
  readonly file: string;
  readonly dryRun: boolean;
}

async function requestFrom(argv: readonly string[], context: SetupContext): Promise<Request | 'help'> {
  let parsed;
  try {
    parsed = parseArgs({ args: [...argv], options: OPTIONS, allowPositionals: true, strict: true });
  } catch (error) {
    throw new SetupUsageError(usageMistake(error, 'bulkhead setup') ?? errorMessage(error));
  }
  const { values, positionals } = parsed;
  if (values.help) return 'help';
  const [client, ...extra] = positionals;
  if (!client) throw new SetupUsageError(`setup needs a client: ${CLIENTS.join(', ')}`);
  if (!isClientId(client)) throw new SetupUsageError(`unknown client ${client}; the clients are ${CLIENTS.join(', ')}`);
  if (extra.length > 0) throw new SetupUsageError(`setup takes one client, not also ${extra.join(' ')}`);
  const spec = CLIENT_SPECS[client];
  const scopes = scopesOf(spec);
  const scope = values.scope ?? scopes[0]!;
  if (scope !== 'user' && scope !== 'project') throw new SetupUsageError(`--scope is user or project, not ${scope}`);
  if (!scopes.includes(scope)) throw new SetupUsageError(`${spec.title} has only a user configuration; --scope project does not apply to it`);
  const name = values.name ?? 'bulkhead';
  if (!NAME_PATTERN.test(name)) throw new SetupUsageError(`--name ${JSON.stringify(name)} may hold only letters, digits, _ and - (1 to 64 of them)`);
  const cwd = context.cwd ?? process.cwd();
  const roots = (values.root ?? [cwd]).map((root) => existingFolder(cwd, root));
  const configFlag = values['config-file'];
  if (configFlag === '') throw new SetupUsageError('--config-file needs a path');
  const file = configFlag === undefined ? configFile(spec, scope, context.host ?? currentHost(), roots[0]!) : resolve(cwd, configFlag);
  return { spec, scope, name, roots, file, dryRun: values['dry-run'] ?? false };
}

/** The same check, in the same words, as every server makes of its roots. */
function existingFolder(cwd: string, root: string): string {
  try {
    return checkRoots([root], cwd)[0]!;
  } catch (error) {
    throw new SetupUsageError(errorMessage(error));
  }
}

/** The file as it is now: absent, or its text with what must still hold when it is replaced. */
type Current = { readonly kind: 'absent'; readonly path: string } | { readonly kind: 'file'; readonly path: string; readonly text: string; readonly stat: Stats };

/** Reads `file`; a symlink is followed, so the link stays and its target is what gets edited. */
async function readCurrent(file: string): Promise<Current> {
  let path: string;
  try {
    path = await fsp.realpath(file);
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== 'ENOENT') throw error;
    const link = await fsp.lstat(file).catch(() => undefined);
    if (link?.isSymbolicLink()) throw new SetupRefusal(`${file} is a symlink to a file that does not exist; nothing was written`);
    return { kind: 'absent', path: file };
  }
  const stat = await fsp.stat(path);
  if (!stat.isFile()) throw new SetupRefusal(`${file} is not a regular file; nothing was written`);
  return { kind: 'file', path, text: await fsp.readFile(path, 'utf8'), stat };
}

const PARSE_PROBLEMS: Partial<Record<string, string>> = {
  InvalidCommentToken: 'a comment, which this client does not accept in its JSON',
  PropertyNameExpected: 'a property name expected (a trailing comma?)',
  ValueExpected: 'a value expected (a trailing comma?)',
  CommaExpected: 'a comma expected',
  ColonExpected: 'a colon expected',
  CloseBraceExpected: 'a } expected',
  CloseBracketExpected: 'a ] expected',
  EndOfFileExpected: 'the end of the file expected',
};

function whereIs(text: string, offset: number): string {
  const before = text.slice(0, offset);
  const line = before.split('\n').length;
  return `line ${line}, column ${offset - (before.lastIndexOf('\n') + 1) + 1}`;
}

function describeValue(value: unknown): string {
  if (value === null) return 'null';
  if (Array.isArray(value)) return 'an array';
  return typeof value === 'object' ? 'an object' : `a ${typeof value}`;
}

/** Editor settings that match the file's own, so inserted lines look like their neighbours. */
function formattingOf(text: string): FormattingOptions {
  const indent = /^([ \t]+)\S/m.exec(text)?.[1];
  const tabs = indent?.startsWith('\t') ?? false;
  return { insertSpaces: !tabs, tabSize: tabs ? 1 : (indent?.length ?? 2), eol: text.includes('\r\n') ? '\r\n' : '\n' };
}

/** A line or block comment that ends the line after a value (`} // note`), with the comma before it, if any. */
const COMMENT_TAIL = /^([ \t]*,)?(?:[ \t]*(?:\/\/[^\r\n]*|\/\*(?:(?!\*\/)[^\r\n])*\*\/))+/;

/**
 * A property appended after a last sibling whose line ends in a comment goes on a line of its own
 * below that comment, so the comment stays on the line it describes. Undefined for any other edit.
 */
function appendedBelowComment(text: string, edit: Edit, path: JSONPath, value: unknown, formatting: FormattingOptions): string | undefined {
  // jsonc-parser appends a property as `,"name": value` right after the previous one's end.
  const tail = edit.length === 0 && edit.content.startsWith(',') ? COMMENT_TAIL.exec(text.slice(edit.offset)) : null;
  if (!tail) return undefined;
  const lineStart = text.lastIndexOf('\n', edit.offset - 1) + 1;
  const indent = /^[ \t]*/.exec(text.slice(lineStart))![0];
  const eol = formatting.eol ?? '\n';
  const unit = formatting.insertSpaces === false ? '\t' : ' '.repeat(formatting.tabSize ?? 2);
  const property = `${JSON.stringify(path.at(-1))}: ${JSON.stringify(value, null, unit).split('\n').join(eol + indent)}`;
  const at = edit.offset + tail[0].length;
  return `${text.slice(0, edit.offset)}${tail[1] ? '' : ','}${text.slice(edit.offset, at)}${eol}${indent}${property}${text.slice(at)}`;
}

/**
 * `text` with the value at `path` set (or removed, for undefined). The edit is laid out like the
 * file, and only the edit: jsonc-parser's own formatting would re-lay the whole lines around it,
 * reflowing a neighbour written on one line.
 */
function setAt(text: string, path: JSONPath, value: unknown, formatting: FormattingOptions): string {
  const edits = modify(text, path, value, {});
  const below = edits.length === 1 ? appendedBelowComment(text, edits[0]!, path, value, formatting) : undefined;
  if (below !== undefined) return below;
  let out = text;
  for (const edit of edits.sort((a, b) => b.offset - a.offset)) {
    out = applyEdits(out, [edit]);
    if (edit.content.length === 0) continue;
    // The range reaches over the gaps on both sides (into the tokens around them), so that a `{}`
    // opens up and the line break after the new text takes the file's indentation and line ending.
    let end = edit.offset + edit.content.length;
    while (end < out.length && /\s/.test(out[end]!)) end++;
    const start = Math.max(0, edit.offset - 1);
    out = applyEdits(out, format(out, { offset: start, length: Math.min(out.length, end + 1) - start }, formatting));
  }
  return out;
}

/**
 * The file's new text with the entry `name` in it, or the same text when it already holds the
 * entry. Only the entry's own fields are touched, with jsonc-parser edits, so every other key,
 * comment and line stays as it was. An existing entry keeps what the user added to it (env,
 * disabled, ...); the fields bulkhead owns are set. Throws SetupRefusal when the text is not a
 * config this edit can be trusted on.
 */
export function mergedConfig(text: string | undefined, spec: ClientSpec, name: string, entry: ServerEntry, shownAs: string): string {
  if (text === undefined || text.trim() === '') return snippetOf(spec, name, entry);
  const bom = text.startsWith('\uFEFF') ? '\uFEFF' : '';
  const body = text.slice(bom.length);
  const errors: ParseError[] = [];
  const value: unknown = parse(body, errors, { disallowComments: !spec.jsonc, allowTrailingComma: spec.jsonc, allowEmptyContent: false });
  if (errors.length > 0) {
    const first = errors[0]!;
    const code = printParseErrorCode(first.error);
    throw new SetupRefusal(
      `${shownAs} is not valid ${spec.jsonc ? 'JSONC' : 'JSON'} (${whereIs(body, first.offset)}: ${PARSE_PROBLEMS[code] ?? code}); nothing was written. Fix it, or move it away to start afresh.`,
    );
  }
  const key = spec.serversKey;
  const shape = z.looseObject({ [key]: z.record(z.string(), z.unknown()).optional() }).safeParse(value);
  if (!shape.success) {
    const servers = value !== null && typeof value === 'object' && !Array.isArray(value) ? (value as Record<string, unknown>)[key] : undefined;
    const problem = servers === undefined ? `its top level is ${describeValue(value)}, not an object` : `its "${key}" is ${describeValue(servers)}, not an object of servers`;
    throw new SetupRefusal(`${shownAs}: ${problem}; nothing was written`);
  }
  const existing = shape.data[key]?.[name];
  const desired = spec.shape(entry);
  const formatting = formattingOf(body);
  const set = (current: string, path: string[], next: unknown) => setAt(current, [key, name, ...path], next, formatting);
  const existingFields = z.record(z.string(), z.unknown()).safeParse(existing);
  if (!existingFields.success) return bom + set(body, [], desired);
  let out = body;
  for (const [field, next] of Object.entries(desired)) {
    // The user's variables stay theirs; an empty env is only the client's default form.
    if (field === 'env' && field in existingFields.data) continue;
    if (!isDeepStrictEqual(existingFields.data[field], next)) out = set(out, [field], next);
  }
  // A remote entry becomes a local one: what only a remote entry has goes with its URL.
  if (REMOTE_FIELDS.some((field) => field in existingFields.data)) {
    const remoteOnly = [...REMOTE_FIELDS, 'headers', ...('type' in desired ? [] : ['type'])];
    for (const field of remoteOnly) if (field in existingFields.data) out = set(out, [field], undefined);
  }
  return out === body ? text : bom + out;
}

function timestamp(now: Date): string {
  return now.toISOString().replace(/\.\d+Z$/, 'Z').replace(/[-:]/g, '');
}

/** A copy of the file's previous text beside it, never over an earlier backup. */
async function writeBackup(current: Extract<Current, { kind: 'file' }>): Promise<string> {
  const stem = `${current.path}.bak-${timestamp(new Date())}`;
  for (let attempt = 1; ; attempt++) {
    const backup = attempt === 1 ? stem : `${stem}-${attempt}`;
    try {
      await fsp.writeFile(backup, current.text, { flag: 'wx', mode: current.stat.mode & 0o777 });
      return backup;
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== 'EEXIST' || attempt >= 100) throw error;
    }
  }
}

function unchangedSince(before: Stats, now: Stats): boolean {
  return before.ino === now.ino && before.size === now.size && before.mtimeMs === now.mtimeMs;
}

/**
 * Replaces (or creates) the file so that it holds the old text or the new, whole, at every moment:
 * a synced temp file beside it is renamed over it, with the old file's mode. A file the client
 * rewrote meanwhile (Claude Code rewrites ~/.claude.json often) is not overwritten; one that
 * appeared meanwhile is not replaced. Returns the backup, if there was a previous file.
 */
async function writeConfig(current: Current, text: string): Promise<string | undefined> {
  const folder = dirname(current.path);
  await fsp.mkdir(folder, { recursive: true });
  const backup = current.kind === 'file' ? await writeBackup(current) : undefined;
  const mode = current.kind === 'file' ? current.stat.mode & 0o7777 : 0o644;
  const temp = join(folder, `.${basename(current.path)}.${process.pid}.${randomBytes(4).toString('hex')}.tmp`);
  try {
    const handle = await fsp.open(temp, constants.O_WRONLY | constants.O_CREAT | constants.O_EXCL, mode);
    try {
      await handle.writeFile(text);
      // A new file gets the umask's mode; a replaced one keeps its own.
      if (current.kind === 'file') await handle.chmod(mode);
      await handle.sync();
    } finally {
      await handle.close();
    }
    if (current.kind === 'absent') {
      // link, unlike rename, fails rather than replace a file created since it was found absent.
      await fsp.link(temp, current.path).catch((error: NodeJS.ErrnoException) => {
        throw error.code === 'EEXIST' ? new SetupRefusal(`${current.path} appeared while setup ran; nothing was written. Run setup again.`) : error;
      });
    } else {
      const now = await fsp.stat(current.path).catch(() => undefined);
      if (!now || !unchangedSince(current.stat, now)) {
        throw new SetupRefusal(`${current.path} changed while setup ran (is the client writing it?); nothing was written (the backup ${backup} holds the text setup read). Run setup again.`);
      }
      await fsp.rename(temp, current.path);
    }
    return backup;
  } finally {
    await fsp.rm(temp, { force: true });
  }
}

/** `bulkhead setup <client>`: returns the exit code (0 done or up to date, 1 refused, 2 usage). */
export async function runSetup(argv: readonly string[], context: SetupContext = {}): Promise<number> {
  const out = context.stdout ?? ((text: string) => void process.stdout.write(text));
  const err = context.stderr ?? ((text: string) => void process.stderr.write(text));
  try {
    const request = await requestFrom(argv, context);
    if (request === 'help') {
      out(`${SETUP_USAGE}\n`);
      return 0;
    }
    const { spec, scope, name, file, dryRun } = request;
    const entry = gatewayEntry(request.roots, context.script ?? GATEWAY_SCRIPT, context.execPath ?? process.execPath);
    const current = await readCurrent(file);
    const before = current.kind === 'file' ? current.text : undefined;
    const after = mergedConfig(before, spec, name, entry, file);
    if (after === before) {
      out(`${spec.title}: ${file} already has this ${name} entry; already up to date, nothing was written.\n`);
      return 0;
    }
    if (dryRun) {
      out(`${unifiedDiff(file, before, after, Number.MAX_SAFE_INTEGER, { before: file, after: file }).text}\n`);
      out(`dry run: nothing was written; without --dry-run ${file} would be ${before === undefined ? 'created' : 'changed (the previous file kept as a backup beside it)'}.\n`);
      return 0;
    }
    const backup = await writeConfig(current, after);
    out(
      `${spec.title}: ${before === undefined ? 'created' : 'updated'} ${file} with the ${name} entry` +
        `${current.path === file ? '' : ` (through the symlink, in ${current.path})`}\n` +
        (backup ? `  the previous file is kept in ${backup}\n` : '') +
        `  command: ${entry.command}\n  args: ${JSON.stringify(entry.args)}\n` +
        `next: ${spec.next(scope, request.roots[0]!, name)}\n`,
    );
    return 0;
  } catch (error) {
    if (error instanceof SetupUsageError) {
      err(`bulkhead: ${error.message} (see \`bulkhead setup --help\`)\n`);
      return 2;
    }
    if (error instanceof SetupRefusal) {
      err(`bulkhead: ${error.message}\n`);
      return 1;
    }
    // The file system said no (permissions, a full disk): the temp file is gone, the config untouched.
    if (typeof (error as NodeJS.ErrnoException).code === 'string') {
      err(`bulkhead: ${errorMessage(error)}; the configuration file was not changed\n`);
      return 1;
    }
    throw error;
  }
}
