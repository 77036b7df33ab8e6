// Parsers for bulkhead-git's replies: the text content a client (and the model) sees, not the
// structured copy, so the check covers what is actually read.

/** git_log: each commit starts on a line of its own with `<full hash> <date> <author>`; its message lines are indented. */
export function oursLogHashes(text) {
  return [...text.matchAll(/^([0-9a-f]{40}) \d{4}-/gm)].map((match) => match[1]);
}

/**
 * git_diff: `N files changed[; the first K are listed …]:`, one `  <status> <path> +a −d[ — note]`
 * line per listed file, then a blank line before each shown patch (`diff --git …`, optionally
 * followed by a `[patch cut …]` note).
 */
export function oursDiff(text) {
  const head = /^(\d+) files? changed(?:; the first (\d+) are listed[^\n]*)?:\n/.exec(text);
  if (!head) return { files: [], total: 0, patches: [], problem: `unexpected reply: "${text.slice(0, 60)}"` };
  const [listText, ...blocks] = text.slice(head[0].length).split('\n\n');
  // `  modified src/x.txt +2 −2`: the status words are fixed, the counts and note optional.
  const names = listText.split('\n').map((line) => /^ {2}(?:added|modified|deleted|renamed|copied|type changed|unmerged|unknown) (.+?)(?: (?:\+\d+ −\d+|binary))?(?: — .*)?$/.exec(line)?.[1]);
  const patches = blocks
    .filter((block) => block.startsWith('diff '))
    .map((block) => {
      const lines = block.split('\n');
      const cut = lines.at(-1).startsWith('[') ? lines.pop() : undefined;
      return { path: /^diff --git a\/(.*) b\//.exec(lines[0])?.[1], text: lines.join('\n'), cut };
    });
  return { files: names.filter((name) => name !== undefined), unparsed: names.filter((name) => name === undefined).length, total: Number(head[1]), patches };
}

/** git_show_file: numbered lines `   123\ttext`, then an optional `[…]` footer. */
export function oursFileLines(text) {
  return text
    .split('\n')
    .map((line) => /^\s*(\d+)\t(.*)$/.exec(line))
    .filter(Boolean)
    .map((match) => match[2]);
}

/**
 * git_blame: `<12-hex commit> <date> <author> <line>\t<text>` per line, a footer, then the
 * `Commits:` legend. Returns line number → short commit id.
 */
export function oursBlame(text) {
  const body = text.split('\nCommits:\n')[0];
  const lines = new Map();
  for (const match of body.matchAll(/^([0-9a-f]{12}) \d{4}-\d\d-\d\d .{16} +(\d+)\t/gm)) lines.set(Number(match[2]), match[1]);
  return lines;
}
