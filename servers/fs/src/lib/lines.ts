import type { FileHandle } from 'node:fs/promises';
import type { Stats } from 'node:fs';

const CHUNK = 1024 * 1024;
const PROGRESS_BYTES = 64 * 1024 * 1024;
const NEWLINE = 0x0a;
/** Lines between two remembered byte offsets in a file's sparse line index. */
export const CHECKPOINT_LINES = 1024;
const INDEX_CACHE_FILES = 64;
/** A tail read gives up looking for line starts after this many bytes. */
const TAIL_SCAN_LIMIT = 64 * 1024 * 1024;
const TAIL_FIRST_CHUNK = 64 * 1024;

interface LineIndex {
  /** offsets[k] is the byte offset where line k * CHECKPOINT_LINES + 1 starts. */
  readonly offsets: number[];
  total?: number;
}

/**
 * Sparse line indexes of recently read files, keyed by identity and version, so a second read
 * deep inside a large file starts near its window instead of at byte 0.
 */
const indexCache = new Map<string, LineIndex>();

function indexFor(stat: Stats): LineIndex {
  const key = `${stat.dev}:${stat.ino}:${stat.size}:${stat.mtimeMs}`;
  let index = indexCache.get(key);
  if (index) {
    indexCache.delete(key);
  } else {
    index = { offsets: [0] };
    if (indexCache.size >= INDEX_CACHE_FILES) indexCache.delete(indexCache.keys().next().value!);
  }
  indexCache.set(key, index);
  return index;
}

export interface WindowOptions {
  /** 1-based first line. */
  readonly offset: number;
  readonly limit: number;
  readonly maxBytes: number;
  readonly maxLineChars: number;
  /** Keep counting after the window to report the total (small files only). */
  readonly countTotal: boolean;
  readonly signal: AbortSignal;
  /** Told how far a long scan has come, every PROGRESS_BYTES. */
  readonly onProgress?: (scannedBytes: number, totalBytes: number) => void;
}

export interface NumberedLine {
  readonly number: number;
  readonly text: string;
}

export interface Window {
  readonly lines: NumberedLine[];
  /** Known when the scan reached the end of the file. */
  readonly total: number | undefined;
  /** The window stopped early because of the byte cap. */
  readonly cutByBytes: boolean;
  /** Line numbers are counted from the end (-1 is the last line) because the total is unknown. */
  readonly fromEnd: boolean;
}

/** Collects one line's bytes, keeping only what can be shown. */
class LineBuilder {
  private parts: Buffer[] = [];
  private kept = 0;
  private dropped = 0;
  constructor(private readonly maxBytes: number) {}
  add(bytes: Buffer): void {
    const room = this.maxBytes - this.kept;
    if (room > 0) {
      const part = bytes.length <= room ? bytes : bytes.subarray(0, room);
      this.parts.push(Buffer.from(part));
      this.kept += part.length;
    }
    this.dropped += Math.max(0, bytes.length - Math.max(room, 0));
  }
  finish(maxChars: number): { text: string; bytes: number } {
    let text = Buffer.concat(this.parts).toString('utf8');
    if (text.endsWith('\r')) text = text.slice(0, -1);
    const bytes = this.kept + this.dropped;
    if (text.length > maxChars || this.dropped > 0) {
      const cut = text.slice(0, maxChars);
      const more = text.length - cut.length + this.dropped;
      text = `${cut}… [line truncated: ${more} more ${this.dropped > 0 ? 'bytes' : 'characters'}]`;
    }
    this.parts = [];
    this.kept = 0;
    this.dropped = 0;
    return { text, bytes };
  }
}

function throwIfAborted(signal: AbortSignal): void {
  if (signal.aborted) throw signal.reason instanceof Error ? signal.reason : new Error('cancelled');
}

/**
 * Reads lines `offset .. offset+limit-1`. Time and memory grow with the bytes scanned up to the
 * window (or from the nearest remembered checkpoint), never with the whole file.
 */
export async function readWindow(handle: FileHandle, stat: Stats, options: WindowOptions): Promise<Window> {
  const index = indexFor(stat);
  const countTotal = options.countTotal && index.total === undefined;
  const checkpoint = Math.min(Math.floor((options.offset - 1) / CHECKPOINT_LINES), index.offsets.length - 1);
  let position = index.offsets[checkpoint]!;
  let lineNo = checkpoint * CHECKPOINT_LINES + 1;
  let lineStart = position;
  const lines: NumberedLine[] = [];
  const builder = new LineBuilder(options.maxLineChars * 4);
  let collecting = options.offset === lineNo;
  let done = false;
  let usedBytes = 0;
  let cutByBytes = false;
  const buffer = Buffer.allocUnsafe(Math.max(1, Math.min(CHUNK, stat.size - position)));
  const size = stat.size;

  let nextProgress = position + PROGRESS_BYTES;
  while (position < size) {
    throwIfAborted(options.signal);
    if (position >= nextProgress) {
      options.onProgress?.(position, size);
      nextProgress = position + PROGRESS_BYTES;
    }
    const { bytesRead } = await handle.read(buffer, 0, Math.min(CHUNK, size - position), position);
    if (bytesRead === 0) break;
    const chunk = buffer.subarray(0, bytesRead);
    let from = 0;
    while (from < bytesRead) {
      const nl = chunk.indexOf(NEWLINE, from);
      const end = nl === -1 ? bytesRead : nl;
      if (collecting && !done) builder.add(chunk.subarray(from, end));
      if (nl === -1) break;
      if (collecting && !done) {
        const line = builder.finish(options.maxLineChars);
        if (lines.length > 0 && usedBytes + line.bytes > options.maxBytes) {
          done = true;
          cutByBytes = true;
        } else {
          lines.push({ number: lineNo, text: line.text });
          usedBytes += line.bytes + 1;
          if (lines.length >= options.limit) done = true;
        }
      }
      lineNo++;
      lineStart = position + nl + 1;
      if ((lineNo - 1) % CHECKPOINT_LINES === 0 && (lineNo - 1) / CHECKPOINT_LINES === index.offsets.length) index.offsets.push(lineStart);
      if (!collecting && lineNo === options.offset) collecting = true;
      from = nl + 1;
      if (done && !countTotal) break;
    }
    position += bytesRead;
    if (done && !countTotal) return { lines, total: index.total, cutByBytes, fromEnd: false };
  }
  const hasPartialLast = lineStart < size;
  if (collecting && !done && hasPartialLast) {
    const line = builder.finish(options.maxLineChars);
    if (lines.length > 0 && usedBytes + line.bytes > options.maxBytes) cutByBytes = true;
    else lines.push({ number: lineNo, text: line.text });
  }
  const total = hasPartialLast ? lineNo : lineNo - 1;
  index.total = total;
  return { lines, total, cutByBytes, fromEnd: false };
}

/**
 * Reads backwards from the end in growing chunks until `count` line starts are found, and decodes
 * only those bytes. A line longer than TAIL_SCAN_LIMIT is dropped rather than shown in part.
 */
async function lastLines(handle: FileHandle, size: number, count: number, signal: AbortSignal): Promise<string[]> {
  if (size === 0) return [];
  const chunks: Buffer[] = [];
  let end = size;
  let position = size;
  let found = 0;
  let start: number | undefined;
  let chunkSize = TAIL_FIRST_CHUNK;
  while (position > 0 && end - position < TAIL_SCAN_LIMIT && start === undefined) {
    throwIfAborted(signal);
    const length = Math.min(chunkSize, position);
    position -= length;
    let chunk = Buffer.allocUnsafe(length);
    await handle.read(chunk, 0, length, position);
    if (position + length === size && chunk[length - 1] === NEWLINE) {
      chunk = chunk.subarray(0, length - 1);
      end = size - 1;
    }
    let at = chunk.length;
    while (at > 0) {
      const nl = chunk.lastIndexOf(NEWLINE, at - 1);
      if (nl === -1) break;
      if (++found === count) {
        start = position + nl + 1;
        chunks.unshift(chunk.subarray(nl + 1));
        break;
      }
      at = nl;
    }
    if (start === undefined) chunks.unshift(chunk);
    chunkSize = Math.min(chunkSize * 2, CHUNK * 4);
  }
  const lines = Buffer.concat(chunks).toString('utf8').split('\n');
  const partialFirst = start === undefined && position > 0;
  return partialFirst ? lines.slice(1) : lines;
}

/**
 * The last `count` lines, read backwards from the end: cost grows with the size of those lines,
 * not with the size of the file. Numbers are absolute when the total is known: already, or
 * because `countTotal` lets a small file be counted first.
 */
export async function readTail(handle: FileHandle, stat: Stats, count: number, options: Omit<WindowOptions, 'offset'>): Promise<Window> {
  if (options.countTotal && indexFor(stat).total === undefined) {
    // A window that starts past any line collects nothing and scans to the end, filling the index.
    await readWindow(handle, stat, { ...options, offset: Number.MAX_SAFE_INTEGER, limit: 1 });
  }
  const all = await lastLines(handle, stat.size, count, options.signal);
  const total = indexFor(stat).total;
  const first = total !== undefined ? total - all.length + 1 : -all.length;
  const lines: NumberedLine[] = [];
  let used = 0;
  let cutByBytes = false;
  for (const [i, raw] of all.entries()) {
    if (lines.length >= options.limit) break;
    const builder = new LineBuilder(options.maxLineChars * 4);
    builder.add(Buffer.from(raw, 'utf8'));
    const line = builder.finish(options.maxLineChars);
    if (lines.length > 0 && used + line.bytes > options.maxBytes) {
      cutByBytes = true;
      break;
    }
    used += line.bytes + 1;
    lines.push({ number: first + i, text: line.text });
  }
  return { lines, total, cutByBytes, fromEnd: total === undefined };
}
