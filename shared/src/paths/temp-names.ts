import { randomBytes } from 'node:crypto';

/** `name` cut to at most 200 bytes, so a hidden name made from it stays within the 255-byte limit. */
export function stemOf(name: string): string {
  let stem = '';
  for (const char of name) {
    if (Buffer.byteLength(stem) + Buffer.byteLength(char) > 200) break;
    stem += char;
  }
  return stem;
}

/** A fresh hidden name beside `name`, for content that appears under the real name only when whole. */
export function tempName(name: string): string {
  return `.${stemOf(name)}.bulkhead-${randomBytes(6).toString('hex')}.tmp`;
}
