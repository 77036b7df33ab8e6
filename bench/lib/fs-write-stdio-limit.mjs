// Preloaded (`node --import`) into both servers for the 50 MiB cases only. Both stdio transports
// refuse a message over 10 MiB: the MCP SDK's (ReadBuffer, STDIO_DEFAULT_MAX_BUFFER_SIZE; the
// peer's) and bulkhead's own line reader (shared/src/transport/stream-lines.ts, same limit), so
// as shipped neither server can receive a 50 MiB write_file at all. This raises the cap the same
// way in both without touching their code: the SDK is the one copy in node_modules/.pnpm and
// bulkhead's reader is found from the server script (process.argv[1]) as it resolves
// @bulkhead/core, so patching the prototypes here patches what the server uses.
//
// The SDK's ReadBuffer also joins every incoming pipe chunk onto all the bytes before it
// (Buffer.concat per chunk: quadratic in the message size); BENCH_STDIO_LINEAR=1 replaces that
// with one join per message, to show what the servers themselves cost.
//
//   BENCH_STDIO_MAX_BYTES   the raised cap (default 256 MiB)
//   BENCH_STDIO_LINEAR=1    the SDK's read buffer keeps chunks until one holds a newline, then joins once
import { existsSync, realpathSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { ReadBuffer } from '@modelcontextprotocol/sdk/shared/stdio.js';

const LIMIT = Number(process.env.BENCH_STDIO_MAX_BYTES) || 256 * 1024 * 1024;
const LINEAR = process.env.BENCH_STDIO_LINEAR === '1';
const NEWLINE = 0x0a;

// ── the SDK's ReadBuffer ──
const { append, clear } = ReadBuffer.prototype;

ReadBuffer.prototype.append = function appendPatched(chunk) {
  this._maxBufferSize = Math.max(this._maxBufferSize ?? 0, LIMIT);
  if (!LINEAR) return append.call(this, chunk);
  this._pending ??= [];
  this._pendingBytes ??= 0;
  if ((this._buffer?.length ?? 0) + this._pendingBytes + chunk.length > this._maxBufferSize) {
    this.clear();
    throw new Error(`ReadBuffer exceeded maximum size of ${this._maxBufferSize} bytes`);
  }
  // readMessage only looks for a newline, so chunks without one can wait to be joined.
  if (chunk.indexOf(NEWLINE) === -1) {
    this._pending.push(chunk);
    this._pendingBytes += chunk.length;
    return;
  }
  this._buffer = Buffer.concat([...(this._buffer ? [this._buffer] : []), ...this._pending, chunk]);
  this._pending = [];
  this._pendingBytes = 0;
};

ReadBuffer.prototype.clear = function clearPatched() {
  this._pending = [];
  this._pendingBytes = 0;
  return clear.call(this);
};

// ── bulkhead's LineReader, in the build the server about to run loads (when it has one) ──
let lineReaderFile;
try {
  const core = createRequire(realpathSync(process.argv[1])).resolve('@bulkhead/core');
  lineReaderFile = join(dirname(realpathSync(core)), 'transport', 'stream-lines.js');
} catch {
  // not a bulkhead server (the peer)
}
if (lineReaderFile && existsSync(lineReaderFile)) {
  const { LineReader } = await import(pathToFileURL(lineReaderFile).href);
  if (LineReader) {
    const { push } = LineReader.prototype;
    LineReader.prototype.push = function pushPatched(chunk) {
      this.maxLineBytes = Math.max(this.maxLineBytes ?? 0, LIMIT);
      return push.call(this, chunk);
    };
  }
}
