/** What a scan of a JSON text found at the key `id` of its top-level object. */
export type ScannedId =
  /** No top-level `id` key (a notification, or not an object at all). */
  | { readonly kind: 'none' }
  /** A string or number, as its JSON text was sent (`-0` and `12345678901234567890` stay as they are). */
  | { readonly kind: 'echoable'; readonly raw: string }
  /** An `id` key whose value a reply cannot carry: null, a boolean, an object, an array, or a very long string. */
  | { readonly kind: 'unusable' };

const QUOTE = 0x22;
const BACKSLASH = 0x5c;
const OPEN_BRACE = 0x7b;
const CLOSE_BRACE = 0x7d;
const OPEN_BRACKET = 0x5b;
const CLOSE_BRACKET = 0x5d;
const COLON = 0x3a;
const COMMA = 0x2c;

/** `"id"` with every character escaped (`"\u0069\u0064"`) is 14 bytes; a longer key cannot be `id`. */
const MAX_KEY_BYTES = 32;
/** The longest id echoed; a longer string id is answered with `id: null`. */
export const MAX_ECHOED_ID_BYTES = 256;
/** Marks a byte that does not occur in the rest of the chunk. */
const NONE_LEFT = -2;
const JSON_NUMBER = /^-?(?:0|[1-9]\d*)(?:\.\d+)?(?:[eE][+-]?\d+)?$/;

function positionOrNone(position: number): number {
  return position === -1 ? NONE_LEFT : position;
}

function isWhitespace(byte: number): boolean {
  return byte === 0x20 || byte === 0x0a || byte === 0x0d || byte === 0x09;
}

type Expecting = 'key' | 'colon' | 'value' | 'token' | 'comma';

/**
 * Finds the top-level `id` of a JSON object fed in chunks, without parsing it: the id of a request
 * too large to be read (or too broken to be valid) so that its error can name it, wherever the key
 * stands. Memory is bounded (a key and an id are kept, at most a few hundred bytes); the work is
 * one pass, and string contents are skipped with indexOf. The last `id` key wins, as in JSON.parse.
 */
export class TopLevelIdScanner {
  private depth = 0;
  private started = false;
  private finished = false;
  private inString = false;
  private escaped = false;
  private expecting: Expecting = 'key';
  /** Whether the key just read at depth 1 is `id`. */
  private atId = false;
  private capture: 'key' | 'id' | undefined;
  private captured: Buffer[] = [];
  private capturedBytes = 0;
  private found: ScannedId = { kind: 'none' };

  push(bytes: Buffer): void {
    let nextQuote = -1;
    let nextBackslash = -1;
    let i = 0;
    while (i < bytes.length && !this.finished) {
      if (this.inString) {
        if (this.escaped) {
          this.keep(bytes, i, i + 1);
          this.escaped = false;
          i += 1;
          continue;
        }
        // Cached (NONE_LEFT once a search found nothing), so no stretch of the chunk is searched twice.
        if (nextQuote < i && nextQuote !== NONE_LEFT) nextQuote = positionOrNone(bytes.indexOf(QUOTE, i));
        if (nextBackslash < i && nextBackslash !== NONE_LEFT) nextBackslash = positionOrNone(bytes.indexOf(BACKSLASH, i));
        const stop = nextBackslash >= 0 && (nextQuote === NONE_LEFT || nextBackslash < nextQuote) ? nextBackslash : nextQuote;
        if (stop === NONE_LEFT) {
          this.keep(bytes, i, bytes.length);
          return;
        }
        this.keep(bytes, i, stop + 1);
        i = stop + 1;
        if (bytes[stop] === BACKSLASH) this.escaped = true;
        else this.closeString();
        continue;
      }
      const byte = bytes[i]!;
      i += 1;
      if (this.expecting === 'token' && this.depth === 1) {
        if (!isWhitespace(byte) && byte !== COMMA && byte !== CLOSE_BRACE) {
          this.keep(bytes, i - 1, i);
          continue;
        }
        this.closeToken();
      }
      if (isWhitespace(byte)) continue;
      if (!this.started) {
        this.started = true;
        if (byte !== OPEN_BRACE) {
          this.finished = true;
          return;
        }
        this.depth = 1;
        continue;
      }
      this.structural(byte, bytes, i - 1);
    }
  }

  /** What was found so far; once the text is complete, what it holds. */
  result(): ScannedId {
    if (this.expecting === 'token' && this.depth === 1) this.closeToken();
    return this.found;
  }

  private structural(byte: number, bytes: Buffer, at: number): void {
    const top = this.depth === 1;
    if (byte === QUOTE) {
      this.inString = true;
      if (top && this.expecting === 'key') this.startCapture('key');
      else if (top && this.expecting === 'value' && this.atId) this.startCapture('id');
      this.keep(bytes, at, at + 1);
      return;
    }
    if (byte === OPEN_BRACE || byte === OPEN_BRACKET) {
      if (top && this.expecting === 'value' && this.atId) this.found = { kind: 'unusable' };
      this.depth += 1;
      return;
    }
    if (byte === CLOSE_BRACE || byte === CLOSE_BRACKET) {
      this.depth -= 1;
      if (this.depth <= 0) this.finished = true;
      else if (this.depth === 1) this.expecting = 'comma';
      return;
    }
    if (!top) return;
    if (byte === COLON && this.expecting === 'colon') this.expecting = 'value';
    else if (byte === COMMA) this.expecting = 'key';
    else if (this.expecting === 'value') {
      this.expecting = 'token';
      if (this.atId) {
        this.startCapture('id');
        this.keep(bytes, at, at + 1);
      }
    }
  }

  private startCapture(what: 'key' | 'id'): void {
    this.capture = what;
    this.captured = [];
    this.capturedBytes = 0;
  }

  private keep(bytes: Buffer, from: number, to: number): void {
    if (this.capture === undefined) return;
    const limit = this.capture === 'key' ? MAX_KEY_BYTES : MAX_ECHOED_ID_BYTES;
    const room = limit + 1 - this.capturedBytes;
    if (room <= 0) return;
    const piece = bytes.subarray(from, Math.min(to, from + room));
    this.captured.push(Buffer.from(piece));
    this.capturedBytes += piece.length;
  }

  private takeCaptured(limit: number): string | undefined {
    const text = this.capturedBytes > limit ? undefined : Buffer.concat(this.captured).toString('utf8');
    this.capture = undefined;
    this.captured = [];
    this.capturedBytes = 0;
    return text;
  }

  private closeString(): void {
    this.inString = false;
    if (this.depth !== 1) return;
    if (this.capture === 'key') {
      const key = this.takeCaptured(MAX_KEY_BYTES);
      this.atId = key !== undefined && decodedString(key) === 'id';
      this.expecting = 'colon';
      return;
    }
    if (this.capture === 'id') {
      const raw = this.takeCaptured(MAX_ECHOED_ID_BYTES);
      this.found = raw !== undefined && decodedString(raw) !== undefined ? { kind: 'echoable', raw } : { kind: 'unusable' };
    }
    if (this.expecting === 'value') this.expecting = 'comma';
  }

  private closeToken(): void {
    this.expecting = 'comma';
    if (this.capture !== 'id') return;
    const raw = this.takeCaptured(MAX_ECHOED_ID_BYTES);
    this.found = raw !== undefined && JSON_NUMBER.test(raw) ? { kind: 'echoable', raw } : { kind: 'unusable' };
  }
}

function decodedString(raw: string): string | undefined {
  try {
    const value: unknown = JSON.parse(raw);
    return typeof value === 'string' ? value : undefined;
  } catch {
    return undefined;
  }
}

/** The top-level id of a complete JSON text. */
export function scanTopLevelId(text: string | Buffer): ScannedId {
  const scanner = new TopLevelIdScanner();
  scanner.push(typeof text === 'string' ? Buffer.from(text, 'utf8') : text);
  return scanner.result();
}
