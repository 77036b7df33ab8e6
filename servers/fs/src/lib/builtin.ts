import { Worker } from 'node:worker_threads';
import { ToolError } from '@bulkhead/core';
import type { GrepFile, GrepOutcome, GrepRequest, ListOutcome, ListRequest, SearchEngine } from './search-types.js';
import type { WorkerInput } from './builtin-worker.js';
import { walkFiles } from './builtin-walk.js';
import { patternNamesHidden } from './hidden.js';

type WorkerReply = { ok: true; files: GrepFile[]; complete: boolean } | { ok: false; error: string; syntax: boolean };

/**
 * Runs the search in a worker thread so that a regular expression that backtracks forever is
 * stopped by terminating the worker at the timeout, and the server keeps serving meanwhile.
 */
function runWorker(input: WorkerInput, timeoutMs: number, signal: AbortSignal): Promise<{ reply?: WorkerReply; timedOut: boolean }> {
  return new Promise((resolve, reject) => {
    const worker = new Worker(new URL('./builtin-worker.js', import.meta.url), { workerData: input });
    let settled = false;
    const finish = (value: { reply?: WorkerReply; timedOut: boolean }) => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      signal.removeEventListener('abort', onAbort);
      void worker.terminate();
      resolve(value);
    };
    const timer = setTimeout(() => finish({ timedOut: true }), timeoutMs);
    const onAbort = () => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      void worker.terminate();
      reject(signal.reason instanceof Error ? signal.reason : new Error('cancelled'));
    };
    signal.addEventListener('abort', onAbort, { once: true });
    worker.once('message', (reply: WorkerReply) => finish({ reply, timedOut: false }));
    worker.once('error', (error) => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      signal.removeEventListener('abort', onAbort);
      reject(error);
    });
  });
}

/**
 * The grep `glob` argument as fast-glob patterns, read the way ripgrep reads it: comma-separated,
 * a glob without "/" matches at any depth, and a leading "!" excludes.
 */
function workerGlobs(glob: string | undefined): string[] {
  const parts = (glob ?? '').split(',').map((g) => g.trim()).filter(Boolean);
  const patterns = parts.map((part) => {
    const negated = part.startsWith('!');
    const body = negated ? part.slice(1) : part;
    return `${negated ? '!' : ''}${body.includes('/') ? body.replace(/^\//, '') : `**/${body}`}`;
  });
  return patterns.some((p) => !p.startsWith('!')) ? patterns : ['**/*', ...patterns];
}

export function builtinEngine(): SearchEngine {
  return {
    kind: 'builtin',
    async grep(request: GrepRequest): Promise<GrepOutcome> {
      const input: WorkerInput = {
        folderFd: request.folder.fd,
        folderReal: request.folder.real,
        folderVia: request.folder.via,
        ...(request.file ? { file: request.file } : {}),
        pattern: request.pattern,
        flags: request.caseInsensitive ? 'i' : '',
        literal: request.literal,
        mode: request.mode,
        multiline: request.multiline,
        context: request.context,
        globs: workerGlobs(request.glob),
        hidden: request.hidden,
        denyRead: request.denyRead,
        maxLineChars: request.maxLineChars,
        maxRecords: request.maxRecords,
      };
      if (request.type) throw new ToolError('type filters need ripgrep, which is not available here; use glob (for example "*.ts") instead', 'bad_type');
      const { reply, timedOut } = await runWorker(input, request.timeoutMs, request.signal);
      if (timedOut || !reply) return { files: [], complete: false, timedOut: true };
      if (!reply.ok) {
        if (reply.syntax) throw new ToolError(`Invalid regular expression: ${reply.error.replace(/^Invalid regular expression: /, '')}`, 'bad_pattern');
        throw new Error(reply.error);
      }
      const files: GrepFile[] = [];
      for (const file of reply.files) {
        if (file.inode && (await request.denyInodes.denial(file.inode)) !== undefined) continue;
        files.push(file);
      }
      return { files, complete: reply.complete, timedOut: false };
    },
    async list(request: ListRequest): Promise<ListOutcome> {
      const paths = walkFiles({
        cwd: request.folder.via,
        pattern: request.pattern.replace(/^\//, ''),
        hidden: request.hidden || patternNamesHidden(request.pattern),
        respectGitignore: request.respectGitignore,
        denyRead: request.denyRead,
      });
      return { paths, timedOut: false };
    },
  };
}
