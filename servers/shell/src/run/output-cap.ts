/**
 * Keeps a command's combined output within maxBytes, in bounded memory whatever the command prints:
 * either its end only (the usual case: errors and results come last), or, for read-only commands,
 * its start and its end (a listing's first lines matter as much as its last).
 */
export class OutputCap {
  private readonly headCapacity: number;
  private readonly tailCapacity: number;
  private readonly head: Buffer;
  private headLength = 0;
  private readonly tail: TailRing;
  /** Everything written when there is no cap. */
  private readonly uncapped: Buffer[] = [];
  private totalBytes = 0;

  /** maxBytes 0 keeps everything. */
  constructor(private readonly maxBytes: number, keepHead: boolean) {
    this.headCapacity = maxBytes > 0 && keepHead ? Math.floor(maxBytes / 2) : 0;
    this.tailCapacity = maxBytes - this.headCapacity;
    this.head = Buffer.alloc(this.headCapacity);
    this.tail = new TailRing(this.tailCapacity);
  }

  write(chunk: Buffer): void {
    this.totalBytes += chunk.length;
    if (this.maxBytes === 0) {
      this.uncapped.push(chunk);
      return;
    }
    const toHead = Math.min(this.headCapacity - this.headLength, chunk.length);
    if (toHead > 0) {
      chunk.copy(this.head, this.headLength, 0, toHead);
      this.headLength += toHead;
    }
    if (toHead < chunk.length) this.tail.write(chunk.subarray(toHead));
  }

  /** Bytes written in all, kept or not. */
  get writtenBytes(): number {
    return this.totalBytes;
  }

  /** Bytes left out of text(), including the partial characters cut at the edges. */
  get droppedBytes(): number {
    if (this.maxBytes === 0) return 0;
    const { head, tail } = this.keptParts();
    return this.totalBytes - head.length - tail.length;
  }

  /** The output kept, with a marker saying how much was left out and where. */
  text(): string {
    if (this.maxBytes === 0) return Buffer.concat(this.uncapped).toString('utf8');
    const { head, tail } = this.keptParts();
    const dropped = this.totalBytes - head.length - tail.length;
    if (dropped === 0) return head.toString('utf8') + tail.toString('utf8');
    if (this.headCapacity === 0) return `…(${dropped} bytes truncated from head)…\n${tail.toString('utf8')}`;
    return `${head.toString('utf8')}\n…(${dropped} bytes truncated from middle)…\n${tail.toString('utf8')}`;
  }

  private keptParts(): { head: Buffer; tail: Buffer } {
    const head = this.head.subarray(0, this.headLength);
    const tail = this.tail.contents();
    if (this.totalBytes === head.length + tail.length) return { head, tail };
    // Something was dropped between the two parts: cut each at a character boundary so neither shows half a character.
    return { head: head.subarray(0, completeCharactersEnd(head)), tail: tail.subarray(firstCharacterStart(tail)) };
  }
}

/** The last `capacity` bytes written, in a fixed buffer. */
class TailRing {
  private readonly buffer: Buffer;
  /** Where the next byte goes. */
  private writeAt = 0;
  private filled = 0;

  constructor(private readonly capacity: number) {
    this.buffer = Buffer.alloc(capacity);
  }

  write(chunk: Buffer): void {
    if (this.capacity === 0) return;
    const kept = chunk.length > this.capacity ? chunk.subarray(chunk.length - this.capacity) : chunk;
    const untilEnd = Math.min(kept.length, this.capacity - this.writeAt);
    kept.copy(this.buffer, this.writeAt, 0, untilEnd);
    kept.copy(this.buffer, 0, untilEnd);
    this.writeAt = (this.writeAt + kept.length) % this.capacity;
    this.filled = Math.min(this.capacity, this.filled + kept.length);
  }

  contents(): Buffer {
    if (this.filled < this.capacity) return this.buffer.subarray(0, this.filled);
    return Buffer.concat([this.buffer.subarray(this.writeAt), this.buffer.subarray(0, this.writeAt)]);
  }
}

const isContinuationByte = (byte: number): boolean => (byte & 0b1100_0000) === 0b1000_0000;

/** Skips the continuation bytes of a character whose start was cut off (at most 3 in UTF-8). */
function firstCharacterStart(bytes: Buffer): number {
  let start = 0;
  while (start < Math.min(3, bytes.length) && isContinuationByte(bytes[start] ?? 0)) start += 1;
  return start;
}

/** The end of the last complete character: a multi-byte character whose end was cut off is left out. */
function completeCharactersEnd(bytes: Buffer): number {
  let lead = bytes.length - 1;
  while (lead >= 0 && bytes.length - lead <= 3 && isContinuationByte(bytes[lead] ?? 0)) lead -= 1;
  if (lead < 0) return bytes.length;
  const leadByte = bytes[lead] ?? 0;
  const expectedLength = leadByte >= 0b1111_0000 ? 4 : leadByte >= 0b1110_0000 ? 3 : leadByte >= 0b1100_0000 ? 2 : 1;
  return bytes.length - lead >= expectedLength ? bytes.length : lead;
}
