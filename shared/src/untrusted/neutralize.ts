/**
 * Characters that change how text looks without being seen: C0/C1 controls (but tab and line
 * breaks), bidi embeddings, overrides and isolates (Trojan Source), zero-width characters, the
 * byte-order mark inside text, and Unicode tag characters (which spell hidden ASCII).
 */
const INVISIBLE = /[\u0000-\u0008\u000B\u000C\u000E-\u001F\u007F-\u009F\u061C\u180E\u200B-\u200F\u202A-\u202E\u2060-\u2064\u2066-\u206F\uFEFF\uFFF9-\uFFFB]|\uDB40[\uDC00-\uDC7F]/g;

/** Whether `text` holds a character `neutralizeInvisible` would rewrite. */
export function hasInvisible(text: string): boolean {
  INVISIBLE.lastIndex = 0;
  const found = INVISIBLE.test(text);
  INVISIBLE.lastIndex = 0;
  return found;
}

/**
 * Text with every invisible or direction-changing character written out as `\u{…}`, so what a
 * model or a human reads is what is there: a hidden instruction or a reversed file name shows up.
 */
export function neutralizeInvisible(text: string): string {
  return text.replace(INVISIBLE, (char) => `\\u{${char.codePointAt(0)!.toString(16).toUpperCase()}}`);
}
