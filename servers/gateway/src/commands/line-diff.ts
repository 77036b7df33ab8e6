/** A line of a diff: kept (' '), removed ('-') or added ('+'). */
interface Op {
  readonly kind: ' ' | '-' | '+';
  readonly line: string;
}

const CONTEXT = 3;
/** Past this many cells the changed middle is shown as replaced whole rather than aligned. */
const MAX_TABLE_CELLS = 4_000_000;

function linesOf(text: string): string[] {
  const lines = text.split('\n');
  if (lines.at(-1) === '') lines.pop();
  return lines;
}

/** Longest-common-subsequence alignment of the changed middle (small: the edits of one setup run). */
function alignMiddle(before: readonly string[], after: readonly string[]): Op[] {
  const width = after.length + 1;
  if ((before.length + 1) * width > MAX_TABLE_CELLS) {
    return [...before.map((line) => ({ kind: '-' as const, line })), ...after.map((line) => ({ kind: '+' as const, line }))];
  }
  // common[i * width + j]: the LCS length of before[i..] and after[j..].
  const common = new Uint32Array((before.length + 1) * width);
  for (let i = before.length - 1; i >= 0; i--) {
    for (let j = after.length - 1; j >= 0; j--) {
      common[i * width + j] = before[i] === after[j] ? common[(i + 1) * width + j + 1]! + 1 : Math.max(common[(i + 1) * width + j]!, common[i * width + j + 1]!);
    }
  }
  const ops: Op[] = [];
  let i = 0;
  let j = 0;
  while (i < before.length || j < after.length) {
    if (i < before.length && j < after.length && before[i] === after[j]) {
      ops.push({ kind: ' ', line: before[i++]! });
      j++;
    } else if (i < before.length && (j === after.length || common[(i + 1) * width + j]! >= common[i * width + j + 1]!)) {
      // On a tie the removal goes first, so a changed line reads old, then new.
      ops.push({ kind: '-', line: before[i++]! });
    } else {
      ops.push({ kind: '+', line: after[j++]! });
    }
  }
  return ops;
}

function lineOps(before: readonly string[], after: readonly string[]): Op[] {
  // The unchanged head and tail are skipped first, so a large file costs only its changed part.
  let head = 0;
  while (head < before.length && head < after.length && before[head] === after[head]) head++;
  let tail = 0;
  while (tail < before.length - head && tail < after.length - head && before[before.length - 1 - tail] === after[after.length - 1 - tail]) tail++;
  const kept = (lines: readonly string[]) => lines.map((line) => ({ kind: ' ' as const, line }));
  return [...kept(before.slice(0, head)), ...alignMiddle(before.slice(head, before.length - tail), after.slice(head, after.length - tail)), ...kept(before.slice(before.length - tail))];
}

/** `start,count` of a hunk side; an empty side names the line it follows, as diff(1) does. */
function span(linesBefore: number, count: number): string {
  return `${count === 0 ? linesBefore : linesBefore + 1},${count}`;
}

/**
 * A unified diff (3 lines of context) from `before` (undefined: the file does not exist) to
 * `after`, labelled with `file`; the empty string when they are the same.
 */
export function unifiedDiff(file: string, before: string | undefined, after: string): string {
  const ops = lineOps(before === undefined ? [] : linesOf(before), linesOf(after));
  const changed = ops.flatMap((op, index) => (op.kind === ' ' ? [] : [index]));
  if (changed.length === 0) return '';
  const out = [`--- ${before === undefined ? '/dev/null' : file}`, `+++ ${file}`];
  let first = 0;
  while (first < changed.length) {
    // A hunk runs on while the next change is close enough for the contexts to touch.
    let last = first;
    while (last + 1 < changed.length && changed[last + 1]! - changed[last]! <= 2 * CONTEXT + 1) last++;
    const from = Math.max(0, changed[first]! - CONTEXT);
    const to = Math.min(ops.length, changed[last]! + CONTEXT + 1);
    const count = (slice: readonly Op[], kind: '-' | '+') => slice.filter((op) => op.kind !== (kind === '-' ? '+' : '-')).length;
    const prior = ops.slice(0, from);
    const hunk = ops.slice(from, to);
    out.push(`@@ -${span(count(prior, '-'), count(hunk, '-'))} +${span(count(prior, '+'), count(hunk, '+'))} @@`);
    for (const op of hunk) out.push(`${op.kind}${op.line}`);
    first = last + 1;
  }
  return `${out.join('\n')}\n`;
}
