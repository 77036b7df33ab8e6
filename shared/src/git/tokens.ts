export const NUL = 0x00;
export const NEWLINE = 0x0a;

/** What a token handler answers: `'stop'` when it has all it needs, so the producer can be ended. */
export type TokenVerdict = void | 'stop';

export interface TokenReaderOptions {
  /** The byte that ends a token; the handler may change `reader.delimiter` between tokens. */
  readonly delimiter: number;
  /** Bytes kept of one token; the rest is counted, never held, so one huge line costs no memory. */
  readonly maxTokenBytes: number;
  /** Gets each token without its delimiter, and how many of its bytes were dropped. */
  readonly onToken: (token: Buffer, droppedBytes: number) => TokenVerdict;
}

/**
 * Splits a byte stream into delimited tokens as it arrives, so git's output is parsed while it is
 * read and never held whole. NUL-separated (`-z`) fields and newline-separated patch lines can
 * follow each other in one stream: the handler switches `delimiter` where the format changes.
 */
export class TokenReader {
  delimiter: number;
  private parts: Buffer[] = [];
  private kept = 0;
  private dropped = 0;
  private stopped = false;

  constructor(private readonly options: TokenReaderOptions) {
    this.delimiter = options.delimiter;
  }

  /** Feeds a chunk; false once the handler has said stop (later chunks are ignored). */
  push(chunk: Buffer): boolean {
    let from = 0;
    while (!this.stopped && from < chunk.length) {
      const end = chunk.indexOf(this.delimiter, from);
      if (end === -1) {
        this.keep(chunk.subarray(from));
        break;
      }
      this.keep(chunk.subarray(from, end));
      from = end + 1;
      this.emit();
    }
    return !this.stopped;
  }

  /** Emits a last token that had no delimiter after it. */
  end(): void {
    if (!this.stopped && (this.kept > 0 || this.dropped > 0)) this.emit();
  }

  private keep(bytes: Buffer): void {
    const room = this.options.maxTokenBytes - this.kept;
    const taken = Math.max(0, Math.min(room, bytes.length));
    if (taken > 0) {
      this.parts.push(bytes.subarray(0, taken));
      this.kept += taken;
    }
    this.dropped += bytes.length - taken;
  }

  private emit(): void {
    const token = this.parts.length === 1 ? this.parts[0]! : Buffer.concat(this.parts, this.kept);
    const dropped = this.dropped;
    this.parts = [];
    this.kept = 0;
    this.dropped = 0;
    if (this.options.onToken(token, dropped) === 'stop') this.stopped = true;
  }
}
