// Content for the fs-write bench: files of a given size, a 10,000-line source file and the
// edits made to it, with the content each case must leave behind (so a fast wrong answer fails).

const LINE_BYTES = 80;
export const MIB = 1024 * 1024;

/** One source-like line of exactly LINE_BYTES bytes (newline included), unique per `n` and `tag`. */
function fixedLine(n, tag) {
  const body = `    const item_${String(n).padStart(7, '0')} = compute("${tag}", ${n % 997}, [1, 2, 3]); // step ${n}`;
  return `${body.slice(0, LINE_BYTES - 1).padEnd(LINE_BYTES - 1, ' ')}\n`;
}

/**
 * `bytes` (rounded down to whole lines) of ASCII text; `changedEvery` gives a second revision of
 * the same file in which one line in that many differs, for overwrites of an existing file.
 */
export function sizedText(bytes, { changedEvery } = {}) {
  const lines = Math.floor(bytes / LINE_BYTES);
  const parts = new Array(lines);
  for (let n = 0; n < lines; n++) parts[n] = fixedLine(n, changedEvery && n % changedEvery === changedEvery - 1 ? 'older-revision' : 'current');
  return parts.join('');
}

export const EDIT_FILE_LINES = 10_000;

/** Line `n` (0-based) of the 10,000-line file: indented code, each line unique. */
function sourceLine(n) {
  if (n % 25 === 0) return `// ── section ${n / 25} ──`;
  return `  export function fn_${String(n).padStart(5, '0')}(a: number): number { return a * ${n % 89} + ${n % 7}; }`;
}

export function sourceFile() {
  return Array.from({ length: EDIT_FILE_LINES }, (_, n) => sourceLine(n)).join('\n') + '\n';
}

/**
 * An edit as a model sends it: the target line with one line of context either side as
 * old_string, the target line changed in new_string.
 */
function editAround(n, tag) {
  const before = [sourceLine(n - 1), sourceLine(n), sourceLine(n + 1)];
  const after = [before[0], `${sourceLine(n).replace(/ \}$/, ' /* edited */ }')} // ${tag}`, before[2]];
  return { old_string: before.join('\n'), new_string: after.join('\n') };
}

/** Line numbers (0-based) spread evenly over the file, never a section line or a neighbour of one. */
function spread(count) {
  const step = EDIT_FILE_LINES / count;
  return Array.from({ length: count }, (_, i) => {
    let n = Math.floor(i * step + step / 2);
    while (n % 25 <= 1 || n % 25 === 24) n++;
    return n;
  });
}

/** The 100 single edits (one call each) and the 50 edits of one multi_edit. */
export function editSets() {
  return {
    single: spread(100).map((n, i) => editAround(n, `single edit ${i + 1}`)),
    multi: spread(50).map((n, i) => editAround(n, `multi edit ${i + 1}`)),
  };
}

/** What the file must hold after `edits` (each old_string occurs once), computed without regexes. */
export function applyLiterally(text, edits) {
  let out = text;
  for (const { old_string, new_string } of edits) {
    const at = out.indexOf(old_string);
    if (at === -1 || out.indexOf(old_string, at + 1) !== -1) throw new Error(`bench data: old_string must occur exactly once: ${old_string.slice(0, 60)}`);
    out = out.slice(0, at) + new_string + out.slice(at + old_string.length);
  }
  return out;
}
