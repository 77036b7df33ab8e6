/** `HH:MM:SS UTC` of an ISO time. */
export function clockTime(iso: string): string {
  return `${iso.slice(11, 19)} UTC`;
}

/** `YYYY-MM-DD HH:MM UTC` of an ISO time. */
export function minuteTime(iso: string): string {
  return `${iso.slice(0, 10)} ${iso.slice(11, 16)} UTC`;
}

/**
 * One line of plain text, at most `longest` characters: who decided is written into replies,
 * the audit log and a YAML comment, where a line break would start a line of its own.
 */
export function oneLine(text: string, longest = 200): string {
  const flat = text.replace(/[\s\u0000-\u001f\u007f-\u009f]+/g, ' ').trim();
  return flat.length > longest ? `${flat.slice(0, longest - 1)}…` : flat;
}

/** A word as a terminal takes it (a path, a flag's value): quoted only when it holds anything a shell would read. */
export function shellWord(text: string): string {
  return /^[A-Za-z0-9_./@%+=:,-]+$/.test(text) ? text : `'${text.replace(/'/g, `'\\''`)}'`;
}
