import { NEWLINE, type NumberedLine } from '@bulkhead/core';
import { cutText } from './commits.js';

/** git's own test for binary content (buffer_is_binary): a NUL in the first 8000 bytes. */
const BINARY_SNIFF_BYTES = 8000;
/** Longer than any header line: a missing object's line repeats its name (up to a 4 KiB path). */
const MAX_HEADER_BYTES = 8192;

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
 * Reads the answer of `git cat-file --batch-command` to `info <commit>` and `contents
 * <commit>:<path>` as it streams: the commit line, the object's header, then `size` bytes of
 * content. Lines outside the window are only counted (a newline search, no string is made); the
 * window's lines are kept, or for a negative offset the last lines seen. The stream is stopped as
 * soon as nothing more is needed.
 */
export class BlobReader {
  /** The commit the info line named: an id, 'missing', or undefined before it arrived. */
  commit: string | undefined;
  header: BlobHeader | undefined;
  private headerParts: Buffer[] = [];
  private contentLeft = 0;
  private sniffed = 0;
  /** Lines completed so far. */
  private lineNumber = 0;
  /** The start of a wanted line that continues in the next chunk. */
  private partial: Buffer[] = [];
  private partialBytes = 0;
  private partialDropped = 0;
  private readonly kept: NumberedLine[] = [];
  private keptBytes = 0;
  private cutByBytes = false;
  private binary = false;
  /** The window is complete and the total is not wanted: the rest is not read. */
  private done = false;
  /** The content read so far does not end with a newline. */
  private unterminated = false;

  constructor(private readonly options: BlobWindowOptions) {}

  push(chunk: Buffer): 'stop' | undefined {
    let rest = chunk;
    while (this.header === undefined) {
      const end = rest.indexOf(NEWLINE);
      this.headerParts.push(end === -1 ? rest : rest.subarray(0, end));
      if (end === -1) return this.headerParts.reduce((sum, part) => sum + part.length, 0) > MAX_HEADER_BYTES ? 'stop' : undefined;
      const line = Buffer.concat(this.headerParts).toString('latin1');
      this.headerParts = [];
      rest = rest.subarray(end + 1);
      const match = /^([0-9a-f]+) (\S+) (\d+)$/.exec(line);
      if (this.commit === undefined) {
        this.commit = match?.[2] === 'commit' ? match[1]! : 'missing';
        if (this.commit === 'missing') return 'stop';
        continue;
      }
      this.header = match ? { kind: 'object', type: match[2]!, size: Number(match[3]) } : { kind: 'missing' };
      if (!match || match[2] !== 'blob') return 'stop';
      this.contentLeft = Number(match[3]);
    }
    const content = rest.subarray(0, this.contentLeft);
    this.contentLeft -= content.length;
    this.sniff(content);
    if (content.length > 0) this.unterminated = content[content.length - 1] !== NEWLINE;
    if (!this.binary) this.scan(content);
    if (this.contentLeft === 0 && this.unterminated && !this.binary && !this.done) {
      // A last line with no newline after it.
      if (this.wantsNext()) this.completeLine(Buffer.alloc(0));
      else this.lineNumber++;
    }
    return this.binary || this.done || this.contentLeft === 0 ? 'stop' : undefined;
  }

  /** The window; its last line counts when the content does not end with a newline. */
  window(): BlobWindow {
    const ended = this.contentLeft === 0 && !this.done;
    return { lines: this.kept, total: ended ? this.lineNumber : undefined, cutByBytes: this.cutByBytes, binary: this.binary };
  }

  private sniff(content: Buffer): void {
    if (this.sniffed >= BINARY_SNIFF_BYTES) return;
    const head = content.subarray(0, BINARY_SNIFF_BYTES - this.sniffed);
    this.sniffed += head.length;
    if (head.includes(0)) this.binary = true;
  }

  /** Whether the line after the completed ones goes into the window. */
  private wantsNext(): boolean {
    const { offset, limit } = this.options;
    if (offset < 0) return true;
    return this.lineNumber + 1 >= offset && this.kept.length < limit && !this.cutByBytes;
  }

  private scan(content: Buffer): void {
    let from = 0;
    while (from < content.length && !this.done) {
      const newline = content.indexOf(NEWLINE, from);
      const end = newline === -1 ? content.length : newline;
      if (this.wantsNext()) {
        if (newline === -1) {
          this.holdPartial(content.subarray(from, end));
          return;
        }
        this.completeLine(content.subarray(from, end));
      } else {
        if (newline === -1) return;
        this.lineNumber++;
        if (this.windowFilled()) this.stopUnlessCounting();
      }
      from = end + 1;
    }
  }

  private holdPartial(bytes: Buffer): void {
    const room = Math.max(0, this.options.lineMaxChars * 4 - this.partialBytes);
    const taken = bytes.subarray(0, room);
    if (taken.length > 0) this.partial.push(Buffer.from(taken));
    this.partialBytes += taken.length;
    this.partialDropped += bytes.length - taken.length;
  }

  private completeLine(last: Buffer): void {
    this.holdPartial(last);
    const bytes = Buffer.concat(this.partial, this.partialBytes);
    const dropped = this.partialDropped;
    this.partial = [];
    this.partialBytes = 0;
    this.partialDropped = 0;
    const number = ++this.lineNumber;
    if (this.options.offset < 0) {
      this.keep(number, bytes, dropped);
      while (this.kept.length > Math.min(-this.options.offset, this.options.limit)) this.dropOldest();
      while (this.keptBytes > this.options.maxBytes && this.kept.length > 1) {
        this.dropOldest();
        this.cutByBytes = true;
      }
      return;
    }
    if (this.kept.length > 0 && this.keptBytes + bytes.length + dropped + 1 > this.options.maxBytes) {
      this.cutByBytes = true;
      this.stopUnlessCounting();
      return;
    }
    this.keep(number, bytes, dropped);
    if (this.windowFilled()) this.stopUnlessCounting();
  }

  private windowFilled(): boolean {
    return this.options.offset > 0 && (this.kept.length >= this.options.limit || this.cutByBytes);
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

  /** The window is complete: read on only to count the lines of a file small enough. */
  private stopUnlessCounting(): void {
    if (this.header?.kind === 'object' && this.header.size <= this.options.countTotalMaxBytes) return;
    this.done = true;
  }
}
