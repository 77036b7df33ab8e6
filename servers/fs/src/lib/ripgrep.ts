import { spawn } from 'node:child_process';
import { closeSync } from 'node:fs';
import picomatch from 'picomatch';
import { ToolError } from '@bulkhead/core';
import type { GrepFile, GrepOutcome, GrepRequest, ListOutcome, ListRequest, SearchEngine } from './search-types.js';
import { patternNamesHidden } from './hidden.js';
import { Beneath, byFolder, HAS_PROC_FD, type PinnedFolder } from './beneath.js';

const MAX_STDERR = 8192;

interface RunResult {
  readonly code: number | null;
  readonly stderr: string;
  readonly timedOut: boolean;
  readonly stoppedEarly: boolean;
}

/** Files handed to one rg run of the second pass, as descriptors 3, 4, … of the child. */
const VERIFY_BATCH = 500;
/** How the child names its own descriptors (macOS has /dev/fd but no /proc). */
const CHILD_FD = HAS_PROC_FD ? '/proc/self/fd/' : '/dev/fd/';

/** Where rg runs: in a pinned folder (its descriptor becomes the child's fd 3 and cwd), or on descriptors given as files. */
type RgPlace = { readonly folder: PinnedFolder } | { readonly fds: readonly number[] };

/**
 * Runs rg without a shell, feeding each NUL/newline-delimited record to `onRecord`; returning
 * false from it stops rg. The process is killed on timeout and on cancellation.
 */
function runRg(rgPath: string, args: string[], place: RgPlace, timeoutMs: number, signal: AbortSignal, separator: number, onRecord: (record: string) => boolean): Promise<RunResult> {
  return new Promise((resolve, reject) => {
    const extra = 'folder' in place ? (HAS_PROC_FD ? [place.folder.fd] : []) : place.fds;
    const cwd = 'folder' in place ? (HAS_PROC_FD ? '/proc/self/fd/3' : place.folder.real) : undefined;
    const child = spawn(rgPath, args, { ...(cwd ? { cwd } : {}), stdio: ['ignore', 'pipe', 'pipe', ...extra], env: { PATH: process.env['PATH'] ?? '' } });
    let stderr = '';
    let timedOut = false;
    let stoppedEarly = false;
    let pending = Buffer.alloc(0);
    const stop = () => {
      if (child.exitCode === null) child.kill('SIGKILL');
    };
    const timer = setTimeout(() => {
      timedOut = true;
      stop();
    }, timeoutMs);
    const onAbort = () => stop();
    signal.addEventListener('abort', onAbort, { once: true });
    child.stdout!.on('data', (chunk: Buffer) => {
      if (stoppedEarly) return;
      let data = pending.length > 0 ? Buffer.concat([pending, chunk]) : chunk;
      let from = 0;
      for (let at = data.indexOf(separator); at !== -1; at = data.indexOf(separator, from)) {
        const record = data.toString('utf8', from, at);
        from = at + 1;
        if (!onRecord(record)) {
          stoppedEarly = true;
          stop();
          return;
        }
      }
      data = data.subarray(from);
      pending = Buffer.from(data);
    });
    child.stderr!.on('data', (chunk: Buffer) => {
      if (stderr.length < MAX_STDERR) stderr += chunk.toString();
    });
    child.on('error', (error) => {
      clearTimeout(timer);
      signal.removeEventListener('abort', onAbort);
      reject(error);
    });
    child.on('close', (code) => {
      clearTimeout(timer);
      signal.removeEventListener('abort', onAbort);
      if (!stoppedEarly && pending.length > 0) onRecord(pending.toString('utf8'));
      resolve({ code, stderr, timedOut, stoppedEarly });
    });
  });
}

function denyGlobs(denyRead: readonly string[]): string[] {
  return denyRead.flatMap((glob) => ['--glob', `!${glob}`]);
}

function checkRgError(result: RunResult, signal: AbortSignal): void {
  if (signal.aborted) throw signal.reason instanceof Error ? signal.reason : new Error('cancelled');
  if (result.code === 2 && !result.timedOut && !result.stoppedEarly) {
    const message = result.stderr.trim();
    if (/error parsing glob/i.test(message)) throw new ToolError(`Invalid glob: ${message.split('\n')[0]}`, 'bad_glob');
    if (/regex parse error|error parsing|unclosed|unopened|repetition/i.test(message)) {
      throw new ToolError(`Invalid regular expression: ${message.split('\n').slice(0, 8).join('\n')}\n(Rust regex syntax: escape literal characters such as ( [ { with a backslash, or pass literal: true.)`, 'bad_pattern');
    }
    if (/unrecognized file type/i.test(message)) throw new ToolError(`${message.split('\n')[0]} (see \`rg --type-list\` names such as ts, py, rust, go, js, md)`, 'bad_type');
  }
}

/**
 * The files rg searches in a folder when no --glob of the caller is given: .gitignore honoured,
 * `.git/` and deny_read left out. A --glob that matches a folder overrides .gitignore in rg
 * (`src/**` would search an ignored `src/gen/`), so grep keeps only what this listing has too.
 */
async function unignoredFiles(rgPath: string, request: Pick<ListRequest, 'folder' | 'hidden' | 'denyRead' | 'timeoutMs' | 'signal'>): Promise<{ paths: Set<string>; timedOut: boolean }> {
  const args = ['--no-config', '--files', '--no-messages', '--no-require-git', '--null', '--glob', '!.git/', ...denyGlobs(request.denyRead)];
  if (request.hidden) args.push('--hidden');
  const paths = new Set<string>();
  const result = await runRg(rgPath, args, { folder: request.folder }, request.timeoutMs, request.signal, 0, (record) => {
    if (record.length > 0) paths.add(record.startsWith('./') ? record.slice(2) : record);
    return true;
  });
  checkRgError(result, request.signal);
  return { paths, timedOut: result.timedOut };
}

/**
 * The second pass: each candidate opened beneath the pinned folder without following any
 * symlink, and searched again by rg through its descriptor; only what this pass reads is
 * returned. Batches are taken in turn while the first pass is still naming files.
 */
class VerifyPass {
  private readonly beneath: Beneath;
  private readonly byPath = new Map<string, GrepFile>();
  private records = 0;
  private timedOut = false;
  private complete = true;
  private readonly deadline: number;
  private chain: Promise<void> = Promise.resolve();
  private failure: unknown;

  constructor(
    private readonly rgPath: string,
    private readonly how: readonly string[],
    private readonly request: GrepRequest,
  ) {
    this.beneath = new Beneath(request.folder);
    this.deadline = Date.now() + request.timeoutMs;
  }

  /** Queues names for a batch of their own (taken after the batches queued before). */
  add(names: readonly string[]): void {
    if (names.length === 0) return;
    const sorted = byFolder(names);
    this.chain = this.chain.then(async () => {
      if (this.failure !== undefined) return;
      try {
        for (let start = 0; start < sorted.length; start += VERIFY_BATCH) {
          if (this.timedOut || this.records >= this.request.maxRecords) return;
          await this.batch(sorted.slice(start, start + VERIFY_BATCH));
        }
      } catch (error) {
        this.failure = error;
      }
    });
  }

  async finish(): Promise<GrepOutcome> {
    try {
      await this.chain;
    } finally {
      this.beneath.close();
    }
    if (this.failure !== undefined) throw this.failure;
    if (this.records >= this.request.maxRecords) this.complete = false;
    return { files: [...this.byPath.values()], complete: this.complete && !this.timedOut, timedOut: this.timedOut };
  }

  private async batch(candidates: readonly string[]): Promise<void> {
    const { request } = this;
    const names: string[] = [];
    const fds: number[] = [];
    try {
      for (const name of candidates) {
        const opened = this.beneath.open(name);
        if (!opened) continue;
        if (opened.stat.nlink > 1 && (await request.denyInodes.denial(opened.stat)) !== undefined) {
          closeSync(opened.fd);
          continue;
        }
        names.push(name);
        fds.push(opened.fd);
      }
      if (fds.length === 0) return;
      const fileOf = (path: string): GrepFile | undefined => {
        const index = path.startsWith(CHILD_FD) ? Number(path.slice(CHILD_FD.length)) - 3 : Number.NaN;
        const name = Number.isInteger(index) ? names[index] : undefined;
        if (name === undefined) return undefined;
        let file = this.byPath.get(name);
        if (!file) {
          file = { path: name, lines: [], count: 0 };
          this.byPath.set(name, file);
        }
        return file;
      };
      const args = [...this.how, '--regexp', request.pattern, '--', ...fds.map((_, i) => `${CHILD_FD}${i + 3}`)];
      const separator = request.mode === 'files_with_matches' ? 0 : 0x0a;
      const left = Math.max(1, this.deadline - Date.now());
      const result = await runRg(this.rgPath, args, { fds }, left, request.signal, separator, (record) => {
        if (request.mode === 'files_with_matches') {
          const file = record.length > 0 ? fileOf(record) : undefined;
          if (file) file.count = 1;
          this.records++;
        } else if (request.mode === 'count') {
          const nul = record.indexOf('\0');
          const file = nul > 0 ? fileOf(record.slice(0, nul)) : undefined;
          if (file) file.count = Number(record.slice(nul + 1));
          this.records++;
        } else {
          if (record === '--') return true;
          const nul = record.indexOf('\0');
          if (nul <= 0) return true;
          const rest = record.slice(nul + 1);
          const match = /^(\d+)([:-])/.exec(rest);
          if (!match) return true;
          const file = fileOf(record.slice(0, nul));
          if (!file) return true;
          const isContext = match[2] === '-';
          file.lines.push({ line: Number(match[1]), text: rest.slice(match[0].length).replace(/\r$/, ''), context: isContext });
          if (!isContext) file.count++;
          this.records++;
        }
        return this.records < request.maxRecords;
      });
      checkRgError(result, request.signal);
      if (result.timedOut) this.timedOut = true;
      if (result.stoppedEarly) this.complete = false;
    } finally {
      for (const fd of fds) closeSync(fd);
    }
  }
}

export function ripgrepEngine(rgPath: string): SearchEngine {
  return {
    kind: 'ripgrep',
    async grep(request: GrepRequest): Promise<GrepOutcome> {
      // What is searched and how: the same in both passes.
      const how = ['--no-config', '--color=never', '--no-messages', '--no-require-git', '--null', `--max-columns=${request.maxLineChars}`, '--max-columns-preview'];
      if (request.mode === 'content') how.push('--line-number', '--with-filename', '--no-heading');
      if (request.mode === 'content' && request.context > 0) how.push('--context', String(request.context));
      if (request.mode === 'files_with_matches') how.push('--files-with-matches');
      if (request.mode === 'count') how.push('--count', '--with-filename');
      if (request.caseInsensitive) how.push('--ignore-case');
      if (request.multiline) how.push('--multiline', '--multiline-dotall');
      if (request.literal) how.push('--fixed-strings');
      const globs = request.glob ? request.glob.split(',').map((g) => g.trim()).filter(Boolean) : [];

      const verify = new VerifyPass(rgPath, how, request);
      let firstTimedOut = false;
      if (request.file) verify.add([request.file]);
      else {
        // First pass: which files match, walked from the pinned folder. rg opens what it walks
        // by path, so a subfolder or file swapped for a symlink meanwhile is followed: this
        // pass only names candidates, and nothing it read is returned.
        const args = ['--files-with-matches', ...how.filter((a) => a !== '--line-number' && a !== '--with-filename' && a !== '--no-heading' && a !== '--files-with-matches' && a !== '--count' && !a.startsWith('--context'))];
        if (request.hidden) args.push('--hidden');
        for (const glob of globs) args.push('--glob', glob);
        if (request.type) args.push('--type', request.type);
        args.push('--glob', '!.git/', ...denyGlobs(request.denyRead));
        args.push('--regexp', request.pattern, '--', '.');
        // With a caller's glob the names wait for the listing of unignored files; else each full
        // batch goes to the second pass at once.
        const needsUnignored = globs.some((glob) => !glob.startsWith('!'));
        const found: string[] = [];
        let named = 0;
        const search = runRg(rgPath, args, { folder: request.folder }, request.timeoutMs, request.signal, 0, (record) => {
          if (record.length > 0) found.push(record.startsWith('./') ? record.slice(2) : record);
          request.onProgress?.(named + found.length);
          if (!needsUnignored && found.length >= VERIFY_BATCH) {
            named += found.length;
            verify.add(found.splice(0));
          }
          return named + found.length < request.maxRecords;
        });
        let result: RunResult;
        let unignored: Awaited<ReturnType<typeof unignoredFiles>> | undefined;
        try {
          [result, unignored] = await Promise.all([search, needsUnignored ? unignoredFiles(rgPath, request) : undefined]);
          checkRgError(result, request.signal);
        } catch (error) {
          // The batches already queued still close what they opened.
          await verify.finish().catch(() => undefined);
          throw error;
        }
        verify.add(found.filter((path) => !unignored || unignored.paths.has(path)));
        firstTimedOut = result.timedOut || unignored?.timedOut === true;
      }
      const outcome = await verify.finish();
      const timedOut = firstTimedOut || outcome.timedOut;
      return { files: outcome.files, complete: !timedOut && outcome.complete, timedOut };
    },

    async list(request: ListRequest): Promise<ListOutcome> {
      const wantHidden = request.hidden || patternNamesHidden(request.pattern);
      const matches = picomatch(request.pattern.replace(/^\//, ''), { dot: wantHidden });
      const args = ['--no-config', '--files', '--no-messages', '--no-require-git', '--null', '--glob', '!.git/', ...denyGlobs(request.denyRead)];
      if (wantHidden) args.push('--hidden');
      if (!request.respectGitignore) args.push('--no-ignore');
      const paths: string[] = [];
      let walked = 0;
      const result = await runRg(rgPath, args, { folder: request.folder }, request.timeoutMs, request.signal, 0, (record) => {
        const clean = record.startsWith('./') ? record.slice(2) : record;
        if (clean.length > 0 && matches(clean)) paths.push(clean);
        request.onProgress?.(++walked, paths.length);
        return true;
      });
      checkRgError(result, request.signal);
      return { paths, timedOut: result.timedOut };
    },
  };
}
