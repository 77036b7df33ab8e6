import { ToolError } from '@bulkhead/core';

const BOM = Buffer.from([0xef, 0xbb, 0xbf]);

/** A text file as edits see it: `\n` line ends, no BOM, and how to write it back as it was. */
export interface EditableText {
  readonly text: string;
  readonly bom: boolean;
  /** `\r\n` when every line ends so (the text was converted to `\n`); `\n` otherwise, mixed files included. */
  readonly eol: '\n' | '\r\n';
}

/** Decodes a file for editing; binary files and anything that is not UTF-8 are refused. */
export function decodeForEdit(bytes: Buffer, shownAs: string): EditableText {
  const bom = bytes.subarray(0, 3).equals(BOM);
  const body = bom ? bytes.subarray(3) : bytes;
  const nul = body.indexOf(0);
  if (nul !== -1) throw new ToolError(`${shownAs} looks binary (a NUL byte at offset ${nul + (bom ? 3 : 0)}); only UTF-8 text files can be edited. Use write_file to replace it whole.`, 'binary');
  let raw: string;
  try {
    raw = new TextDecoder('utf-8', { fatal: true }).decode(body);
  } catch {
    throw new ToolError(`${shownAs} is not valid UTF-8 (an invalid byte at offset ${firstInvalidUtf8(body) + (bom ? 3 : 0)}); only UTF-8 text files can be edited, so nothing was changed. Use write_file to replace it whole.`, 'encoding');
  }
  const crlf = countOf(raw, '\r\n');
  const lf = countOf(raw, '\n');
  if (crlf > 0 && crlf === lf) return { text: raw.replaceAll('\r\n', '\n'), bom, eol: '\r\n' };
  return { text: raw, bom, eol: '\n' };
}

/** The bytes of `text` written the way the original was: its BOM and its line ends. */
export function encodeLike(original: Pick<EditableText, 'bom' | 'eol'>, text: string): Buffer {
  const body = Buffer.from(original.eol === '\r\n' ? text.replaceAll('\n', '\r\n') : text, 'utf8');
  return original.bom ? Buffer.concat([BOM, body]) : body;
}

/** A string from the model, in the file's convention: CRLF files are matched with `\n`. */
export function asEditText(original: Pick<EditableText, 'eol'>, value: string): string {
  return original.eol === '\r\n' ? value.replaceAll('\r\n', '\n') : value;
}

function countOf(text: string, needle: string): number {
  let count = 0;
  for (let at = text.indexOf(needle); at !== -1; at = text.indexOf(needle, at + needle.length)) count++;
  return count;
}

/** Offset of the first byte that does not start a valid UTF-8 sequence (the decoder only says "invalid"). */
export function firstInvalidUtf8(bytes: Uint8Array): number {
  let i = 0;
  while (i < bytes.length) {
    const lead = bytes[i]!;
    if (lead < 0x80) {
      i++;
      continue;
    }
    const length = lead >= 0xc2 && lead <= 0xdf ? 2 : lead >= 0xe0 && lead <= 0xef ? 3 : lead >= 0xf0 && lead <= 0xf4 ? 4 : 0;
    if (length === 0 || i + length > bytes.length) return i;
    const second = bytes[i + 1]!;
    // Overlong forms, UTF-16 surrogates and code points past U+10FFFF.
    if ((lead === 0xe0 && second < 0xa0) || (lead === 0xed && second > 0x9f) || (lead === 0xf0 && second < 0x90) || (lead === 0xf4 && second > 0x8f)) return i;
    for (let k = 1; k < length; k++) if ((bytes[i + k]! & 0xc0) !== 0x80) return i;
    i += length;
  }
  return -1;
}
