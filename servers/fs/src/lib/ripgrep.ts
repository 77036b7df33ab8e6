import { spawn } from 'node:child_process';
import picomatch from 'picomatch';
import { ToolError } from '@bulkhead/core';
import type { GrepFile, GrepOutcome, GrepRequest, ListOutcome, ListRequest, SearchEngine } from './search-types.js';
import { patternNamesHidden } from './hidden.js';

const MAX_STDERR = 8192;

interface RunResult {
  readonly code: number | null;
  readonly stderr: string;
  readonly timedOut: boolean;
  readonly stoppedEarly: boolean;
}

/**
 * Runs rg without a shell, feeding each NUL/newline-delimited record to `onRecord`; returning
 * false from it stops rg. The process is killed on timeout and on cancellation.
 */
function runRg(rgPath: string, args: string[], cwd: string, timeoutMs: number, signal: AbortSignal, separator: number, onRecord: (record: string) => boolean): Promise<RunResult> {
  return new Promise((resolve, reject) => {
    const child = spawn(rgPath, args, { cwd, stdio: ['ignore', 'pipe', 'pipe'], env: { PATH: process.env['PATH'] ?? '' } });
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
    child.stdout.on('data', (chunk: Buffer) => {
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
    child.stderr.on('data', (chunk: Buffer) => {
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
async function unignoredFiles(rgPath: string, request: Pick<ListRequest, 'cwd' | 'hidden' | 'denyRead' | 'timeoutMs' | 'signal'>): Promise<{ paths: Set<string>; timedOut: boolean }> {
  const args = ['--no-config', '--files', '--no-messages', '--no-require-git', '--null', '--glob', '!.git/', ...denyGlobs(request.denyRead)];
  if (request.hidden) args.push('--hidden');
  const paths = new Set<string>();
  const result = await runRg(rgPath, args, request.cwd, request.timeoutMs, request.signal, 0, (record) => {
    if (record.length > 0) paths.add(record.startsWith('./') ? record.slice(2) : record);
    return true;
  });
  checkRgError(result, request.signal);
  return { paths, timedOut: result.timedOut };
}

export function ripgrepEngine(rgPath: string): SearchEngine {
  return {
    kind: 'ripgrep',
    async grep(request: GrepRequest): Promise<GrepOutcome> {
      const args = ['--no-config', '--color=never', '--no-messages', '--no-require-git', '--null', `--max-columns=${request.maxLineChars}`, '--max-columns-preview'];
      if (request.mode === 'content') args.push('--line-number', '--with-filename', '--no-heading');
      if (request.mode === 'content' && request.context > 0) args.push('--context', String(request.context));
      if (request.mode === 'files_with_matches') args.push('--files-with-matches');
      if (request.mode === 'count') args.push('--count', '--with-filename');
      if (request.caseInsensitive) args.push('--ignore-case');
      if (request.multiline) args.push('--multiline', '--multiline-dotall');
      if (request.literal) args.push('--fixed-strings');
      if (request.hidden) args.push('--hidden');
      const globs = request.glob ? request.glob.split(',').map((g) => g.trim()).filter(Boolean) : [];
      for (const glob of globs) args.push('--glob', glob);
      if (request.type) args.push('--type', request.type);
      args.push('--glob', '!.git/', ...denyGlobs(request.denyRead));
      args.push('--regexp', request.pattern, '--', request.file ?? '.');

      const byPath = new Map<string, GrepFile>();
      let records = 0;
      const fileOf = (path: string) => {
        const clean = path.startsWith('./') ? path.slice(2) : path;
        let file = byPath.get(clean);
        if (!file) {
          file = { path: clean, lines: [], count: 0 };
          byPath.set(clean, file);
        }
        return file;
      };
      const separator = request.mode === 'files_with_matches' ? 0 : 0x0a;
      const search = runRg(rgPath, args, request.cwd, request.timeoutMs, request.signal, separator, (record) => {
        if (request.mode === 'files_with_matches') {
          if (record.length > 0) fileOf(record).count = 1;
          records++;
        } else if (request.mode === 'count') {
          const nul = record.indexOf('\0');
          if (nul > 0) fileOf(record.slice(0, nul)).count = Number(record.slice(nul + 1));
          records++;
        } else {
          if (record === '--') return true;
          const nul = record.indexOf('\0');
          if (nul <= 0) return true;
          const path = record.slice(0, nul);
          const rest = record.slice(nul + 1);
          const match = /^(\d+)([:-])/.exec(rest);
          if (!match) return true;
          const file = fileOf(path);
          const isContext = match[2] === '-';
          file.lines.push({ line: Number(match[1]), text: rest.slice(match[0].length).replace(/\r$/, ''), context: isContext });
          if (!isContext) file.count++;
          records++;
        }
        return records < request.maxRecords;
      });
      const needsUnignored = !request.file && globs.some((glob) => !glob.startsWith('!'));
      const [result, unignored] = await Promise.all([search, needsUnignored ? unignoredFiles(rgPath, request) : undefined]);
      checkRgError(result, request.signal);
      const files = [...byPath.values()].filter((file) => !unignored || unignored.paths.has(file.path));
      const timedOut = result.timedOut || unignored?.timedOut === true;
      return { files, complete: !timedOut && !result.stoppedEarly, timedOut };
    },

    async list(request: ListRequest): Promise<ListOutcome> {
      const wantHidden = request.hidden || patternNamesHidden(request.pattern);
      const matches = picomatch(request.pattern.replace(/^\//, ''), { dot: wantHidden });
      const args = ['--no-config', '--files', '--no-messages', '--no-require-git', '--null', '--glob', '!.git/', ...denyGlobs(request.denyRead)];
      if (wantHidden) args.push('--hidden');
      if (!request.respectGitignore) args.push('--no-ignore');
      const paths: string[] = [];
      const result = await runRg(rgPath, args, request.cwd, request.timeoutMs, request.signal, 0, (record) => {
        const clean = record.startsWith('./') ? record.slice(2) : record;
        if (clean.length > 0 && matches(clean)) paths.push(clean);
        return true;
      });
      checkRgError(result, request.signal);
      return { paths, timedOut: result.timedOut };
    },
  };
}
