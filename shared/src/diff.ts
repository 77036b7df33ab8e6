import { diffArrays } from 'diff';

const CONTEXT = 3;
/**
 * The line diff costs about (changed region) × (differences); past either bound the changed region
 * is shown as replaced whole, so a large rewrite is reported at once rather than computed.
 */
const MAX_EDIT_LENGTH = 1000;
const MAX_REGION_LINES = 60_000;

export interface Diff {
  /** A unified diff, cut at the line limit with a line that says how much more there was. */
  readonly text: string;
  readonly added: number;
  readonly removed: number;
}

/** One changed region: `removed` lines at `oldStart` became `added` lines at `newStart` (0-based). */
interface Block {
  readonly oldStart: number;
  readonly newStart: number;
  readonly removed: readonly string[];
  readonly added: readonly string[];
}

function splitLines(text: string): string[] {
  if (text === '') return [];
  const lines = text.split('\n');
  if (lines.at(-1) === '') lines.pop();
  return lines;
}

/**
 * The changed blocks between two line arrays. The common head and tail are skipped first, so an
 * edit in a large file costs the size of the edit, not of the file.
 */
function changedBlocks(before: readonly string[], after: readonly string[]): Block[] {
  let head = 0;
  while (head < before.length && head < after.length && before[head] === after[head]) head++;
  let tail = 0;
  while (tail < before.length - head && tail < after.length - head && before[before.length - 1 - tail] === after[after.length - 1 - tail]) tail++;
  const oldMiddle = before.slice(head, before.length - tail);
  const newMiddle = after.slice(head, after.length - tail);
  if (oldMiddle.length === 0 && newMiddle.length === 0) return [];
  const changes = oldMiddle.length + newMiddle.length <= MAX_REGION_LINES ? diffArrays(oldMiddle, newMiddle, { maxEditLength: MAX_EDIT_LENGTH }) : undefined;
  if (!changes) return [{ oldStart: head, newStart: head, removed: oldMiddle, added: newMiddle }];
  const blocks: Block[] = [];
  let oldAt = head;
  let newAt = head;
  let open: { oldStart: number; newStart: number; removed: string[]; added: string[] } | undefined;
  for (const change of changes) {
    if (!change.added && !change.removed) {
      if (open) blocks.push(open);
      open = undefined;
      oldAt += change.count;
      newAt += change.count;
      continue;
    }
    open ??= { oldStart: oldAt, newStart: newAt, removed: [], added: [] };
    if (change.removed) {
      open.removed.push(...change.value);
      oldAt += change.count;
    } else {
      open.added.push(...change.value);
      newAt += change.count;
    }
  }
  if (open) blocks.push(open);
  return blocks;
}

/** Consecutive blocks whose context would touch are shown as one hunk. */
function hunksOf(blocks: readonly Block[]): Block[][] {
  const hunks: Block[][] = [];
  for (const block of blocks) {
    const last = hunks.at(-1)?.at(-1);
    if (last && block.oldStart - (last.oldStart + last.removed.length) <= 2 * CONTEXT) hunks.at(-1)!.push(block);
    else hunks.push([block]);
  }
  return hunks;
}

/** A hunk header range from a 0-based start: `5` for one line, `5,3`, or `4,0` for none (after line 4). */
const range = (start: number, count: number) => (count === 1 ? `${start + 1}` : `${count === 0 ? start : start + 1},${count}`);

/** What the two header lines call the file: `a/f` and `b/f` by default, as git shows it. */
export interface DiffLabels {
  readonly before: string;
  readonly after: string;
}

/** A new file's diff: its first lines, without splitting the whole (possibly huge) content. */
function newFileDiff(labels: DiffLabels, after: string, maxLines: number): Diff {
  const out = ['--- /dev/null', `+++ ${labels.after}`];
  let total = 0;
  let start = 0;
  const shown: string[] = [];
  while (start < after.length) {
    const end = after.indexOf('\n', start);
    const stop = end === -1 ? after.length : end;
    if (shown.length < maxLines - out.length - 1) shown.push(`+${after.slice(start, stop)}`);
    total++;
    start = stop + 1;
  }
  if (total === 0) return { text: out.join('\n'), added: 0, removed: 0 };
  out.push(`@@ -0,0 +${total === 1 ? '1' : `1,${total}`} @@`, ...shown);
  if (total > shown.length) out.push(`… ${total - shown.length} more diff lines not shown (+${total} −0 lines in all)`);
  return { text: out.join('\n'), added: total, removed: 0 };
}

/**
 * A bounded unified diff of `before` (undefined for a new file) and `after`, labelled with
 * `shownAs` (or `labels`), at most `maxLines` lines with a line that says how much more there was.
 */
export function unifiedDiff(shownAs: string, before: string | undefined, after: string, maxLines: number, labels: DiffLabels = { before: `a/${shownAs}`, after: `b/${shownAs}` }): Diff {
  if (before === undefined) return newFileDiff(labels, after, maxLines);
  const oldLines = splitLines(before);
  const newLines = splitLines(after);
  const blocks = changedBlocks(oldLines, newLines);
  const added = blocks.reduce((sum, block) => sum + block.added.length, 0);
  const removed = blocks.reduce((sum, block) => sum + block.removed.length, 0);
  const out: string[] = [`--- ${labels.before}`, `+++ ${labels.after}`];
  let budget = Math.max(0, maxLines - out.length);
  let hidden = 0;
  const emit = (line: string) => {
    if (budget > 0) {
      out.push(line);
      budget--;
    } else hidden++;
  };
  for (const hunk of hunksOf(blocks)) {
    const first = hunk[0]!;
    const last = hunk.at(-1)!;
    const oldStart = Math.max(0, first.oldStart - CONTEXT);
    const oldEnd = Math.min(oldLines.length, last.oldStart + last.removed.length + CONTEXT);
    const newStart = first.newStart - (first.oldStart - oldStart);
    const newEnd = last.newStart + last.added.length + (oldEnd - (last.oldStart + last.removed.length));
    const oldCount = oldEnd - oldStart;
    const newCount = newEnd - newStart;
    emit(`@@ -${range(oldStart, oldCount)} +${range(newStart, newCount)} @@`);
    let at = oldStart;
    for (const block of hunk) {
      for (; at < block.oldStart; at++) emit(` ${oldLines[at]}`);
      for (const line of block.removed) emit(`-${line}`);
      for (const line of block.added) emit(`+${line}`);
      at = block.oldStart + block.removed.length;
    }
    for (; at < oldEnd; at++) emit(` ${oldLines[at]}`);
  }
  if (hidden > 0) out.push(`… ${hidden} more diff lines not shown (+${added} −${removed} lines in all)`);
  return { text: out.join('\n'), added, removed };
}
