// The bounded fetch against a real node:http server: every body is counted after decoding,
// whichever encoding (and however many layers) the server uses; an event stream is counted per
// event and in all, whatever line ends frame its events and wherever the chunks are cut; a reply
// that does not begin in time is given up on. A small limit keeps the tests quick.
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import { brotliCompressSync, deflateSync, gzipSync } from 'node:zlib';
import { afterEach, describe, expect, it } from 'vitest';
import { boundedFetch, type ReplyLimits } from '../src/downstream/bounded-fetch.js';

const LIMIT = 1024 * 1024;
const LIMITS: ReplyLimits = { maxBytes: LIMIT, firstByteMs: 300, firstByteSetting: 'call_timeout_ms in bulkhead.yaml' };
const BODY = "sent a reply larger than 1 MiB after decompression, the gateway's limit";
const EVENT = "sent an event larger than 1 MiB on its event stream, the gateway's limit for one message";
const STREAM = "sent more than 1 MiB on one event stream, the gateway's limit for a stream";

let server: Server | undefined;

afterEach(async () => {
  server?.closeAllConnections();
  await new Promise((resolve) => (server ? server.close(resolve) : resolve(undefined)));
  server = undefined;
});

async function serve(handler: (request: IncomingMessage, response: ServerResponse) => void): Promise<string> {
  server = createServer(handler);
  await new Promise<void>((resolve) => server!.listen(0, '127.0.0.1', resolve));
  return `http://127.0.0.1:${(server.address() as { port: number }).port}/mcp`;
}

/** Fetches `url` through the bounded fetch and reads the whole body: its length, or the error, and every breach. */
async function read(url: string): Promise<{ bytes?: number; error?: string; breaches: string[] }> {
  const breaches: string[] = [];
  try {
    const response = await boundedFetch(LIMITS, (what) => breaches.push(what))(url, { method: 'POST' });
    return { bytes: (await response.arrayBuffer()).byteLength, breaches };
  } catch (error) {
    return { error: error instanceof Error ? error.message : String(error), breaches };
  }
}

/** Writes `parts` one by one with a pause between, so that they arrive as separate chunks. */
function writeApart(response: ServerResponse, parts: readonly string[]): void {
  const next = (i: number) => {
    if (i === parts.length) return void response.end();
    response.write(parts[i]);
    setTimeout(() => next(i + 1), 20);
  };
  next(0);
}

describe('bounded fetch: bodies', () => {
  const encodings: [string, (data: Buffer) => Buffer][] = [
    ['gzip', (data) => gzipSync(data)],
    ['deflate', (data) => deflateSync(data)],
    ['br', (data) => brotliCompressSync(data)],
    ['gzip, gzip', (data) => gzipSync(gzipSync(data))],
  ];
  for (const [encoding, encode] of encodings) {
    it(`counts a ${encoding} body after decoding and cuts it past the limit`, async () => {
      const compressed = encode(Buffer.alloc(4 * LIMIT, 0x61));
      expect(compressed.length).toBeLessThan(LIMIT / 10);
      const url = await serve((_request, response) => {
        response.writeHead(200, { 'content-type': 'application/json', 'content-encoding': encoding });
        response.end(compressed);
      });
      expect(await read(url)).toEqual({ error: `it ${BODY}`, breaches: [BODY] });
    });
  }

  it('passes a body of exactly the limit and cuts one byte more', async () => {
    let size = LIMIT;
    const url = await serve((_request, response) => {
      response.writeHead(200, { 'content-type': 'application/json' });
      response.end(Buffer.alloc(size, 0x61));
    });
    expect(await read(url)).toEqual({ bytes: LIMIT, breaches: [] });
    size = LIMIT + 1;
    expect(await read(url)).toEqual({ error: `it ${BODY}`, breaches: [BODY] });
  });

  it('passes a reply that may carry no body', async () => {
    const url = await serve((_request, response) => void response.writeHead(202).end());
    expect(await read(url)).toEqual({ bytes: 0, breaches: [] });
  });
});

describe('bounded fetch: event streams', () => {
  const framings: [string, string][] = [
    ['LF', '\n\n'],
    ['CRLF', '\r\n\r\n'],
    ['CR', '\r\r'],
  ];
  for (const [name, blank] of framings) {
    it(`tells many small events (${name}-framed, boundaries cut across chunks) from one large one`, async () => {
      const event = `data: ${'x'.repeat(300 * 1024)}`;
      const half = blank.length / 2;
      // Each blank line is split between two chunks: the counter must see it across the cut.
      const parts = [0, 1, 2, 3].flatMap(() => [`${event}${blank.slice(0, half)}`, blank.slice(half)]);
      const url = await serve((_request, response) => {
        response.writeHead(200, { 'content-type': 'text/event-stream' });
        writeApart(response, parts);
      });
      expect(await read(url)).toEqual({ error: `it ${STREAM}`, breaches: [STREAM] });
    });
  }

  it('cuts one event that grows past the limit, after events that ended', async () => {
    const url = await serve((_request, response) => {
      response.writeHead(200, { 'content-type': 'text/event-stream; charset=utf-8' });
      writeApart(response, ['event: message\r\ndata: {}\r\n\r\n', 'data: ', ...Array.from({ length: 12 }, () => 'y'.repeat(100 * 1024))]);
    });
    expect(await read(url)).toEqual({ error: `it ${EVENT}`, breaches: [EVENT] });
  });

  it('passes a stream that stays under the limit', async () => {
    const url = await serve((_request, response) => {
      response.writeHead(200, { 'content-type': 'text/event-stream' });
      writeApart(response, Array.from({ length: 5 }, (_, i) => `data: {"n":${i}}\n\n`));
    });
    expect(await read(url)).toMatchObject({ breaches: [] });
  });
});

describe('bounded fetch: the first byte', () => {
  it('gives up on a reply that does not begin in time, and says which setting bounds it', async () => {
    const url = await serve(() => undefined);
    const { error, breaches } = await read(url);
    expect(breaches).toEqual(['did not begin its reply within 0.3 s (call_timeout_ms in bulkhead.yaml)']);
    expect(error).toBeDefined();
  });

  it('does not count the wait against a reply that began in time and then streams slowly', async () => {
    const url = await serve((_request, response) => {
      response.writeHead(200, { 'content-type': 'text/event-stream' });
      response.flushHeaders();
      setTimeout(() => response.end('data: {}\n\n'), 600);
    });
    expect(await read(url)).toEqual({ bytes: 10, breaches: [] });
  });
});
