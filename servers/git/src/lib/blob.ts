import { NEWLINE, TokenReader, type NumberedLine } from '@bulkhead/core';
import { cutText } from './commits.js';

/** git's own test for binary content (buffer_is_binary): a NUL in the first 8000 bytes. */
const BINARY_SNIFF_BYTES = 8000;
const MAX_HEADER_BYTES = 512;

export interface BlobWindowOptions {
  /** First line, counting from 1; negative counts from the end (-100: the last 100 lines). */
  readonly offset: number;
  readonly limit: number;
  readonly maxBytes: number;
  readonly lineMaxChars: number;
  /** Blobs up to this size are read to the end so the total line count is known. */
  readonly countTotalMaxBytes: number;
}

export type BlobHeader = { readonly kind: 'missing' } | { readonly kind: 'object'; readonly type: string; readonly size: number };

export interface BlobWindow {
  readonly lines: NumberedLine[];
  /** Known when the blob was read to its end. */
  readonly total: number | undefined;
  /** The window stopped early because of the byte cap. */
  readonly cutByBytes: boolean;
  readonly binary: boolean;
}

/**
 * Reads one object from `git cat-file --batch` as it streams: the header line, then `size` bytes
 * of content split into lines, keeping only the requested window (or, for a negative offset, the
 * last lines seen). Stops the stream as soon as nothing more is needed.
 */
export class BlobReader {
  header: BlobHeader | undefined;
  private headerBytes: Buffer[] = [];
  private contentLeft = 0;
  private sniffed = 0;
  private lineNumber = 0;
  private readonly kept: NumberedLine[] = [];
  private keptBytes = 0;
  private cutByBytes = false;
  private binary = false;
  private done = false;
  private readonly lines: TokenReader;

  constructor(private readonly options: BlobWindowOptions) {
    this.lines = new TokenReader({ delimiter: NEWLINE, maxTokenBytes: options.lineMaxChars * 4, onToken: (line, dropped) => this.line(line, dropped) });
  }

  push(chunk: Buffer): 'stop' | undefined {
    let rest = chunk;
    if (this.header === undefined) {
      const [header, after] = this.readHeader(chunk);
      if (header === undefined) return undefined;
      if (header.kind !== 'object' || header.type !== 'blob') return 'stop';
      rest = after;
    }
    const content = rest.subarray(0, this.contentLeft);
    this.contentLeft -= content.length;
    this.sniff(content);
    if (!this.binary && !this.done) this.lines.push(content);
    if (this.contentLeft === 0 && !this.done && !this.binary) this.lines.end();
    return this.binary || this.done || this.contentLeft === 0 ? 'stop' : undefined;
  }

  /** The window; its last line counts when the content does not end with a newline. */
  window(): BlobWindow {
    const ended = this.contentLeft === 0 && !this.done;
    return { lines: this.kept, total: ended ? this.lineNumber : undefined, cutByBytes: this.cutByBytes, binary: this.binary };
  }

  private readHeader(chunk: Buffer): [BlobHeader | undefined, Buffer] {
    const end = chunk.indexOf(NEWLINE);
    this.headerBytes.push(end === -1 ? chunk : chunk.subarray(0, end));
    if (end === -1) {
      if (this.headerBytes.reduce((sum, part) => sum + part.length, 0) > MAX_HEADER_BYTES) this.header = { kind: 'missing' };
      return [this.header, Buffer.alloc(0)];
    }
    const match = /^[0-9a-f]+ (\S+) (\d+)$/.exec(Buffer.concat(this.headerBytes).toString('latin1'));
    this.header = match ? { kind: 'object', type: match[1]!, size: Number(match[2]) } : { kind: 'missing' };
    this.contentLeft = match ? Number(match[2]) : 0;
    return [this.header, chunk.subarray(end + 1)];
  }

  private sniff(content: Buffer): void {
    if (this.sniffed >= BINARY_SNIFF_BYTES) return;
    const head = content.subarray(0, BINARY_SNIFF_BYTES - this.sniffed);
    this.sniffed += head.length;
    if (head.includes(0)) this.binary = true;
  }

  private line(bytes: Buffer, dropped: number): 'stop' | undefined {
    const number = ++this.lineNumber;
    const { offset, limit } = this.options;
    if (offset < 0) {
      // The last -offset lines seen so far, within the byte cap.
      this.keep(number, bytes, dropped);
      while (this.kept.length > Math.min(-offset, limit)) this.dropOldest();
      while (this.keptBytes > this.options.maxBytes && this.kept.length > 1) {
        this.dropOldest();
        this.cutByBytes = true;
      }
      return undefined;
    }
    if (number < offset) return undefined;
    if (this.kept.length >= limit || this.cutByBytes) return this.stopUnlessCounting();
    if (this.kept.length > 0 && this.keptBytes + bytes.length + 1 > this.options.maxBytes) {
      this.cutByBytes = true;
      return this.stopUnlessCounting();
    }
    this.keep(number, bytes, dropped);
    return undefined;
  }

  private keep(number: number, bytes: Buffer, dropped: number): void {
    const decoded = bytes.toString('utf8');
    const text = cutText(decoded.endsWith('\r') ? decoded.slice(0, -1) : decoded, this.options.lineMaxChars, dropped, 'line');
    this.kept.push({ number, text });
    this.keptBytes += Buffer.byteLength(text) + 1;
  }

  private dropOldest(): void {
    this.keptBytes -= Buffer.byteLength(this.kept.shift()!.text) + 1;
  }

  private stopUnlessCounting(): 'stop' | undefined {
    if (this.header?.kind === 'object' && this.header.size <= this.options.countTotalMaxBytes) return undefined;
    this.done = true;
    return 'stop';
  }
}
