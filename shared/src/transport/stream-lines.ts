import { isUtf8 } from 'node:buffer';
import type { Writable } from 'node:stream';
import { TopLevelIdScanner, type ScannedId } from './json-rpc-id.js';

/** What a reader does with a line past its limit: fail the stream, or drop that line and go on. */
export type OversizedLine =
  | { readonly action: 'throw'; readonly error: () => Error }
  /** `id` is the top-level JSON-RPC id of the dropped line, wherever it stood in it. */
  | { readonly action: 'skip'; readonly skipped: (bytes: number, id: ScannedId) => void };

/** Splits a byte stream into lines, holding the partial line as chunks so a long message is copied once. */
export class LineReader {
  private pending: Buffer[] = [];
  private pendingBytes = 0;
  /** Bytes of an over-long line dropped so far, while waiting for its end. */
  private skipping: number | undefined;
  /** Reads the dropped line's id as it goes by, so nothing of it is kept. */
  private idScanner: TopLevelIdScanner | undefined;

  constructor(
    private readonly maxLineBytes: number,
    private readonly oversized: OversizedLine,
    /**
     * Given, a line that is not valid UTF-8 goes here instead of into the lines, decoded with
     * replacement characters (which would silently change a path or a name); without it, it is
     * decoded as it is.
     */
    private readonly notUtf8?: (bytes: number) => void,
  ) {}

  /** The complete lines in `chunk`, without their line ending. */
  push(chunk: Buffer): string[] {
    const lines: string[] = [];
    let start = 0;
    for (let newline = chunk.indexOf(10); newline !== -1; newline = chunk.indexOf(10, start)) {
      const piece = chunk.subarray(start, newline);
      start = newline + 1;
      if (this.skipping !== undefined) {
        this.finishSkipping(piece);
        continue;
      }
      const line = this.pending.length === 0 ? piece : Buffer.concat([...this.pending, piece]);
      this.clear();
      if (line.length > this.maxLineBytes) {
        this.startSkipping([line], line.length);
        this.finishSkipping(Buffer.alloc(0));
        continue;
      }
      if (this.notUtf8 !== undefined && !isUtf8(line)) {
        this.notUtf8(line.length);
        continue;
      }
      lines.push(line.toString('utf8').replace(/\r$/, ''));
    }
    if (start < chunk.length) this.hold(chunk.subarray(start));
    return lines;
  }

  private hold(rest: Buffer): void {
    if (this.skipping !== undefined) {
      this.skipping += rest.length;
      this.idScanner?.push(rest);
      return;
    }
    this.pending.push(rest);
    this.pendingBytes += rest.length;
    if (this.pendingBytes <= this.maxLineBytes) return;
    if (this.oversized.action === 'throw') {
      this.clear();
      throw this.oversized.error();
    }
    this.startSkipping(this.pending, this.pendingBytes);
    this.clear();
  }

  private startSkipping(pieces: readonly Buffer[], bytes: number): void {
    this.skipping = bytes;
    if (this.oversized.action !== 'skip') return;
    const scanner = new TopLevelIdScanner();
    for (const piece of pieces) scanner.push(piece);
    this.idScanner = scanner;
  }

  private finishSkipping(lastPiece: Buffer): void {
    const bytes = (this.skipping ?? 0) + lastPiece.length;
    this.idScanner?.push(lastPiece);
    const id = this.idScanner?.result() ?? { kind: 'none' };
    this.skipping = undefined;
    this.idScanner = undefined;
    if (this.oversized.action === 'throw') throw this.oversized.error();
    this.oversized.skipped(bytes, id);
  }

  clear(): void {
    this.pending = [];
    this.pendingBytes = 0;
  }
}

/**
 * Writes text to a stream, joining everything written in one tick into one write: the replies to
 * calls that finish together (a chunk of downstream replies, say) cost one system call and wake
 * the reader once, instead of once each. Order is kept; nothing waits longer than the current tick.
 */
export class BatchedWriter {
  private pending = '';
  private written: Promise<void> | undefined;
  private release: (() => void) | undefined;

  constructor(private readonly stream: Writable) {}

  /** Resolves once the batch holding `text` was taken by the stream, or after it drained. */
  write(text: string): Promise<void> {
    if (this.written === undefined) {
      this.written = new Promise((resolve) => {
        this.release = resolve;
      });
      process.nextTick(() => this.flush());
    }
    this.pending += text;
    return this.written;
  }

  private flush(): void {
    const text = this.pending;
    const release = this.release!;
    this.pending = '';
    this.written = undefined;
    this.release = undefined;
    if (this.stream.write(text)) release();
    else this.stream.once('drain', release);
  }
}
