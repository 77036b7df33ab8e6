import { lstatSync, mkdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { isMap, isScalar, isSeq, LineCounter, parseDocument, type Document, type Scalar, type YAMLSeq } from 'yaml';
import { canonicalJson } from '../audit/chain.js';
import { loadYamlFile } from '../config/yaml-file.js';
import { ConfigError } from '../errors.js';
import { parseToolPattern } from '../names.js';
import { permissionsSchema, PERMISSIONS_FILE } from '../permissions/schema.js';
import { replaceAtomically, withLock } from './files.js';
import { ApprovalError } from './types.js';
import { minuteTime, oneLine } from './wording.js';

/** A qualified tool name with nothing a pattern reads as a glob or an argument matcher: the rule names one tool. */
const EXACT_TOOL_NAME = /^[a-z][a-z0-9_]*:[A-Za-z0-9_.-]+(?:\/[A-Za-z0-9_.-]+)*$/;
const NEW_FILE_MODE = 0o644;
const NEW_FILE_HEADER =
  '# Bulkhead permissions (docs/configuration.md): deny wins over ask wins over allow; calls no list\n' +
  '# names follow autonomy over risk (supervised unless autonomy is set here).\n';

export interface AllowRuleOrigin {
  /** Who decided (`bulkhead approvals (user alice)`). */
  readonly by: string;
  readonly approvalId: string;
  readonly at: Date;
}

export interface WrittenAllowRule {
  readonly file: string;
  /** The entry under `allow:` (the qualified tool name). */
  readonly rule: string;
  /** 1-based line of the entry. */
  readonly line: number;
  /** False when the allow list named the tool already: nothing was written. */
  readonly added: boolean;
}

/** `` `fs_write:write_file` in /w/.bulkhead/permissions.yaml line 7 `` (and whether it was there already), as a decision records it. */
export function describeAllowRule(written: WrittenAllowRule): string {
  return `\`${written.rule}\` in ${written.file} line ${written.line}${written.added ? '' : ' (it was there already)'}`;
}

function refuse(qualifiedName: string, problem: string): ApprovalError {
  return new ApprovalError(`the always rule for ${qualifiedName} was not written: ${problem}`);
}

/** The text of the file, undefined when there is none; a symbolic link or anything but a regular file is refused. */
function currentText(file: string, qualifiedName: string): { text: string; mode: number } | undefined {
  let stat;
  try {
    stat = lstatSync(file);
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return undefined;
    throw refuse(qualifiedName, `${file} cannot be read (${(error as Error).message})`);
  }
  if (stat.isSymbolicLink()) throw refuse(qualifiedName, `${file} is a symbolic link, and bulkhead does not write through one; add \`- ${qualifiedName}\` under allow: in the file it points to`);
  if (!stat.isFile()) throw refuse(qualifiedName, `${file} is not a regular file`);
  return { text: readFileSync(file, 'utf8'), mode: stat.mode & 0o777 };
}

/** A rule that asks for this tool whatever allow says (ask and always_ask are checked before allow). */
function askingRule(value: ReturnType<typeof permissionsSchema.parse>, qualifiedName: string): string | undefined {
  for (const list of ['always_ask', 'ask'] as const) {
    const source = value[list].find((entry) => {
      const pattern = parseToolPattern(entry);
      return pattern.argument === undefined && pattern.matchesName(qualifiedName);
    });
    if (source !== undefined) return `${list} lists \`${source}\``;
  }
  return undefined;
}

function lineStart(text: string, offset: number): number {
  return text.lastIndexOf('\n', offset - 1) + 1;
}

function lineEnd(text: string, offset: number): number {
  const end = text.indexOf('\n', offset);
  return end === -1 ? text.length : end;
}

/** `text` with `lines` put after the line that holds `offset`. */
function insertAfterLine(text: string, offset: number, lines: string): string {
  const end = lineEnd(text, offset);
  if (end === text.length) return `${text}\n${lines}`;
  return `${text.slice(0, end + 1)}${lines}${text.slice(end + 1)}`;
}

/**
 * The entry written into the user's own text, so every other byte (comments, their alignment,
 * quoting, blank lines) stays as it was; undefined for a layout it does not handle, which then
 * goes through the Document printer.
 */
function spliced(text: string, document: Document, entry: string): string | undefined {
  const contents = document.contents;
  if (contents === null) return `${text}${text === '' || text.endsWith('\n') ? '' : '\n'}allow:\n${entry.replace(/^/gm, '  ')}\n`;
  if (!isMap(contents) || contents.flow) return undefined;
  const pair = contents.items.find((item) => isScalar(item.key) && item.key.value === 'allow');
  if (!pair) return `${text}${text.endsWith('\n') ? '' : '\n'}allow:\n${entry.replace(/^/gm, '  ')}\n`;
  const key = pair.key as Scalar;
  const list = pair.value;
  if (!isSeq(list) || !list.range || !key.range) return undefined;
  if (list.flow) {
    // `allow: [a, b]   # note` becomes a block list under `allow:   # note`.
    const keyIndent = ' '.repeat(key.range[0] - lineStart(text, key.range[0]));
    const items = list.items.map((item) => (isScalar(item) && item.range ? text.slice(item.range[0], item.range[1]) : undefined));
    if (items.some((item) => item === undefined)) return undefined;
    const end = lineEnd(text, list.range[1]);
    const block = [...items.map((item) => `- ${item}`), ...entry.split('\n')].map((line) => `${keyIndent}  ${line}`).join('\n');
    const before = text.slice(0, list.range[0]).replace(/[ \t]+$/, '');
    return `${before}${text.slice(list.range[1], end)}\n${block}${end === text.length ? '\n' : ''}${text.slice(end)}`;
  }
  const last = list.items.at(-1);
  if (!isScalar(last) || !last.range) return undefined;
  const indent = /^([ \t]*)-[ \t]+$/.exec(text.slice(lineStart(text, last.range[0]), last.range[0]))?.[1];
  if (indent === undefined) return undefined;
  return insertAfterLine(text, last.range[1], `${entry.split('\n').map((line) => `${indent}${line}`).join('\n')}\n`);
}

/** `spliced`, for a file with CRLF line ends too: the added lines end as the file's others do. */
function splicedKeepingLineEnds(text: string, entry: string): string | undefined {
  if (!text.includes('\r\n')) return spliced(text, parseDocument(text), entry);
  const unix = text.replace(/\r\n/g, '\n');
  return spliced(unix, parseDocument(unix), entry)?.replace(/\n/g, '\r\n');
}

/** The Document printer's version, for layouts the splice does not handle (it keeps comments and order, not alignment). */
function printed(document: Document, qualifiedName: string, comment: string): string {
  const item = document.createNode(qualifiedName) as Scalar;
  item.commentBefore = comment;
  const list = document.get('allow', true);
  if (isSeq(list)) {
    list.flow = false;
    (list as YAMLSeq).items.push(item);
  } else {
    if (!isMap(document.contents)) document.contents = document.createNode({});
    const created = document.createNode([]) as YAMLSeq;
    created.items.push(item);
    document.set('allow', created);
  }
  return document.toString({ lineWidth: 0 });
}

/** The 1-based line of `qualifiedName` under allow: in `text`, when it is there. */
function allowLine(text: string, qualifiedName: string): number | undefined {
  const lines = new LineCounter();
  const list = parseDocument(text, { lineCounter: lines }).get('allow', true);
  if (!isSeq(list)) return undefined;
  const item = list.items.find((candidate) => isScalar(candidate) && candidate.value === qualifiedName);
  return isScalar(item) && item.range ? lines.linePos(item.range[0]).line : undefined;
}

/** Whether `text` is exactly `expected` once parsed: the one check that a rewrite changed nothing but the allow list. */
function parsesTo(text: string, expected: unknown): boolean {
  const document = parseDocument(text);
  return document.errors.length === 0 && canonicalJson(document.toJS()) === canonicalJson(expected);
}

/**
 * Adds `- <qualifiedName>` under `allow:` of `<controlDir>/permissions.yaml`, with a comment on the
 * line before it naming who added it, when and for which approval. The file must exist as valid
 * YAML of the permissions schema (or not exist at all: then it is created); everything else in
 * it is kept as written. Refuses (ApprovalError, nothing written) a file that is invalid or a
 * symbolic link, a name that is not one exact tool, and a tool an ask or always_ask entry would
 * still ask for.
 */
export function addAllowRule(controlDir: string, qualifiedName: string, origin: AllowRuleOrigin): WrittenAllowRule {
  if (!EXACT_TOOL_NAME.test(qualifiedName)) throw refuse(qualifiedName, 'it is not one exact tool name (namespace:tool, without glob characters or an argument matcher)');
  const file = join(controlDir, PERMISSIONS_FILE);
  mkdirSync(controlDir, { recursive: true });
  // Writers of permissions.yaml take turns, so two decisions at once both land.
  const lock = `${file}.lock`;
  return withLock(lock, () => refuse(qualifiedName, `${lock} is held by another writer (remove it if no bulkhead process is deciding)`), () => {
    const current = currentText(file, qualifiedName);
    let value: ReturnType<typeof permissionsSchema.parse>;
    try {
      value = loadYamlFile(controlDir, PERMISSIONS_FILE, permissionsSchema).value;
    } catch (error) {
      if (error instanceof ConfigError) throw refuse(qualifiedName, `${error.message}\nfix the file, or allow the call once or for this session`);
      throw error;
    }
    const text = current?.text ?? '';
    const existing = allowLine(text, qualifiedName);
    if (existing !== undefined) return { file, rule: qualifiedName, line: existing, added: false };
    const asking = askingRule(value, qualifiedName);
    if (asking) throw refuse(qualifiedName, `${file}: ${asking}, which is checked before allow, so the rule would not stop the asking; edit that entry, or allow the call once or for this session`);

    const by = oneLine(origin.by);
    const comment = ` added by ${by} on ${minuteTime(origin.at.toISOString())}, approval ${origin.approvalId}`;
    const raw = parseDocument(text).toJS() as Record<string, unknown> | null;
    const expected = { ...(raw ?? {}), allow: [...(Array.isArray(raw?.allow) ? raw.allow : []), qualifiedName] };
    const candidates = [splicedKeepingLineEnds(text, `#${comment}\n- ${qualifiedName}`), printed(parseDocument(text), qualifiedName, comment)];
    const body = candidates.find((candidate): candidate is string => candidate !== undefined && parsesTo(candidate, expected));
    if (body === undefined) throw refuse(qualifiedName, `${file} has a layout bulkhead cannot add to without changing something else; add \`- ${qualifiedName}\` under allow: by hand`);
    const written = current ? body : `${NEW_FILE_HEADER}${body}`;
    if (!permissionsSchema.safeParse(parseDocument(written).toJS()).success) throw refuse(qualifiedName, `the result would not be a valid ${PERMISSIONS_FILE}`);
    replaceAtomically(file, written, current?.mode ?? NEW_FILE_MODE);
    return { file, rule: qualifiedName, line: allowLine(written, qualifiedName) ?? 1, added: true };
  });
}
