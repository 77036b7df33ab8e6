import { isSecretKey, REDACTED, redactText } from '../audit/redact.js';
import { neutralizeInvisible } from '../untrusted/neutralize.js';

/** What the human is asked to approve. */
export interface ApprovalRequest {
  readonly qualifiedName: string;
  /** Why the gate asks: the decision's reason, which names the policy file and line. */
  readonly reason: string;
  /** The arguments the tool will run with. */
  readonly args: Record<string, unknown>;
  /** The risk of these arguments in words, when the server assessed them ("classified medium: …"). */
  readonly risk?: string;
  /** What the tool says will happen (a diff), or why it could not say. */
  readonly preview?: { readonly text: string } | { readonly failed: string };
  /** Further argument keys whose values are secrets (audit.yaml's redact_keys). */
  readonly redactKeys?: readonly string[];
}

/** A value shorter than this is shown whole on its key's line. */
const INLINE_CHARS = 80;
/** How much of each long value the "Long values" section shows. */
const LONG_EXCERPT_CHARS = 300;
/** A key name longer than this is cut in its path (with its length). */
const KEY_CHARS = 60;
/** The argument lines in full take at most this much; past it every other key is still listed, compactly. */
const ARGUMENT_LINES_BUDGET = 4000;
/** What the preview and the long values may add after the argument lines. */
const DETAIL_BUDGET = 4000;
const PREVIEW_LINES = 40;
const PREVIEW_LINE_CHARS = 160;
/** How much of a preview is read for the lines shown and secrets in them; lines past it are only counted. */
const PREVIEW_SCAN_CHARS = 256 * 1024;
/** The rest of the values comes in parts of about this size; they hold at most REST_CHARS of quoted values (20 parts or fewer). */
const PART_CHARS = 6000;
const REST_CHARS = 110_000;
/**
 * The most a prompt may take with every key listed. A call with so many keys that even their
 * compact list does not fit is refused rather than shown in part: a key nobody saw is not approved.
 */
export const MAX_PROMPT_CHARS = 40_000;
/** Only this much past what is shown is scanned for secrets, so a 50 MB value costs what its start costs. */
const SECRET_SCAN_MARGIN = 8 * 1024;
/** The title of the choice that shows the rest of the values. */
export const SHOW_REST = 'Show the rest of the arguments';

/** Thrown when the arguments have more keys than a prompt can list. */
export class TooManyKeysToShow extends Error {
  constructor(readonly keys: number) {
    super(`its arguments have ${keys.toLocaleString('en-US')} keys, more than an approval prompt can list (${MAX_PROMPT_CHARS.toLocaleString('en-US')} characters)`);
  }
}

/** One shown value: a string, number, boolean or null, or an array of those, at its key path. */
interface Leaf {
  readonly path: string;
  readonly value: unknown;
  readonly secret: boolean;
}

const count = (n: number) => n.toLocaleString('en-US');

/** A quoted, one-line rendering where line breaks, quotes and invisible characters are written out. */
function quoted(text: string): string {
  return neutralizeInvisible(JSON.stringify(text));
}

function keySegment(key: string, first: boolean): string {
  if (/^[A-Za-z_$][A-Za-z0-9_$-]*$/.test(key) && key.length <= KEY_CHARS) return first ? key : `.${key}`;
  const shown = key.length > KEY_CHARS ? `${quoted(key.slice(0, KEY_CHARS))}…(${count(key.length)}-character key)` : quoted(key);
  return `[${shown}]`;
}

function isPrimitive(value: unknown): boolean {
  return value === null || typeof value !== 'object';
}

/**
 * Every value at its key path (`headers.bcc`, `edits[2].new_text`), depth first in argument order.
 * An array of primitives is one value; anything holding an object is opened, so no key is hidden
 * inside a value. Iterative: arguments were bounded in depth before the gate, not here.
 */
function leavesOf(args: Record<string, unknown>, redactKeys: readonly string[]): Leaf[] {
  const leaves: Leaf[] = [];
  const stack: { path: string; value: unknown; secret: boolean }[] = [];
  const pushChildren = (path: string, value: object, secret: boolean) => {
    const children = Array.isArray(value)
      ? value.map((item, index) => ({ path: `${path}[${index}]`, value: item as unknown, secret }))
      : Object.entries(value).map(([key, item]) => ({ path: `${path}${keySegment(key, path === '')}`, value: item as unknown, secret: secret || isSecretKey(key, redactKeys) }));
    for (let i = children.length - 1; i >= 0; i--) stack.push(children[i]!);
  };
  pushChildren('', args, false);
  while (stack.length > 0) {
    const { path, value, secret } = stack.pop()!;
    const opened = value !== null && typeof value === 'object' && !(Array.isArray(value) && value.every(isPrimitive));
    if (opened && Object.keys(value).length > 0) pushChildren(path, value, secret);
    else leaves.push({ path, value, secret });
  }
  return leaves;
}

/** Redacts secret-looking text in the first `chars` characters (scanning a little past them). */
function redactedStart(text: string, chars: number): string {
  return redactText(text.slice(0, chars + SECRET_SCAN_MARGIN)).slice(0, chars);
}

/** The type shown beside a key; a string's length only when it is long, and never a secret's. */
function typeOf(value: unknown, secret = false): string {
  if (secret) return value === null ? 'null' : Array.isArray(value) ? 'array' : typeof value;
  if (value === null) return 'null';
  if (Array.isArray(value)) return value.length === 0 ? 'array, empty' : `array of ${count(value.length)}`;
  if (typeof value === 'object') return 'object, empty';
  if (typeof value === 'string') return value.length > INLINE_CHARS ? `string, ${count(value.length)} characters` : 'string';
  return typeof value;
}

/** The text a leaf's value is shown as before cutting and quoting: a string itself, anything else as JSON. */
function rendered(value: unknown): string {
  if (typeof value === 'string') return value;
  if (Array.isArray(value)) return JSON.stringify(value);
  if (value !== null && typeof value === 'object') return '{}';
  return JSON.stringify(value) ?? String(value);
}

/** Whether the leaf's value is too long for its line (and so gets a longer excerpt below the keys). */
function isLong(leaf: Leaf): boolean {
  return !leaf.secret && rendered(leaf.value).length > INLINE_CHARS;
}

function excerpt(leaf: Leaf, chars: number): string {
  const text = rendered(leaf.value);
  const shown = redactedStart(text, chars);
  const body = typeof leaf.value === 'string' ? quoted(shown) : neutralizeInvisible(shown);
  return text.length > chars ? `${body}… (first ${count(chars)} of ${count(text.length)} characters shown)` : body;
}

function argumentLine(leaf: Leaf, chars: number): string {
  const value = leaf.secret ? REDACTED : excerpt(leaf, chars);
  return `  ${leaf.path} (${typeOf(leaf.value, leaf.secret)}): ${value}`;
}

/** A key's size in the compact list past the budget (a secret's length is no one's business). */
function sizeOf(leaf: Leaf): string {
  if (leaf.secret) return 'redacted';
  if (typeof leaf.value === 'string') return `string, ${count(leaf.value.length)} characters`;
  return typeOf(leaf.value);
}

function previewSection(preview: NonNullable<ApprovalRequest['preview']>): string[] {
  if ('failed' in preview) return ['What will happen: the tool could not tell:', `  ${neutralizeInvisible(redactedStart(preview.failed, 500))}`];
  // Redacted as one text, not line by line: a private key in a diff spans many lines.
  const text = preview.text.replace(/\n$/, '');
  const lines = redactText(text.slice(0, PREVIEW_SCAN_CHARS)).split('\n');
  const unscannedLines = (text.slice(PREVIEW_SCAN_CHARS).match(/\n/g) ?? []).length;
  const shown = lines.slice(0, PREVIEW_LINES).map((line) => `  ${neutralizeInvisible(line.length > PREVIEW_LINE_CHARS ? `${line.slice(0, PREVIEW_LINE_CHARS)}…(${count(line.length)} characters)` : line)}`);
  const more = lines.length + unscannedLines - shown.length;
  return ["What will happen (the tool's preview):", ...shown, ...(more > 0 ? [`  … ${count(more)} more line${more === 1 ? '' : 's'}`] : [])];
}

/** A prompt: the first message, and the rest of the values in full, one message per part, for a human who asks for them. */
export interface ApprovalPrompt {
  readonly message: string;
  /** Every value the message cut or left out, in full (secrets redacted), split into parts of a few KB; empty when nothing was cut. */
  readonly rest: readonly string[];
}

/**
 * The values the first message did not show in full, in parts of about PART_CHARS. Bounded: the
 * quoted values take at most REST_CHARS, and the last part says which values or how much is left.
 */
function restParts(leaves: readonly Leaf[]): string[] {
  const parts: string[] = [];
  let part: string[] = [];
  let used = 0;
  const flush = () => {
    if (part.length > 0) parts.push(part.join('\n'));
    part = [];
    used = 0;
  };
  const add = (line: string) => {
    if (used > 0 && used + line.length > PART_CHARS) flush();
    part.push(line);
    used += line.length + 1;
  };
  let budget = REST_CHARS;
  let unshown = 0;
  const notShown: string[] = [];
  for (const leaf of leaves) {
    if (leaf.secret || typeof leaf.value !== 'string') {
      add(argumentLine(leaf, PART_CHARS));
      continue;
    }
    const value = leaf.value;
    const text = redactedStart(value, Math.min(value.length, budget));
    let offset = 0;
    while (offset < text.length && budget > 0) {
      // Quoting writes some characters out longer (a line break as \n, a bidi mark as \u{202E}), so a piece is sized by its quoted form.
      const room = Math.min(Math.max(PART_CHARS - used - 100, 200), budget);
      let piece = text.slice(offset, offset + room);
      while (piece.length > 1 && quoted(piece).length > room + 2) piece = piece.slice(0, Math.ceil(piece.length / 2));
      add(`  ${leaf.path} (${offset === 0 ? typeOf(value) : 'continued'}): ${quoted(piece)}`);
      offset += piece.length;
      budget -= quoted(piece).length;
    }
    if (offset === 0 && value.length > 0) notShown.push(leaf.path);
    if (text.length < value.length || offset < text.length) unshown += Math.max(value.length - offset, 0);
  }
  flush();
  if (unshown > 0) {
    const which = notShown.length > 0 ? `, and nothing of ${notShown.join(', ')}` : '';
    const note = `  … ${count(unshown)} more characters are not shown (the parts hold at most ${count(REST_CHARS)} characters in all)${which}; decline if you need to see them.`;
    parts.push(`${parts.pop() ?? ''}\n${note}`.replace(/^\n/, ''));
  }
  return parts;
}

/**
 * An approval prompt: the tool, why it is asked, then every argument by key path with its type
 * (long values cut, with their length), the tool's preview and longer excerpts of long values;
 * the values it cut follow in parts the human can ask for. Every key is listed before any long
 * excerpt, so a long value cannot push another key out of sight; secrets are redacted but their
 * keys shown; invisible and direction-changing characters are written out.
 */
export function approvalPrompt(request: ApprovalRequest): ApprovalPrompt {
  const leaves = leavesOf(request.args, request.redactKeys ?? []);
  const head = [
    `Allow ${request.qualifiedName}?`,
    `Asked because: ${neutralizeInvisible(request.reason)}.`,
    ...(request.risk ? [`Risk: ${neutralizeInvisible(request.risk)}`] : []),
    '',
    leaves.length === 0 ? 'Arguments: none' : `Arguments (${count(leaves.length)} value${leaves.length === 1 ? '' : 's'}; every key is listed here):`,
  ];
  const lines: string[] = [];
  let used = 0;
  let listed = 0;
  for (const leaf of leaves) {
    const line = argumentLine(leaf, INLINE_CHARS);
    if (used + line.length > ARGUMENT_LINES_BUDGET) break;
    lines.push(line);
    used += line.length + 1;
    listed++;
  }
  const unlisted = leaves.slice(listed);
  if (unlisted.length > 0) lines.push(`  … and ${count(unlisted.length)} more, by key with size: ${unlisted.map((leaf) => `${leaf.path} (${sizeOf(leaf)})`).join('; ')}`);

  const details: string[] = [];
  if (request.preview) details.push('', ...previewSection(request.preview));
  const long = leaves.slice(0, listed).filter(isLong);
  let excerpted = 0;
  if (long.length > 0) {
    details.push('', `Long values (the first ${count(LONG_EXCERPT_CHARS)} characters of each):`);
    let detailUsed = details.join('\n').length;
    for (const leaf of long) {
      const line = `  ${leaf.path}: ${excerpt(leaf, LONG_EXCERPT_CHARS)}`;
      if (detailUsed + line.length > DETAIL_BUDGET) break;
      details.push(line);
      detailUsed += line.length + 1;
      excerpted++;
    }
    if (excerpted < long.length) details.push(`  (${count(long.length - excerpted)} more long value${long.length - excerpted === 1 ? '' : 's'} not excerpted here: ${long.slice(excerpted).map((leaf) => leaf.path).join(', ')})`);
  }
  const cutShort = new Set([...long.slice(0, excerpted).filter((leaf) => rendered(leaf.value).length > LONG_EXCERPT_CHARS), ...long.slice(excerpted), ...unlisted]);
  const rest = restParts(leaves.filter((leaf) => cutShort.has(leaf)));
  const footer = [
    '',
    rest.length > 0
      ? `Long values are cut here and secrets redacted. To see the rest in full before deciding, choose "${SHOW_REST}" (${count(rest.length)} part${rest.length === 1 ? '' : 's'}); the audit log keeps only the first 256 characters of each string.`
      : 'These are the whole arguments (secrets redacted).',
  ];
  const message = [...head, ...lines, ...details, ...footer].join('\n');
  if (message.length > MAX_PROMPT_CHARS) throw new TooManyKeysToShow(leaves.length);
  return { message, rest };
}

/** One part of the rest of the values, headed so the human still sees which call it belongs to. */
export function restMessage(qualifiedName: string, rest: readonly string[], index: number): string {
  return `Allow ${qualifiedName}? The rest of its arguments in full, part ${count(index + 1)} of ${count(rest.length)} (secrets redacted):\n\n${rest[index]}`;
}
