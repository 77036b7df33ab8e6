import { canonicalJson, neutralizeInvisible, unifiedDiff } from '@bulkhead/core';

/** The keys of a pinned definition in the order a human reads them; any other key follows, sorted. */
const KEY_ORDER = ['title', 'description', 'inputSchema', 'outputSchema', 'annotations', 'riskMeta'];

/**
 * A definition as lines a human compares: each key on its own line, a text value's lines
 * indented below it (a description's line breaks are its own), any other value as indented
 * JSON with sorted keys. Every invisible character is written out, so a hidden instruction shows.
 */
export function definitionLines(definition: Readonly<Record<string, unknown>>): string[] {
  const sorted = JSON.parse(canonicalJson(definition)) as Record<string, unknown>;
  const keys = [...KEY_ORDER, ...Object.keys(sorted).filter((key) => !KEY_ORDER.includes(key)).sort()];
  const lines: string[] = [];
  for (const key of keys) {
    const value = sorted[key];
    if (value === undefined) {
      lines.push(`${key}: (none)`);
      continue;
    }
    lines.push(`${key}:`);
    const text = typeof value === 'string' ? value : JSON.stringify(value, null, 2);
    for (const line of text.split(/\r?\n/)) lines.push(`  ${neutralizeInvisible(line)}`);
  }
  return lines;
}

/** One side of a row: its 1-based line number and text, and whether the difference touches it. */
export interface DiffCell {
  readonly line: number;
  readonly text: string;
  readonly changed: boolean;
}

/** A row of a side-by-side view: an empty side is a line the other side added or removed. */
export interface DiffRow {
  readonly before?: DiffCell;
  readonly after?: DiffCell;
}

export interface SideBySide {
  readonly rows: readonly DiffRow[];
  readonly added: number;
  readonly removed: number;
}

/** A hunk header's start as a 0-based index: `5` (or `5,3`) is line 5, `4,0` is after line 4. */
const HUNK_HEADER = /^@@ -(\d+)(?:,(\d+))? \+(\d+)(?:,(\d+))? @@$/;
const startIndex = (start: string, count: string | undefined) => (count === '0' ? Number(start) : Number(start) - 1);

/**
 * The two texts side by side, whole, with the lines the core's unified diff changed marked: the
 * unchanged stretches between hunks are filled in from the texts, and a removed block sits beside
 * the block that replaced it.
 */
export function sideBySide(before: readonly string[], after: readonly string[]): SideBySide {
  // Room for every line twice and a header per change, so the diff is never cut.
  const diff = unifiedDiff('definition', before.join('\n'), after.join('\n'), 4 + 3 * (before.length + after.length));
  const rows: DiffRow[] = [];
  let oldAt = 0;
  let newAt = 0;
  const same = () => {
    rows.push({ before: { line: oldAt + 1, text: before[oldAt]!, changed: false }, after: { line: newAt + 1, text: after[newAt]!, changed: false } });
    oldAt++;
    newAt++;
  };
  let removed: DiffCell[] = [];
  let added: DiffCell[] = [];
  const flush = () => {
    for (let index = 0; index < Math.max(removed.length, added.length); index++) {
      rows.push({ ...(removed[index] ? { before: removed[index] } : {}), ...(added[index] ? { after: added[index] } : {}) });
    }
    removed = [];
    added = [];
  };
  for (const line of diff.text.split('\n').slice(2)) {
    const header = HUNK_HEADER.exec(line);
    if (header) {
      flush();
      const oldStart = startIndex(header[1]!, header[2]);
      while (oldAt < oldStart) same();
      newAt = startIndex(header[3]!, header[4]);
      continue;
    }
    const text = line.slice(1);
    if (line.startsWith('-')) removed.push({ line: ++oldAt, text, changed: true });
    else if (line.startsWith('+')) added.push({ line: ++newAt, text, changed: true });
    else if (line.startsWith(' ')) {
      flush();
      same();
    }
  }
  flush();
  while (oldAt < before.length && newAt < after.length) same();
  return { rows, added: diff.added, removed: diff.removed };
}
