import { z } from 'zod';
import { decodeGitName, formatBytes, NEWLINE, NUL, quoteGitPath, textName, TokenReader, type GitRepository, type PathGlobSet } from '@bulkhead/core';
import type { GitLimits } from '../policy.js';
import { cutText } from './commits.js';

const MAX_PATH_BYTES = 4096;

const STATUS: Readonly<Record<string, string>> = { A: 'added', M: 'modified', D: 'deleted', R: 'renamed', C: 'copied', T: 'type changed', U: 'unmerged' };

export const diffFileSchema = z.object({
  path: z.string().describe('Path after the change, relative to the repository top'),
  old_path: z.string().optional().describe('Path before a rename or copy'),
  status: z.string().describe('added, modified, deleted, renamed, copied, type changed or unmerged'),
  similarity: z.number().int().optional().describe('How alike a renamed or copied file is, in percent'),
  added: z.number().int().nullable().describe('Lines added; null when not known (binary, or not read)'),
  deleted: z.number().int().nullable().describe('Lines deleted; null when not known'),
  binary: z.boolean().describe('Binary content: no lines are shown'),
  omitted: z.string().optional().describe('Why the patch is missing from the text, or cut there'),
});

export const diffOutputSchema = z.object({
  files: z.array(diffFileSchema).describe('Changed files, in git\'s order; their patches are in the text'),
  total_files: z.number().int().describe('All changed files, listed or not'),
  truncated: z.boolean().describe('Some patches were cut or left out, or not every file is listed'),
});

/**
 * A changed file while the diff is read: the structured fields, and the patch, which goes in the
 * text only (the structured result lists files, so patches are not sent twice).
 */
export type DiffFile = z.output<typeof diffFileSchema> & { patch?: string };
export type DiffOutput = Omit<z.output<typeof diffOutputSchema>, 'files'> & { files: DiffFile[] };

/** The structured result: every field but the patches. */
export function structuredDiff(output: DiffOutput): z.output<typeof diffOutputSchema> {
  return { ...output, files: output.files.map(({ patch: _patch, ...file }) => file) };
}

export interface DiffLimits {
  readonly fileMaxLines: number;
  readonly totalMaxBytes: number;
  readonly maxFiles: number;
  readonly lineMaxChars: number;
}

export function diffLimits(limits: GitLimits): DiffLimits {
  return { fileMaxLines: limits.diff_file_max_lines, totalMaxBytes: limits.diff_total_max_bytes, maxFiles: limits.diff_max_files, lineMaxChars: limits.line_max_chars };
}

export interface DiffRequest {
  /** The command and its selection: `['diff', '--cached']`, `['diff-tree', '-r', '--root', '--no-commit-id']`. */
  readonly command: readonly string[];
  /** Revisions (peeled to commits, or commit ids), given after `--end-of-options`. */
  readonly revisions: readonly string[];
  readonly pathspec: readonly string[];
  readonly contextLines: number;
  readonly statOnly: boolean;
  readonly limits: DiffLimits;
  /** Files whose content is never shown, and files summarised as counts. */
  readonly denyRead: PathGlobSet;
  readonly lockfiles: PathGlobSet;
  readonly signal: AbortSignal;
}

interface Entry {
  readonly file: DiffFile;
  /** The raw paths as git stores them, before and after. */
  readonly paths: readonly Buffer[];
  readonly combined: boolean;
  /** Why the lines of this file are not kept, decided before its patch arrives. */
  readonly withheld: string | undefined;
}

/** The first line of the patch section git writes for an entry (diff.c): matched byte for byte. */
function sectionHeader(entry: Entry): Buffer {
  if (entry.combined) return Buffer.concat([Buffer.from('diff --cc '), quoteGitPath(entry.paths[0]!)]);
  const [before, after] = [entry.paths[0]!, entry.paths[1] ?? entry.paths[0]!];
  return Buffer.concat([Buffer.from('diff --git '), quoteGitPath(Buffer.concat([Buffer.from('a/'), before])), Buffer.from(' '), quoteGitPath(Buffer.concat([Buffer.from('b/'), after]))]);
}

/**
 * Parses one `git diff --raw -p -z` (or `--raw --numstat -z`) stream as it arrives: the raw
 * records name every file with exact bytes, then each patch section is matched to its record by
 * its header. Patches are kept up to a per-file line cap and a total byte cap; once the total cap
 * is reached the stream is stopped, and the files after it are listed without their patch.
 */
class DiffParser {
  readonly entries: Entry[] = [];
  totalFiles = 0;
  /** A raw or numstat record whose paths (the next NUL-separated fields) are still being read. */
  private record: { readonly kind: 'raw'; readonly header: string } | { readonly kind: 'numstat'; readonly added: number | null; readonly deleted: number | null } | undefined;
  private recordPathsLeft = 0;
  private recordPaths: Buffer[] = [];
  /** Entries before this index have had their patch section (or numstat record). */
  private next = 0;
  private section: { entry: Entry | undefined; lines: string[]; keptLines: number; cutLines: number; inHunks: boolean } | undefined;
  private usedBytes = 0;
  /** The total cap was reached: the stream is stopped. */
  private full = false;
  /** Some patch lost lines to a cap. */
  cut = false;
  readonly reader: TokenReader;

  constructor(private readonly request: DiffRequest) {
    this.reader = new TokenReader({ delimiter: NUL, maxTokenBytes: Math.max(MAX_PATH_BYTES, request.limits.lineMaxChars * 4), onToken: (token, dropped) => this.token(token, dropped) });
  }

  private token(token: Buffer, dropped: number): 'stop' | undefined {
    if (this.reader.delimiter === NEWLINE) this.patchLine(token, dropped);
    else this.recordField(token);
    return this.full ? 'stop' : undefined;
  }

  private recordField(field: Buffer): void {
    if (this.record) {
      this.recordPaths.push(field);
      if (--this.recordPathsLeft === 0) this.finishRecord();
      return;
    }
    if (field.length === 0) {
      // The empty field between the raw records and the patch text.
      this.reader.delimiter = NEWLINE;
      return;
    }
    const text = field.toString('latin1');
    if (text.startsWith(':')) {
      const status = text.slice(text.lastIndexOf(' ') + 1);
      this.record = { kind: 'raw', header: text };
      this.recordPathsLeft = !text.startsWith('::') && (status[0] === 'R' || status[0] === 'C') ? 2 : 1;
      return;
    }
    // A numstat record: `added<TAB>deleted<TAB>path`, or `added<TAB>deleted<TAB>` and then the two paths of a rename.
    const [added, deleted] = text.split('\t');
    const prefixBytes = `${added}\t${deleted}\t`.length;
    this.record = { kind: 'numstat', added: added === '-' ? null : Number(added), deleted: deleted === '-' ? null : Number(deleted) };
    if (field.length > prefixBytes) {
      this.recordPaths.push(field.subarray(prefixBytes));
      this.finishRecord();
    } else {
      this.recordPathsLeft = 2;
    }
  }

  private finishRecord(): void {
    const record = this.record!;
    const paths = this.recordPaths;
    this.record = undefined;
    this.recordPaths = [];
    if (record.kind === 'raw') this.addEntry(record.header, paths);
    else this.addCounts(record.added, record.deleted, paths.at(-1)!);
  }

  private addEntry(header: string, paths: Buffer[]): void {
    this.totalFiles++;
    if (this.entries.length >= this.request.limits.maxFiles) return;
    const combined = header.startsWith('::');
    const fields = header.replace(/^:+/, '').split(' ');
    const statusField = fields.at(-1)!;
    const letter = combined ? 'U' : statusField[0]!;
    const modes = fields.slice(0, combined ? 3 : 2);
    const path = decodeGitName(paths.at(-1)!);
    const oldPath = paths.length > 1 ? decodeGitName(paths[0]!) : undefined;
    const file: DiffFile = {
      path,
      ...(oldPath !== undefined ? { old_path: oldPath } : {}),
      status: STATUS[letter] ?? 'unknown',
      ...(letter === 'R' || letter === 'C' ? { similarity: Number(statusField.slice(1)) } : {}),
      added: null,
      deleted: null,
      binary: false,
      ...(combined ? { omitted: 'unmerged (conflicted): no patch until the conflict is resolved' } : {}),
    };
    const denied = this.request.denyRead.match(path) ?? (oldPath !== undefined ? this.request.denyRead.match(oldPath) : undefined);
    const withheld = denied
      ? `content not shown: the path matches \`${denied}\` in deny_read`
      : this.request.lockfiles.match(path)
        ? 'lockfile: its patch is summarised, not shown'
        : modes.every((mode) => mode === '160000' || mode === '000000')
          ? 'submodule'
          : undefined;
    this.entries.push({ file, paths, combined, withheld });
  }

  /** Numstat records come in the raw records' order: each goes to the next entry with its path. */
  private addCounts(added: number | null, deleted: number | null, after: Buffer): void {
    for (let i = this.next; i < this.entries.length; i++) {
      const entry = this.entries[i]!;
      if (!entry.paths.at(-1)!.equals(after)) continue;
      entry.file.added = added;
      entry.file.deleted = deleted;
      entry.file.binary = added === null;
      if (entry.withheld) entry.file.omitted = entry.withheld;
      this.next = i + 1;
      return;
    }
  }

  private patchLine(line: Buffer, dropped: number): void {
    if (line.subarray(0, 5).toString('latin1') === 'diff ') {
      this.startSection(line);
      return;
    }
    const section = this.section;
    if (!section) return;
    const file = section.entry?.file;
    if (!section.inHunks) {
      if (line.subarray(0, 2).toString('latin1') === '@@') section.inHunks = true;
      else if (file && line.subarray(0, 13).toString('latin1') === 'Binary files ') file.binary = true;
    } else if (file && !section.entry!.combined) {
      if (line[0] === 0x2b) file.added = (file.added ?? 0) + 1;
      else if (line[0] === 0x2d) file.deleted = (file.deleted ?? 0) + 1;
    }
    this.keepLine(line.toString('utf8'), dropped);
  }

  /** Opens the section a `diff …` line starts, on the entry whose header it is. */
  private startSection(header: Buffer): void {
    this.closeSection();
    let found: Entry | undefined;
    for (let i = this.next; i < this.entries.length; i++) {
      if (sectionHeader(this.entries[i]!).equals(header)) {
        found = this.entries[i]!;
        // A type change (a file become a symlink) is two sections under one header, so the pointer stays.
        this.next = i;
        break;
      }
    }
    if (!found && this.entries.length >= this.request.limits.maxFiles) {
      // A file past the listed ones: nothing after it can be shown.
      this.full = true;
      return;
    }
    // The second section of a type change continues the first.
    const earlier = found?.file.patch;
    this.section = { entry: found, lines: earlier !== undefined ? [earlier] : [], keptLines: 0, cutLines: 0, inHunks: false };
    if (found) {
      found.file.added ??= 0;
      found.file.deleted ??= 0;
    }
    this.keepLine(header.toString('utf8'), 0);
  }

  private keepLine(text: string, dropped: number): void {
    const section = this.section!;
    const entry = section.entry;
    if (entry?.withheld || entry?.file.binary) return;
    if (section.keptLines >= this.request.limits.fileMaxLines || this.full) {
      section.cutLines++;
      return;
    }
    const line = cutText(text, this.request.limits.lineMaxChars, dropped, 'line');
    const bytes = Buffer.byteLength(line) + 1;
    if (this.usedBytes + bytes > this.request.limits.totalMaxBytes) {
      this.full = true;
      section.cutLines++;
      return;
    }
    this.usedBytes += bytes;
    section.lines.push(line);
    section.keptLines++;
  }

  /** Puts the finished section's text and notes on its file. */
  private closeSection(): void {
    const section = this.section;
    this.section = undefined;
    if (!section?.entry) return;
    const file = section.entry.file;
    if (section.entry.withheld) {
      file.omitted = section.entry.withheld;
      return;
    }
    if (file.binary) {
      file.omitted = 'binary: its content is not shown';
      file.added = null;
      file.deleted = null;
      return;
    }
    if (section.lines.length > 0) file.patch = section.lines.join('\n');
    if (section.cutLines > 0) {
      this.cut = true;
      const why = this.full ? `the total cap of ${formatBytes(this.request.limits.totalMaxBytes)} (limits.diff_total_max_bytes)` : `${this.request.limits.fileMaxLines} lines (limits.diff_file_max_lines)`;
      file.omitted = `patch cut at ${why}; ask for this file alone with path`;
      // The rest of the file was never read when the stream stopped, so its counts are unknown.
      if (this.full) {
        file.added = null;
        file.deleted = null;
      }
    }
  }

  /** After the stream ended: files whose patch never came are marked. */
  finish(stopped: boolean): void {
    this.reader.end();
    this.closeSection();
    for (const entry of this.entries) {
      const file = entry.file;
      if (file.omitted !== undefined || file.patch !== undefined) continue;
      if (entry.withheld) file.omitted = entry.withheld;
      else if (stopped && !this.request.statOnly && file.added === null) file.omitted = 'not shown: the patch output stopped at a cap before this file';
    }
  }
}

/** Runs one diff and returns its files, each with a bounded patch or the reason it has none. */
export async function runDiff(repository: GitRepository, request: DiffRequest): Promise<DiffOutput> {
  const parser = new DiffParser(request);
  const format = request.statOnly ? ['--raw', '--numstat'] : ['--raw', '-p', `-U${request.contextLines}`];
  const result = await repository.run(
    [...request.command, ...format, '-z', '-M', '--no-color', '--no-ext-diff', '--no-textconv', '--ignore-submodules=all', '--end-of-options', ...request.revisions, '--', ...request.pathspec],
    {
      signal: request.signal,
      mayReadWorkTree: true,
      onStdout: (chunk) => (parser.reader.push(chunk) ? undefined : 'stop'),
    },
  );
  const stopped = result.stopped || result.truncated;
  parser.finish(stopped);
  const files = parser.entries.map((entry) => entry.file);
  return { files, total_files: parser.totalFiles, truncated: stopped || parser.cut || parser.totalFiles > files.length };
}

function counts(file: DiffFile): string {
  if (file.binary) return 'binary';
  if (file.added === null || file.deleted === null) return '';
  return `+${file.added} −${file.deleted}`;
}

/** The summary list and then each patch, as one text a model reads top to bottom. */
export function renderDiff(output: DiffOutput, statOnly: boolean): string {
  if (output.total_files === 0) return 'No differences.';
  const listed = output.files.length < output.total_files ? `; the first ${output.files.length} are listed (limits.diff_max_files)` : '';
  const lines = [`${output.total_files} file${output.total_files === 1 ? '' : 's'} changed${listed}:`];
  for (const file of output.files) {
    const name = file.old_path !== undefined ? `${textName(file.old_path)} -> ${textName(file.path)}${file.similarity !== undefined ? ` (${file.similarity}%)` : ''}` : textName(file.path);
    const note = file.omitted !== undefined && (file.patch === undefined || statOnly) ? ` — ${file.omitted}` : '';
    lines.push(`  ${file.status} ${name} ${counts(file)}${note}`.replace(/ +—/, ' —').trimEnd());
  }
  if (statOnly) return lines.join('\n');
  const patches = output.files.filter((file) => file.patch !== undefined);
  for (const file of patches) lines.push('', file.patch!, ...(file.omitted !== undefined ? [`[${file.omitted}]`] : []));
  if (output.truncated && patches.length < output.files.length) {
    lines.push('', '[some files have no patch above (see the list); ask for one file with path, or narrow the range]');
  }
  return lines.join('\n');
}
