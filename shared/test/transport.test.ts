import { PassThrough, Writable } from 'node:stream';
import { StdioServerTransport } from '@modelcontextprotocol/sdk/server/stdio.js';
import { deserializeMessage } from '@modelcontextprotocol/sdk/shared/stdio.js';
import type { JSONRPCMessage } from '@modelcontextprotocol/sdk/types.js';
import { describe, expect, it } from 'vitest';
import { BatchedWriter, parseJsonRpcLine, StdioTransport } from '@bulkhead/core';

/** What the SDK makes of a line: the message, or the error's class and text. */
function sdkReading(line: string): { message: JSONRPCMessage } | { error: string } {
  try {
    return { message: deserializeMessage(line) };
  } catch (error) {
    return { error: `${(error as Error).name}: ${(error as Error).message}` };
  }
}

function ourReading(line: string): { message: JSONRPCMessage } | { error: string } {
  try {
    return { message: parseJsonRpcLine(line) };
  } catch (error) {
    return { error: `${(error as Error).name}: ${(error as Error).message}` };
  }
}

const VALID = [
  '{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"fs__read_file","arguments":{"path":"a.txt"}}}',
  '{"jsonrpc":"2.0","id":"abc","method":"tools/list"}',
  '{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{"name":"x","_meta":{"progressToken":"p1","other":{"deep":[1,2]}}}}',
  '{"jsonrpc":"2.0","id":8,"method":"tools/call","params":{"name":"x","_meta":{"io.modelcontextprotocol/related-task":{"taskId":"t","extra":1}}}}',
  '{"jsonrpc":"2.0","method":"notifications/initialized"}',
  '{"jsonrpc":"2.0","method":"notifications/progress","params":{"progressToken":3,"progress":1,"total":2}}',
  '{"jsonrpc":"2.0","id":1,"result":{"content":[{"type":"text","text":"hi"}]}}',
  '{"jsonrpc":"2.0","id":1,"result":{}}',
  '{"jsonrpc":"2.0","id":2,"result":{"_meta":{"progressToken":1},"structuredContent":{"a":1}}}',
  '{"jsonrpc":"2.0","id":2,"error":{"code":-32602,"message":"bad","data":{"why":"x"}}}',
  '{"jsonrpc":"2.0","error":{"code":-32700,"message":"Parse error"}}',
  '{"jsonrpc":"2.0","id":3,"method":"x","params":{"__proto__":{"polluted":true},"a":1}}',
  '{"jsonrpc":"2.0","id":3,"result":{"__proto__":{"polluted":true},"content":[]}}',
  '{"jsonrpc":"2.0","id":4,"error":{"code":1,"message":"m","extra":"stripped by the schema"}}',
];

const MALFORMED = [
  '',
  'not json',
  '{"jsonrpc":"2.0","id":1,"method":"tools/call"',
  '[]',
  'null',
  '42',
  '{}',
  '{"jsonrpc":"1.0","id":1,"method":"x"}',
  '{"id":1,"method":"x"}',
  '{"jsonrpc":"2.0","id":null,"method":"x"}',
  '{"jsonrpc":"2.0","id":1.5,"method":"x"}',
  '{"jsonrpc":"2.0","id":true,"method":"x"}',
  '{"jsonrpc":"2.0","id":1,"method":5}',
  '{"jsonrpc":"2.0","id":1,"method":"x","params":null}',
  '{"jsonrpc":"2.0","id":1,"method":"x","params":[1,2]}',
  '{"jsonrpc":"2.0","id":1,"method":"x","extra":true}',
  '{"jsonrpc":"2.0","id":1,"method":"x","params":{"_meta":{"progressToken":1.5}}}',
  '{"jsonrpc":"2.0","id":1,"method":"x","params":{"_meta":"text"}}',
  '{"jsonrpc":"2.0","id":1,"result":[]}',
  '{"jsonrpc":"2.0","result":{}}',
  '{"jsonrpc":"2.0","id":1,"result":{},"method":"x"}',
  '{"jsonrpc":"2.0","id":1,"error":{"code":"x","message":"m"}}',
  '{"jsonrpc":"2.0","id":1,"error":{"code":1}}',
  '{"jsonrpc":"2.0","id":1,"error":{"code":1,"message":"m"},"result":{}}',
  '{"jsonrpc":"2.0","id":9007199254740993,"method":"x"}',
];

describe('JSON-RPC lines', () => {
  it('reads every message exactly as the SDK does', () => {
    for (const line of VALID) {
      const ours = ourReading(line);
      expect(ours, line).toEqual(sdkReading(line));
      expect('message' in ours, line).toBe(true);
    }
  });

  it('rejects malformed lines with the errors the SDK gives', () => {
    for (const line of MALFORMED) {
      const ours = ourReading(line);
      expect('error' in ours, line).toBe(true);
      expect(ours, line).toEqual(sdkReading(line));
    }
  });

  it('never carries an own __proto__ key through, as the schema drops it', () => {
    const message = parseJsonRpcLine(VALID[11]!) as { params: Record<string, unknown> };
    expect(Object.prototype.hasOwnProperty.call(message.params, '__proto__')).toBe(false);
    expect(({} as Record<string, unknown>)['polluted']).toBeUndefined();
  });
});

/** Feeds the same chunks to a transport and reports what it delivered, in order. */
async function drive(transport: StdioTransport | StdioServerTransport, stdin: PassThrough, chunks: readonly string[]): Promise<string[]> {
  const seen: string[] = [];
  transport.onmessage = (message) => seen.push(`message ${JSON.stringify(message)}`);
  transport.onerror = (error) => seen.push(`error ${error.name}: ${error.message}`);
  transport.onclose = () => seen.push('closed');
  await transport.start();
  for (const chunk of chunks) stdin.write(chunk);
  await new Promise((resolve) => setImmediate(resolve));
  return seen;
}

class CountingSink extends Writable {
  readonly writes: string[] = [];
  override _write(chunk: Buffer, _encoding: BufferEncoding, done: () => void): void {
    this.writes.push(chunk.toString());
    done();
  }
}

describe('stdio server transport', () => {
  const chunks = [
    '{"jsonrpc":"2.0","id":1,"method":"tools/list"}\n{"jsonrpc":"2.0","method":"notifi',
    'cations/initialized"}\r\nnot json\n{"jsonrpc":"2.0","id":null,"method":"x"}\n',
    '{"jsonrpc":"2.0","id":2,"result":{}}\n',
  ];

  it('delivers the messages and reports the malformed lines as the SDK transport does', async () => {
    const sdkIn = new PassThrough();
    const ourIn = new PassThrough();
    const expected = await drive(new StdioServerTransport(sdkIn, new CountingSink()), sdkIn, chunks);
    const actual = await drive(new StdioTransport(ourIn, new CountingSink()), ourIn, chunks);
    expect(actual).toEqual(expected);
    expect(actual.filter((event) => event.startsWith('message'))).toHaveLength(3);
    expect(actual.filter((event) => event.startsWith('error'))).toHaveLength(2);
  });

  it('answers a request past the limit with an error and goes on serving (the SDK transport closes instead)', async () => {
    const sink = new CountingSink();
    const stdin = new PassThrough();
    const transport = new StdioTransport(stdin, sink, 1000);
    const oversized = `{"jsonrpc":"2.0","method":"tools/call","params":{"pad":"${'x'.repeat(3000)}"},"id":7}\n`;
    const seen = await drive(transport, stdin, [oversized.slice(0, 1500), oversized.slice(1500), '{"jsonrpc":"2.0","id":8,"method":"tools/list"}\n']);
    const message = `a message of ${oversized.length - 1} bytes exceeds this server's limit of 1000 bytes; it was not processed`;
    expect(seen).toEqual([`error Error: ${message}`, 'message {"jsonrpc":"2.0","id":8,"method":"tools/list"}']);
    await new Promise((resolve) => setImmediate(resolve));
    expect(sink.writes.map((line) => JSON.parse(line) as unknown)).toEqual([{ jsonrpc: '2.0', id: 7, error: { code: -32600, message } }]);
  });

  it('drops an oversized line whose id cannot be read, and a notification, without a reply', async () => {
    const sink = new CountingSink();
    const stdin = new PassThrough();
    const line = `{"jsonrpc":"2.0","method":"notifications/x","params":{"p":"${'y'.repeat(500)}"}}`;
    const seen = await drive(new StdioTransport(stdin, sink, 100), stdin, [`${line}\n`]);
    expect(seen).toEqual([`error Error: a message of ${line.length} bytes exceeds this server's limit of 100 bytes; it was not processed`]);
    expect(sink.writes).toEqual([]);
  });

  it('sends the replies of one tick in one write, in order', async () => {
    const sink = new CountingSink();
    const transport = new StdioTransport(new PassThrough(), sink);
    const sent = [1, 2, 3].map((id) => transport.send({ jsonrpc: '2.0', id, result: {} }));
    await Promise.all(sent);
    await transport.send({ jsonrpc: '2.0', id: 4, result: {} });
    expect(sink.writes).toEqual([
      '{"jsonrpc":"2.0","id":1,"result":{}}\n{"jsonrpc":"2.0","id":2,"result":{}}\n{"jsonrpc":"2.0","id":3,"result":{}}\n',
      '{"jsonrpc":"2.0","id":4,"result":{}}\n',
    ]);
  });
});

describe('batched writer', () => {
  it('waits for the stream to drain when it is full', async () => {
    let release: (() => void) | undefined;
    const writes: string[] = [];
    const slow = new Writable({
      highWaterMark: 4,
      write(chunk: Buffer, _encoding, done) {
        writes.push(chunk.toString());
        release = done;
      },
    });
    const writer = new BatchedWriter(slow);
    let settled = false;
    const first = writer.write('0123456789').then(() => {
      settled = true;
    });
    await new Promise((resolve) => setImmediate(resolve));
    expect(writes).toEqual(['0123456789']);
    expect(settled).toBe(false);
    release!();
    await first;
    expect(settled).toBe(true);
  });
});
