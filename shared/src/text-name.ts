/**
 * Characters a name may not carry raw into the text of a reply: C0 and C1 controls and DEL (a
 * newline or carriage return would forge lines, ESC would forge terminal colours), the bidi
 * controls (U+061C, U+200E/F, U+202A-U+202E, U+2066-U+2069, which reorder what is shown), the
 * line and paragraph separators, and the zero-width characters that hide a difference.
 */
const UNSAFE = /[\u0000-\u001f\u007f-\u009f\u061c\u200b-\u200f\u2028-\u202e\u2060-\u2069\ufeff]/;
const UNSAFE_ALL = new RegExp(UNSAFE.source, 'g');

/**
 * A name (a file name, a path) as the text of a reply shows it. A name that holds a character of
 * the set above, or a `"` (so that no name can pass for a quoted one), is shown as a JSON
 * string: in double quotes, with `\n`, `\r`, `\t`, `\"`, `\\` and `\uXXXX` for everything else of
 * the set. `alsoQuote` adds characters a tool's own line format gives a meaning to (grep's `:`).
 * Any other name is shown as it is. Structured results keep the name unchanged.
 */
export function textName(name: string, alsoQuote?: RegExp): string {
  if (!UNSAFE.test(name) && !name.includes('"') && !(alsoQuote?.test(name) ?? false)) return name;
  return JSON.stringify(name).replace(UNSAFE_ALL, (c) => `\\u${c.charCodeAt(0).toString(16).padStart(4, '0')}`);
}
