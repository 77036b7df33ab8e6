// What each git bench case must return, worked out once from the repository with plain git
// (untimed), and the parsers that pull comparable facts out of each side's reply: commit hashes
// for git_log, file names and patch text for git_diff, line text for git_show_file, the commit of
// every line for git_blame. A side whose reply disagrees is flagged, whatever its speed.
import { spawnSync } from 'node:child_process';
import { largeContent, largeLine } from './git-data.mjs';
import { rawGitEnv } from './git-measure.mjs';

function git(repo, args) {
  const result = spawnSync('git', args, { cwd: repo, encoding: 'utf8', maxBuffer: 256 * 1024 * 1024, env: rawGitEnv() });
  if (result.status !== 0) throw new Error(`git ${args.join(' ')} failed: ${result.stderr.trim().slice(0, 300)}`);
  return result.stdout;
}

/** Commit of each final line (index 0 = line 1) in `git blame --porcelain` output. */
export function porcelainBlame(text) {
  const commits = [];
  for (const match of text.matchAll(/^([0-9a-f]{40}) \d+ (\d+)(?: \d+)?$/gm)) commits[Number(match[2]) - 1] = match[1];
  return commits;
}

/** `diff --git a/X b/X` headers of a patch, in order. */
export function patchFiles(text) {
  return [...text.matchAll(/^diff --git a\/(.*) b\/.*$/gm)].map((match) => match[1]);
}

/** A patch split per file: path → its section, from `diff --git` up to (not including) the next. */
export function patchSections(text) {
  const sections = new Map();
  for (const section of text.split(/^(?=diff --git )/m)) {
    const path = /^diff --git a\/(.*) b\//.exec(section)?.[1];
    if (path !== undefined) sections.set(path, section.replace(/\n$/, ''));
  }
  return sections;
}

export function expectations(info, { skip, count, window }) {
  const { repo } = info;
  const revList = (extra) => git(repo, ['rev-list', `--max-count=${count}`, ...extra, 'HEAD', '--']).trim().split('\n');
  const blame = porcelainBlame(git(repo, ['blame', '--porcelain', info.head, '--', info.blame.path]));
  const names = git(repo, ['diff', '--name-only', info.range.from, info.range.to, '--']).trim().split('\n');
  const patch = git(repo, ['diff', '--no-ext-diff', '--no-textconv', '--no-color', info.range.from, info.range.to, '--']);
  const expected = {
    logTip: revList([]),
    logSkip: revList([`--skip=${skip}`]),
    diff: { names, patch, sections: patchSections(patch) },
    file: { content: largeContent(info.large.version), window: Array.from({ length: window.limit }, (_, i) => largeLine(window.offset + i, info.large.version)) },
    blame,
  };
  // The generator's own record must agree with git, or the data is not what the bench thinks it is.
  const sanity = [
    [expected.logTip.length === count && expected.logSkip.length === count, `rev-list gave ${expected.logTip.length} and ${expected.logSkip.length} commits`],
    [names.length === info.range.files.length && names.every((name, i) => name === info.range.files[i]), `the range changes ${names.length} files, not the generator's ${info.range.files.length}`],
    [blame.length === info.blame.lines && blame.every(Boolean), `blame covers ${blame.filter(Boolean).length} of ${info.blame.lines} lines`],
    [git(repo, ['cat-file', 'blob', `${info.large.rev}:${info.large.path}`]) === expected.file.content, 'the large file at the old commit is not the generated text'],
  ];
  const failed = sanity.filter(([ok]) => !ok).map(([, why]) => why);
  if (failed.length > 0) throw new Error(`the bench repository is not as generated (delete bench/.work/git to rebuild): ${failed.join('; ')}`);
  return expected;
}

// ── comparisons shared by all sides ──────────────────────────────────────────────────────────

export function sameHashes(got, want) {
  const ok = got.length === want.length && got.every((hash, i) => hash === want[i]);
  if (ok) return { ok, detail: `${got.length} commits, hashes match git` };
  const at = got.findIndex((hash, i) => hash !== want[i]);
  return { ok, detail: `${got.length} commits, expected ${want.length}${at >= 0 ? `; #${at + 1} is ${String(got[at]).slice(0, 12)}, git says ${want[at]?.slice(0, 12)}` : ''}` };
}

export function sameLines(got, want, what) {
  const ok = got.length === want.length && got.every((line, i) => line === want[i]);
  if (ok) return { ok, detail: `${what}: ${got.length} lines match` };
  const at = got.findIndex((line, i) => line !== want[i]);
  return { ok, detail: `${what}: ${got.length} lines (expected ${want.length})${at >= 0 ? `, line #${at + 1} is "${String(got[at]).slice(0, 40)}"` : ''}` };
}

/**
 * `got` maps line number → commit (full, or a prefix of at least 12 digits) for the lines a reply
 * covers; every one must agree with git, and every line of `lines` ([first, last]) must be there.
 */
export function sameBlame(got, want, [first, last]) {
  const wrong = [...got].filter(([line, commit]) => line < first || line > last || commit.length < 12 || !want[line - 1]?.startsWith(commit));
  const expected = last - first + 1;
  const ok = wrong.length === 0 && got.size === expected;
  const parts = [`${got.size.toLocaleString('en-US')} of ${expected.toLocaleString('en-US')} lines`];
  parts.push(wrong.length === 0 ? 'every listed line has git’s commit' : `${wrong.length} lines with another commit than git’s (e.g. line ${wrong[0][0]})`);
  return { ok, detail: parts.join(', ') };
}

// ── raw git replies ──────────────────────────────────────────────────────────────────────────

export const RAW_LOG_FORMAT = '%H%x1f%P%x1f%an%x1f%ae%x1f%aI%x1f%s%x1f%b%x1e';

export function rawLogHashes(text) {
  return text
    .split('\x1e')
    .map((record) => record.replace(/^\n/, ''))
    .filter(Boolean)
    .map((record) => record.split('\x1f')[0]);
}

// ── peer (@cyanheads/git-mcp-server) replies: JSON text ─────────────────────────────────────

export function peerJson(text) {
  try {
    return JSON.parse(text);
  } catch {
    return undefined;
  }
}
