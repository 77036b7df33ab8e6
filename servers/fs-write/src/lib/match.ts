import { diffChars } from 'diff';

/** Start offsets of every non-overlapping occurrence of `needle`, left to right. */
export function occurrences(text: string, needle: string): number[] {
  const found: number[] = [];
  for (let at = text.indexOf(needle); at !== -1; at = text.indexOf(needle, at + needle.length)) found.push(at);
  return found;
}

/** Replaces the occurrences at `starts` literally: `$&` and friends in `replacement` stay as typed. */
export function replaceAt(text: string, starts: readonly number[], length: number, replacement: string): string {
  const parts: string[] = [];
  let from = 0;
  for (const start of starts) {
    parts.push(text.slice(from, start), replacement);
    from = start + length;
  }
  parts.push(text.slice(from));
  return parts.join('');
}

/** 1-based line numbers of offsets, by binary search over the newline positions. */
export class LineIndex {
  private readonly newlines: number[] = [];

  constructor(text: string) {
    for (let at = text.indexOf('\n'); at !== -1; at = text.indexOf('\n', at + 1)) this.newlines.push(at);
  }

  lineOf(offset: number): number {
    let low = 0;
    let high = this.newlines.length;
    while (low < high) {
      const mid = (low + high) >> 1;
      if (this.newlines[mid]! < offset) low = mid + 1;
      else high = mid;
    }
    return low + 1;
  }
}

function bigrams(text: string): Map<string, number> {
  const counts = new Map<string, number>();
  const squeezed = text.replace(/\s+/g, ' ').trim();
  for (let i = 0; i < squeezed.length - 1; i++) {
    const pair = squeezed.slice(i, i + 2);
    counts.set(pair, (counts.get(pair) ?? 0) + 1);
  }
  return counts;
}

/** Dice similarity over character pairs: cheap, and kind to small typos and spacing changes. */
function similarity(a: Map<string, number>, b: Map<string, number>): number {
  let sizeA = 0;
  let sizeB = 0;
  let shared = 0;
  for (const count of a.values()) sizeA += count;
  for (const [pair, count] of b) {
    sizeB += count;
    shared += Math.min(count, a.get(pair) ?? 0);
  }
  return sizeA + sizeB === 0 ? 1 : (2 * shared) / (sizeA + sizeB);
}

const CANDIDATE_LINES = 24;
const MIN_SIMILARITY = 0.5;

/**
 * Where the text comes closest to `needle`, for an edit that matched nothing: the lines with
 * their numbers and the character differences, so the model can correct old_string and retry.
 */
export function nearestMatch(text: string, needle: string): string {
  const lines = text.split('\n');
  const needleLines = needle.split('\n');
  const anchorIndex = Math.max(0, needleLines.findIndex((line) => line.trim() !== ''));
  const anchor = bigrams(needleLines[anchorIndex] ?? needle);
  const candidates = lines
    .map((line, index) => ({ index, score: similarity(anchor, bigrams(line)) }))
    .sort((a, b) => b.score - a.score)
    .slice(0, CANDIDATE_LINES);
  const whole = bigrams(needle);
  let best: { start: number; score: number; window: string } | undefined;
  for (const candidate of candidates) {
    const start = Math.max(0, candidate.index - anchorIndex);
    const window = lines.slice(start, start + needleLines.length).join('\n');
    const score = similarity(whole, bigrams(window));
    if (!best || score > best.score) best = { start, score, window };
  }
  if (!best || best.score < MIN_SIMILARITY) return 'Nothing in the file is close to old_string; read the file again to see its current content.';
  const shown = best.window.split('\n').map((line, i) => `${String(best.start + i + 1).padStart(6)}\t${line}`);
  const percent = Math.round(best.score * 100);
  const header = `The closest text is at line${shown.length > 1 ? `s ${best.start + 1}-${best.start + shown.length}` : ` ${best.start + 1}`} (${percent}% similar):`;
  return `${header}\n${shown.join('\n')}\n${describeDifference(needle, best.window)}`;
}

/** Newlines and tabs shown as escapes so the difference stays on one line. */
function visible(text: string): string {
  return JSON.stringify(text).slice(1, -1);
}

const SHOWN_CHARS = 400;

function describeDifference(needle: string, found: string): string {
  if (needle.replace(/\s+/g, ' ').trim() === found.replace(/\s+/g, ' ').trim()) {
    return 'They differ only in whitespace (indentation, spaces or line breaks): copy old_string exactly from the file.';
  }
  const rendered = diffChars(needle, found)
    .map((change) => {
      const text = visible(change.value);
      if (change.removed) return `[-${text}-]`;
      if (change.added) return `{+${text}+}`;
      return text.length > 24 ? `${text.slice(0, 10)}…${text.slice(-10)}` : text;
    })
    .join('');
  const cut = rendered.length > SHOWN_CHARS ? `${rendered.slice(0, SHOWN_CHARS)}…` : rendered;
  return `Difference ([-x-] is only in old_string, {+y+} only in the file): ${cut}`;
}
