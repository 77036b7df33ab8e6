import { ToolError } from '@bulkhead/core';

export interface ContentType {
  /** Lower-case type/subtype, '' when the response named none. */
  readonly mime: string;
  readonly charset: string | undefined;
}

export function parseContentType(header: string): ContentType {
  const [mime = '', ...parameters] = header.split(';');
  const charset = parameters
    .map((parameter) => parameter.trim().match(/^charset\s*=\s*"?([^";\s]+)"?$/i)?.[1])
    .find((value) => value !== undefined);
  return { mime: mime.trim().toLowerCase(), charset: charset?.toLowerCase() };
}

export function isHtml(mime: string): boolean {
  return mime === 'text/html' || mime === 'application/xhtml+xml';
}

export function isJson(mime: string): boolean {
  return mime === 'application/json' || mime.endsWith('+json');
}

/** Types whose bytes are text a model can read; anything else is refused with its type and size. */
export function isTextual(mime: string): boolean {
  return mime === '' || mime.startsWith('text/') || isJson(mime) || mime === 'application/xml' || mime.endsWith('+xml') || mime === 'application/javascript' || mime === 'application/x-ndjson';
}

/**
 * The body as text: a byte-order mark wins, then the header's charset, then (for HTML) a
 * `<meta charset>` in the first 1024 bytes, then UTF-8. An unknown charset falls back to UTF-8.
 */
export function decodeBody(body: Buffer, type: ContentType): string {
  const charset = bomCharset(body) ?? type.charset ?? (isHtml(type.mime) ? metaCharset(body) : undefined) ?? 'utf-8';
  let decoder: InstanceType<typeof TextDecoder>;
  try {
    decoder = new TextDecoder(charset);
  } catch {
    decoder = new TextDecoder('utf-8');
  }
  return decoder.encoding === 'windows-1252' ? decodeWindows1252(body) : decoder.decode(body);
}

/** What windows-1252 puts at 0x80–0x9f (undefined bytes map to themselves, as the WHATWG table does). */
const WINDOWS_1252_HIGH = '€\u0081‚ƒ„…†‡ˆ‰Š‹Œ\u008dŽ\u008f\u0090‘’“”•–—˜™š›œ\u009džŸ';

/**
 * Node 20's TextDecoder decodes windows-1252 (the label of latin1, iso-8859-1 and ascii too) as
 * ISO-8859-1, turning curly quotes and dashes into invisible control characters.
 */
function decodeWindows1252(body: Buffer): string {
  const latin1 = body.toString('latin1');
  return latin1.replace(/[\u0080-\u009f]/g, (char) => WINDOWS_1252_HIGH[char.charCodeAt(0) - 0x80]!);
}

function bomCharset(body: Buffer): string | undefined {
  if (body[0] === 0xef && body[1] === 0xbb && body[2] === 0xbf) return 'utf-8';
  if (body[0] === 0xfe && body[1] === 0xff) return 'utf-16be';
  if (body[0] === 0xff && body[1] === 0xfe) return 'utf-16le';
  return undefined;
}

function metaCharset(body: Buffer): string | undefined {
  const head = body.subarray(0, 1024).toString('latin1');
  return head.match(/<meta[^>]+charset\s*=\s*["']?([\w-]+)/i)?.[1]?.toLowerCase();
}

export function htmlTitle(html: string): string | undefined {
  const lower = html.toLowerCase();
  const open = findTag(lower, 'title', 0);
  if (open === undefined) return undefined;
  const close = lower.indexOf('</title', open.end);
  const title = html.slice(open.end, close === -1 ? html.length : close);
  const clean = decodeEntities(title).replace(/\s+/g, ' ').trim();
  return clean === '' ? undefined : clean;
}

/** Where the next `<name …>` tag starts and where its `>` ends, searched in lower-cased HTML. */
function findTag(lower: string, name: string, from: number): { start: number; end: number } | undefined {
  for (let start = lower.indexOf(`<${name}`, from); start !== -1; start = lower.indexOf(`<${name}`, start + 1)) {
    if (!isTagAt(lower, name, start)) continue;
    const end = lower.indexOf('>', start);
    return { start, end: end === -1 ? lower.length : end + 1 };
  }
  return undefined;
}

/** Whether `<name` starts at `position` and the name ends there (`<titles>` is not `<title>`). */
function isTagAt(lower: string, name: string, position: number): boolean {
  if (!lower.startsWith(name, position + 1)) return false;
  const after = lower.charCodeAt(position + name.length + 1);
  return Number.isNaN(after) || after === 0x3e || after === 0x2f || after === 0x20 || (after >= 0x09 && after <= 0x0d);
}

/** Elements whose content a reader never sees; an unclosed one hides the rest of the page, as in a browser. */
const HIDDEN_ELEMENTS = ['head', 'title', 'script', 'style', 'noscript', 'template', 'svg'];

/**
 * The HTML without comments and without hidden elements, found with indexOf so the cost stays linear
 * however many unclosed `<script` or `<!--` a hostile page holds.
 */
function dropHidden(html: string): string {
  const lower = html.toLowerCase();
  const kept: string[] = [];
  let position = 0;
  while (position < html.length) {
    const next = html.indexOf('<', position);
    if (next === -1) break;
    let skipTo: number | undefined;
    if (lower.startsWith('<!--', next)) {
      const close = lower.indexOf('-->', next + 4);
      skipTo = close === -1 ? html.length : close + 3;
    } else {
      const name = HIDDEN_ELEMENTS.find((candidate) => isTagAt(lower, candidate, next));
      if (name !== undefined) {
        const close = lower.indexOf(`</${name}`, next);
        const closeEnd = close === -1 ? -1 : lower.indexOf('>', close);
        skipTo = closeEnd === -1 ? html.length : closeEnd + 1;
      }
    }
    if (skipTo === undefined) {
      kept.push(html.slice(position, next + 1));
      position = next + 1;
    } else {
      kept.push(html.slice(position, next));
      position = skipTo;
    }
  }
  kept.push(html.slice(position));
  return kept.join('');
}

// [^<>] rather than [^>]: a tag never holds `<`, and a page of `<<<<` then costs linear time, not quadratic.
const BLOCK_TAGS = /<\/?(?:p|div|br|hr|h[1-6]|li|ul|ol|tr|table|section|article|header|footer|nav|main|aside|blockquote|pre|dt|dd|figure|figcaption|form)\b[^<>]*>/gi;

/**
 * Readable text of an HTML page: the parts a reader never sees (head, title, scripts, styles, templates,
 * comments) are dropped, block elements become line breaks, the rest of the tags are removed.
 */
export function htmlToText(html: string): string {
  const visible = dropHidden(html).replace(BLOCK_TAGS, '\n').replace(/<[^<>]*>/g, '');
  return decodeEntities(visible)
    .split('\n')
    .map((line) => line.replace(/[ \t\f\r\u00a0]+/g, ' ').trim())
    .join('\n')
    .replace(/\n{3,}/g, '\n\n')
    .trim();
}

const NAMED_ENTITIES: Record<string, string> = { amp: '&', lt: '<', gt: '>', quot: '"', apos: "'", nbsp: '\u00a0', mdash: '—', ndash: '–', hellip: '…', copy: '©', rsquo: '’', lsquo: '‘', rdquo: '”', ldquo: '“' };

function decodeEntities(text: string): string {
  return text.replace(/&(#x[0-9a-f]+|#\d+|[a-z]+);/gi, (entity, name: string) => {
    if (name.startsWith('#')) {
      const code = name[1] === 'x' || name[1] === 'X' ? Number.parseInt(name.slice(2), 16) : Number(name.slice(1));
      return code > 0 && code <= 0x10ffff ? String.fromCodePoint(code) : entity;
    }
    return NAMED_ENTITIES[name.toLowerCase()] ?? entity;
  });
}

/**
 * JSON pretty-printed with two spaces, when that stays near the size of the body: indentation grows
 * with nesting, and a small body of deeply nested arrays would print as hundreds of megabytes. The
 * printed size is known from one pass over the text before anything is printed; a body that does
 * not parse, nests too deep or would print past the budget is returned as it came.
 */
export function prettyJson(text: string): string {
  const layout = jsonLayout(text);
  if (layout.depth > MAX_PRETTY_DEPTH || layout.printedLength > text.length * PRETTY_GROWTH + 1024) return text;
  try {
    return JSON.stringify(JSON.parse(text), null, 2);
  } catch {
    return text;
  }
}

/** Nesting past this is left as it came: JSON.parse and JSON.stringify recurse. */
const MAX_PRETTY_DEPTH = 256;
/** Printed JSON may be at most this many times the size of the body. */
const PRETTY_GROWTH = 4;

/**
 * The deepest nesting outside strings and an upper bound of the two-space printed length: every
 * bracket and comma starts a new line indented by its depth, every colon gains a space.
 */
function jsonLayout(text: string): { depth: number; printedLength: number } {
  let depth = 0;
  let deepest = 0;
  let printedLength = text.length;
  let inString = false;
  for (let index = 0; index < text.length; index += 1) {
    const code = text.charCodeAt(index);
    if (inString) {
      if (code === 0x5c) index += 1;
      else if (code === 0x22) inString = false;
      continue;
    }
    if (code === 0x22) inString = true;
    else if (code === 0x5b || code === 0x7b) {
      depth += 1;
      deepest = Math.max(deepest, depth);
      printedLength += 1 + 2 * depth;
    } else if (code === 0x5d || code === 0x7d) {
      depth -= 1;
      printedLength += 1 + 2 * Math.max(depth, 0);
    } else if (code === 0x2c) printedLength += 1 + 2 * depth;
    else if (code === 0x3a) printedLength += 1;
  }
  return { depth: deepest, printedLength };
}

/** Whether a media type is a plain `type/subtype` pair of tokens. */
export function isMediaType(mime: string): boolean {
  return /^[a-z0-9!#$&^_.+-]{1,127}\/[a-z0-9!#$&^_.+-]{1,127}$/.test(mime);
}

/** The Content-Type rebuilt from what was parsed out of it: a media type and a plain charset, nothing else the server wrote. */
export function cleanContentType(type: ContentType): string {
  if (!isMediaType(type.mime)) return '';
  return type.charset !== undefined && /^[a-z0-9._:-]{1,40}$/.test(type.charset) ? `${type.mime}; charset=${type.charset}` : type.mime;
}

/** The media type for our own words; anything else a server sent there is not repeated outside the wrapper. */
export function shownType(mime: string): string {
  if (mime === '') return 'no content type';
  return isMediaType(mime) ? mime : 'an unusual content type';
}

export function refuseBinary(type: ContentType, bytes: number, truncated: boolean): never {
  throw new ToolError(`the response is ${shownType(type.mime)} (${truncated ? 'more than ' : ''}${bytes} bytes), not text: web_fetch returns only text, HTML and JSON`, 'binary_content');
}
