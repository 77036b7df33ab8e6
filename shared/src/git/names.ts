import { isUtf8 } from 'node:buffer';

/**
 * Git names are bytes; a model reads and writes JSON strings. A name that is valid UTF-8 passes
 * as it is. A name that is not is shown with each byte outside a valid UTF-8 sequence as `\xNN`
 * and each backslash as `\\`, and `encodeGitName` reads that form back to the same bytes.
 */
export function decodeGitName(bytes: Uint8Array): string {
  if (isUtf8(bytes)) return Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength).toString('utf8');
  let out = '';
  let i = 0;
  while (i < bytes.length) {
    const length = utf8SequenceLength(bytes, i);
    if (length === 0) {
      out += `\\x${bytes[i]!.toString(16).padStart(2, '0')}`;
      i++;
      continue;
    }
    const text = Buffer.from(bytes.subarray(i, i + length)).toString('utf8');
    out += text === '\\' ? '\\\\' : text;
    i += length;
  }
  return out;
}

const ESCAPE = /\\(x[0-9a-fA-F]{2}|\\)/;

/** The bytes a name given by a model stands for (see decodeGitName). */
export function encodeGitName(text: string): Buffer {
  const literal = Buffer.from(text, 'utf8');
  if (!ESCAPE.test(text)) return literal;
  const parts: Buffer[] = [];
  let rest = text;
  for (let match = ESCAPE.exec(rest); match; match = ESCAPE.exec(rest)) {
    parts.push(Buffer.from(rest.slice(0, match.index), 'utf8'));
    parts.push(match[1] === '\\' ? Buffer.from('\\') : Buffer.from([Number.parseInt(match[1]!.slice(1), 16)]));
    rest = rest.slice(match.index + match[0].length);
  }
  parts.push(Buffer.from(rest, 'utf8'));
  const unescaped = Buffer.concat(parts);
  // Only names that are not UTF-8 are shown escaped, so a form that unescapes to UTF-8 was literal.
  return isUtf8(unescaped) ? literal : unescaped;
}

/** Length of the valid UTF-8 sequence starting at `i`, or 0 when the byte there starts none. */
export function utf8SequenceLength(bytes: Uint8Array, i: number): number {
  const lead = bytes[i]!;
  const length = lead < 0x80 ? 1 : lead >= 0xc2 && lead <= 0xdf ? 2 : lead >= 0xe0 && lead <= 0xef ? 3 : lead >= 0xf0 && lead <= 0xf4 ? 4 : 0;
  if (length === 0 || i + length > bytes.length) return 0;
  return isUtf8(bytes.subarray(i, i + length)) ? length : 0;
}

const C_ESCAPES: Readonly<Record<number, string>> = { 7: 'a', 8: 'b', 9: 't', 10: 'n', 11: 'v', 12: 'f', 13: 'r', 0x22: '"', 0x5c: '\\' };

/**
 * A path as git prints it in patch headers with `core.quotePath=true` (quote.c, quote_c_style):
 * unchanged unless it holds a control character, `"`, `\`, DEL or a byte over 0x7f, else wrapped
 * in quotes with C escapes and octal for the rest.
 */
export function quoteGitPath(bytes: Uint8Array): Buffer {
  const mustQuote = bytes.some((b) => b < 0x20 || b === 0x22 || b === 0x5c || b >= 0x7f);
  if (!mustQuote) return Buffer.from(bytes);
  let out = '"';
  for (const b of bytes) {
    const named = C_ESCAPES[b];
    if (named !== undefined) out += `\\${named}`;
    else if (b < 0x20 || b >= 0x7f) out += `\\${b.toString(8).padStart(3, '0')}`;
    else out += String.fromCharCode(b);
  }
  return Buffer.from(`${out}"`, 'latin1');
}
