import { closeSync, readFileSync, readSync } from 'node:fs';
import { parentPort, workerData } from 'node:worker_threads';
import { walkFiles } from './builtin-walk.js';
import { Beneath, byFolder } from './beneath.js';
import type { GrepFile } from './search-types.js';

export interface WorkerInput {
  /** The pinned folder's descriptor (shared with the worker: one process), its real path and its /proc path. */
  readonly folderFd: number;
  readonly folderReal: string;
  readonly folderVia: string;
  readonly file?: string;
  readonly pattern: string;
  readonly flags: string;
  readonly literal: boolean;
  readonly mode: 'content' | 'files_with_matches' | 'count';
  readonly multiline: boolean;
  readonly context: number;
  /** fast-glob patterns; those starting with "!" exclude. */
  readonly globs: string[];
  readonly hidden: boolean;
  readonly denyRead: readonly string[];
  readonly maxLineChars: number;
  readonly maxRecords: number;
}

const MAX_FILE_BYTES = 50 * 1024 * 1024;

function isBinary(fd: number): boolean {
  const head = Buffer.alloc(8192);
  const read = readSync(fd, head, 0, head.length, 0);
  return head.subarray(0, read).includes(0);
}

function escapeRegex(text: string): string {
  return text.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
}

function search(input: WorkerInput): { files: GrepFile[]; complete: boolean } {
  const regex = new RegExp(input.literal ? escapeRegex(input.pattern) : input.pattern, `${input.flags}${input.multiline ? 's' : ''}g`);
  const candidates = input.file ? [input.file] : walkFiles({ cwd: input.folderVia, pattern: input.globs, hidden: input.hidden, respectGitignore: true, denyRead: input.denyRead });
  const files: GrepFile[] = [];
  let records = 0;
  // The walk named the files by path; each is opened beneath the pinned folder, never following
  // a symlink, and only what that descriptor reads is searched.
  const beneath = new Beneath({ fd: input.folderFd, real: input.folderReal, via: input.folderVia, close: () => undefined });
  for (const relative of byFolder(candidates)) {
    const opened = beneath.open(relative);
    if (!opened) continue;
    let text: string;
    try {
      if (opened.stat.size > MAX_FILE_BYTES || isBinary(opened.fd)) continue;
      text = readFileSync(opened.fd, 'utf8');
    } catch {
      continue;
    } finally {
      closeSync(opened.fd);
    }
    const lines = text.split('\n');
    if (lines.at(-1) === '') lines.pop();
    const matched = new Set<number>();
    if (input.multiline) {
      const starts: number[] = [0];
      for (let i = 0; i < text.length; i++) if (text.charCodeAt(i) === 10) starts.push(i + 1);
      const lineAt = (offset: number) => {
        let lo = 0;
        let hi = starts.length - 1;
        while (lo < hi) {
          const mid = (lo + hi + 1) >> 1;
          if (starts[mid]! <= offset) lo = mid;
          else hi = mid - 1;
        }
        return lo;
      };
      for (const match of text.matchAll(regex)) {
        const first = lineAt(match.index);
        const last = lineAt(match.index + Math.max(0, match[0].length - 1));
        for (let line = first; line <= last; line++) matched.add(line);
        if (match[0].length === 0) break;
      }
    } else {
      lines.forEach((line, index) => {
        regex.lastIndex = 0;
        if (regex.test(line)) matched.add(index);
      });
    }
    if (matched.size === 0) continue;
    const { dev, ino, nlink } = opened.stat;
    const file: GrepFile = { path: relative, lines: [], count: matched.size, ...(nlink > 1 ? { inode: { dev, ino, nlink } } : {}) };
    if (input.mode === 'content') {
      const shown = new Set<number>();
      for (const index of [...matched].sort((a, b) => a - b)) {
        for (let i = Math.max(0, index - input.context); i <= Math.min(lines.length - 1, index + input.context); i++) shown.add(i);
      }
      for (const index of [...shown].sort((a, b) => a - b)) {
        const raw = (lines[index] ?? '').replace(/\r$/, '');
        file.lines.push({ line: index + 1, text: raw.length > input.maxLineChars ? `${raw.slice(0, input.maxLineChars)} [...]` : raw, context: !matched.has(index) });
        records++;
      }
    } else records++;
    files.push(file);
    if (records >= input.maxRecords) {
      beneath.close();
      return { files, complete: false };
    }
  }
  beneath.close();
  return { files, complete: true };
}

try {
  parentPort!.postMessage({ ok: true, ...search(workerData as WorkerInput) });
} catch (error) {
  parentPort!.postMessage({ ok: false, error: error instanceof Error ? error.message : String(error), syntax: error instanceof SyntaxError });
}
