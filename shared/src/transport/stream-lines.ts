import type { Writable } from 'node:stream';

/** Splits a byte stream into lines, holding the partial line as chunks so a long message is copied once. */
export class LineReader {
  private pending: Buffer[] = [];
  private pendingBytes = 0;

  /** `tooLong` is the error thrown when the line in progress grows past `maxLineBytes`. */
  constructor(
    private readonly maxLineBytes: number,
    private readonly tooLong: () => Error,
  ) {}

  /** The complete lines in `chunk`, without their line ending; throws when the line in progress grows past the limit. */
  push(chunk: Buffer): string[] {
    const lines: string[] = [];
    let start = 0;
    for (let newline = chunk.indexOf(10); newline !== -1; newline = chunk.indexOf(10, start)) {
      const piece = chunk.subarray(start, newline);
      const line = this.pending.length === 0 ? piece : Buffer.concat([...this.pending, piece]);
      this.clear();
      lines.push(line.toString('utf8').replace(/\r$/, ''));
      start = newline + 1;
    }
    if (start < chunk.length) {
      this.pending.push(chunk.subarray(start));
      this.pendingBytes += chunk.length - start;
      if (this.pendingBytes > this.maxLineBytes) {
        this.clear();
        throw this.tooLong();
      }
    }
    return lines;
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
