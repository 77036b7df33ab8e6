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

/** JSON pretty-printed with two spaces; a body that does not parse is returned as it came. */
export function prettyJson(text: string): string {
  try {
    return JSON.stringify(JSON.parse(text), null, 2);
  } catch {
    return text;
  }
}

export function refuseBinary(type: ContentType, bytes: number, truncated: boolean): never {
  throw new ToolError(`the response is ${type.mime} (${truncated ? 'more than ' : ''}${bytes} bytes), not text: web_fetch returns only text, HTML and JSON`, 'binary_content');
}
