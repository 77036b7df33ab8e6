import { PassThrough, Writable } from 'node:stream';
import { StdioServerTransport } from '@modelcontextprotocol/sdk/server/stdio.js';
import { deserializeMessage } from '@modelcontextprotocol/sdk/shared/stdio.js';
import type { JSONRPCMessage } from '@modelcontextprotocol/sdk/types.js';
import { describe, expect, it } from 'vitest';
import { BatchedWriter, parseJsonRpcLine, readJsonRpcMessage, scanTopLevelId, StdioTransport, TopLevelIdScanner } from '@bulkhead/core';

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

const ID_RULE = 'the id must be a string or an integer from -(2^53-1) to 2^53-1 (not -0)';

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

/** The JSON-RPC error a server answers with, as JSON text. */
function errorText(id: string, code: number, message: string): string {
  return `{"jsonrpc":"2.0","id":${id},"error":${JSON.stringify({ code, message })}}`;
}

describe('every invalid message a server is sent', () => {
  const invalidRequest = (id: string, why: string) => errorText(id, -32600, `Invalid Request: ${why}`);
  const PARSE = errorText('null', -32700, 'Parse error: the message is not valid JSON');
  const answered: readonly (readonly [string, string])[] = [
    ['garbage', PARSE],
    ['{"jsonrpc":"2.0","id":1,"method":"x"', PARSE],
    ['{"jsonrpc":"2.0","id":1,"method":"x"}}', PARSE],
    ['42', invalidRequest('null', 'a JSON-RPC message is an object, not number')],
    ['"text"', invalidRequest('null', 'a JSON-RPC message is an object, not string')],
    ['null', invalidRequest('null', 'a JSON-RPC message is an object, not null')],
    ['[]', invalidRequest('null', 'batches are not supported: send one JSON-RPC message at a time (MCP removed batching in revision 2025-06-18)')],
    ['[{"jsonrpc":"2.0","id":1,"method":"tools/list"}]', invalidRequest('null', 'batches are not supported: send one JSON-RPC message at a time (MCP removed batching in revision 2025-06-18)')],
    ['{}', invalidRequest('null', '"jsonrpc" must be "2.0"')],
    ['{"jsonrpc":"1.0","id":10,"method":"x"}', invalidRequest('10', '"jsonrpc" must be "2.0"')],
    ['{"jsonrpc":"2.0","id":1,"method":"x","params":null}', invalidRequest('1', '"params" must be an object when present')],
    ['{"jsonrpc":"2.0","id":"s","method":"x","params":[]}', invalidRequest('"s"', '"params" must be an object when present')],
    ['{"jsonrpc":"2.0","id":3}', invalidRequest('3', 'a request needs a "method"')],
    ['{"jsonrpc":"2.0","id":4,"method":7}', invalidRequest('4', '"method" must be a string')],
    ['{"jsonrpc":"2.0","id":5,"method":"x","extra":1}', invalidRequest('5', 'unknown key "extra" (a request has jsonrpc, id, method and params)')],
    ['{"jsonrpc":"2.0","id":1.5,"method":"x"}', invalidRequest('1.5', ID_RULE)],
    ['{"jsonrpc":"2.0","id":1e300,"method":"x"}', invalidRequest('1e300', ID_RULE)],
    ['{"jsonrpc":"2.0","id":12345678901234567890,"method":"x"}', invalidRequest('12345678901234567890', ID_RULE)],
    ['{"jsonrpc":"2.0","id":9007199254740992,"method":"x"}', invalidRequest('9007199254740992', ID_RULE)],
    ['{"jsonrpc":"2.0","id":-0,"method":"tools/list"}', invalidRequest('-0', ID_RULE)],
    ['{"jsonrpc":"2.0","id":{"a":1},"method":"x"}', invalidRequest('null', ID_RULE)],
    ['{"jsonrpc":"2.0","id":[1],"method":"x"}', invalidRequest('null', ID_RULE)],
    ['{"jsonrpc":"2.0","id":true,"method":"x"}', invalidRequest('null', ID_RULE)],
    ['{"jsonrpc":"2.0","id":null,"method":"x"}', invalidRequest('null', ID_RULE)],
    // The last id key is the one JSON.parse keeps; an escaped key is still `id`.
    ['{"id":1,"jsonrpc":"2.0","\\u0069d":"esc","method":"x","extra":1}', invalidRequest('"esc"', 'unknown key "extra" (a request has jsonrpc, id, method and params)')],
    ['{"params":{"id":99},"jsonrpc":"2.0","method":"x","id":"top","params":null}', invalidRequest('"top"', '"params" must be an object when present')],
  ];

  it('answers each with the JSON-RPC error that names its id as it was written, or null', () => {
    for (const [line, reply] of answered) {
      const read = readJsonRpcMessage(line);
      expect(read.kind, line).toBe('invalid');
      expect(read.kind === 'invalid' ? read.reply : undefined, line).toBe(reply);
    }
  });

  it('answers no notification and no response, valid or not, but says what is wrong', () => {
    const unanswered = [
      ['{"jsonrpc":"2.0","method":"x","params":null}', 'Invalid Request: "params" must be an object when present'],
      ['{"jsonrpc":"2.0","method":5}', 'Invalid Request: "method" must be a string'],
      ['{"jsonrpc":"2.0","method":"x","extra":1}', 'Invalid Request: unknown key "extra" (a request has jsonrpc, id, method and params)'],
      ['{"jsonrpc":"2.0","id":9,"result":[]}', expect.stringMatching(/^Invalid Request: not a valid response: /)],
      ['{"jsonrpc":"2.0","id":9,"error":{"code":"x"}}', expect.stringMatching(/^Invalid Request: not a valid response: /)],
    ] as const;
    for (const [line, problem] of unanswered) expect(readJsonRpcMessage(line), line).toEqual({ kind: 'invalid', problem });
  });

  it('keeps every valid message as the SDK reads it, a lone surrogate escape included', () => {
    for (const line of [...VALID, '{"jsonrpc":"2.0","id":0,"method":"x"}', '{"jsonrpc":"2.0","id":-5,"method":"x","params":{"path":"\\ud800"}}']) {
      const sdk = sdkReading(line);
      expect('message' in sdk, line).toBe(true);
      expect(readJsonRpcMessage(line), line).toEqual({ kind: 'message', ...sdk });
    }
  });
});

describe('the top-level id of a JSON text', () => {
  const cases: readonly (readonly [string, ReturnType<typeof scanTopLevelId>])[] = [
    ['{"id":1}', { kind: 'echoable', raw: '1' }],
    ['{ "a" : {"id":2} , "b":[{"id":3}], "id" : "x\\"y" }', { kind: 'echoable', raw: '"x\\"y"' }],
    ['{"a":"\\\\","id":-1.5e+3}', { kind: 'echoable', raw: '-1.5e+3' }],
    ['{"a":"\\",\\"id\\":4"}', { kind: 'none' }],
    ['{"ids":1,"i":2,"idd":3}', { kind: 'none' }],
    ['{"id":null}', { kind: 'unusable' }],
    ['{"id":{"id":1}}', { kind: 'unusable' }],
    ['{"id":[1]}', { kind: 'unusable' }],
    ['{"id":1.2.3}', { kind: 'unusable' }],
    [`{"id":"${'z'.repeat(300)}"}`, { kind: 'unusable' }],
    ['{"id":1,"id":"second"}', { kind: 'echoable', raw: '"second"' }],
    ['[{"id":1}]', { kind: 'none' }],
    ['"id"', { kind: 'none' }],
    ['{"method":"x"}', { kind: 'none' }],
  ];

  it('finds it wherever it stands, past nested ids and quoted look-alikes', () => {
    for (const [text, found] of cases) expect(scanTopLevelId(text), text).toEqual(found);
  });

  it('finds the same however the text is cut into chunks', () => {
    for (const [text, found] of cases) {
      const bytes = Buffer.from(text);
      for (let size = 1; size <= 7; size += 1) {
        const scanner = new TopLevelIdScanner();
        for (let at = 0; at < bytes.length; at += size) scanner.push(bytes.subarray(at, at + size));
        expect(scanner.result(), `${text} in chunks of ${size}`).toEqual(found);
      }
    }
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

  it('delivers the messages the SDK transport delivers, and answers the lines it drops silently', async () => {
    const sdkIn = new PassThrough();
    const ourIn = new PassThrough();
    const sink = new CountingSink();
    const expected = await drive(new StdioServerTransport(sdkIn, new CountingSink()), sdkIn, chunks);
    const reported: string[] = [];
    const actual = await drive(new StdioTransport(ourIn, sink, undefined, (line) => reported.push(line)), ourIn, chunks);
    const messages = (events: string[]) => events.filter((event) => event.startsWith('message'));
    expect(messages(actual)).toEqual(messages(expected));
    expect(messages(actual)).toHaveLength(3);
    expect(expected.filter((event) => event.startsWith('error'))).toHaveLength(2);
    expect(actual.filter((event) => event.startsWith('error'))).toEqual([
      `error Error: Parse error: Unexpected token 'o', "not json" is not valid JSON`,
      `error Error: Invalid Request: ${ID_RULE}`,
    ]);
    await new Promise((resolve) => setImmediate(resolve));
    expect(sink.writes.join('')).toBe(
      '{"jsonrpc":"2.0","id":null,"error":{"code":-32700,"message":"Parse error: the message is not valid JSON"}}\n' +
        `{"jsonrpc":"2.0","id":null,"error":{"code":-32600,"message":"Invalid Request: ${ID_RULE}"}}\n`,
    );
    expect(reported).toEqual([
      `refused a message: Parse error: Unexpected token 'o', "not json" is not valid JSON`,
      `refused a message: Invalid Request: ${ID_RULE}`,
    ]);
  });

  it('answers a request past the limit with an error naming its id wherever the id stands, and goes on serving', async () => {
    const pad = `"params":{"pad":"${'x'.repeat(3000)}","nested":{"id":999},"list":[{"id":998}],"text":"\\"id\\":997"}`;
    const placements = [
      [`{"id":7,"jsonrpc":"2.0","method":"tools/call",${pad}}`, '7'],
      [`{"jsonrpc":"2.0",${pad},"id":"mid-\\"quoted\\"","method":"tools/call"}`, '"mid-\\"quoted\\""'],
      [`{"jsonrpc":"2.0","method":"tools/call",${pad},"id":12345678901234567890}`, '12345678901234567890'],
      [`{"jsonrpc":"2.0","method":"tools/call",${pad}, "\\u0069d" : -0 }`, '-0'],
    ] as const;
    for (const [line, id] of placements) {
      for (const cut of [1, 17, 1500, line.length - 3]) {
        const sink = new CountingSink();
        const stdin = new PassThrough();
        const transport = new StdioTransport(stdin, sink, 1000);
        const seen = await drive(transport, stdin, [line.slice(0, cut), `${line.slice(cut)}\n`, '{"jsonrpc":"2.0","id":8,"method":"tools/list"}\n']);
        const message = `a message of ${Buffer.byteLength(line)} bytes exceeds this server's limit of 1000 bytes; it was not processed`;
        expect(seen, `${id} cut at ${cut}`).toEqual([`error Error: ${message}`, 'message {"jsonrpc":"2.0","id":8,"method":"tools/list"}']);
        await new Promise((resolve) => setImmediate(resolve));
        expect(sink.writes.join(''), `${id} cut at ${cut}`).toBe(`{"jsonrpc":"2.0","id":${id},"error":{"code":-32600,"message":"${message}"}}\n`);
      }
    }
  });

  it('answers an oversized request whose id is not a string or number with id null', async () => {
    const sink = new CountingSink();
    const stdin = new PassThrough();
    await drive(new StdioTransport(stdin, sink, 100), stdin, [`{"jsonrpc":"2.0","id":{"nested":1},"method":"x","params":{"p":"${'y'.repeat(500)}"}}\n`]);
    await new Promise((resolve) => setImmediate(resolve));
    expect(JSON.parse(sink.writes.join(''))).toMatchObject({ jsonrpc: '2.0', id: null, error: { code: -32600 } });
  });

  it('drops an oversized notification and an invalid one without a reply, and reports them', async () => {
    const sink = new CountingSink();
    const stdin = new PassThrough();
    const reported: string[] = [];
    const line = `{"jsonrpc":"2.0","method":"notifications/x","params":{"p":"${'y'.repeat(500)}","id":5}}`;
    const seen = await drive(new StdioTransport(stdin, sink, 100, (text) => reported.push(text)), stdin, [`${line}\n{"jsonrpc":"2.0","method":"x","params":null}\n  \n`]);
    const oversized = `a message of ${line.length} bytes exceeds this server's limit of 100 bytes; it was not processed`;
    expect(seen).toEqual([`error Error: ${oversized}`, 'error Error: Invalid Request: "params" must be an object when present']);
    expect(reported).toEqual([
      `refused a message: ${oversized} (no reply: it carries no request id)`,
      'refused a message: Invalid Request: "params" must be an object when present (no reply: it carries no request id)',
    ]);
    await new Promise((resolve) => setImmediate(resolve));
    expect(sink.writes).toEqual([]);
  });

  it('answers a line that is not valid UTF-8 with a parse error instead of decoding it with replacement characters', async () => {
    const sink = new CountingSink();
    const stdin = new PassThrough();
    const transport = new StdioTransport(stdin, sink);
    const seen: string[] = [];
    transport.onmessage = (message) => seen.push(JSON.stringify(message));
    transport.onerror = (error) => seen.push(error.message);
    await transport.start();
    const bad = Buffer.concat([Buffer.from('{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"read_file","arguments":{"path":"a'), Buffer.from([0xc0, 0xaf]), Buffer.from('"}}}\n')]);
    stdin.write(Buffer.concat([bad, Buffer.from('{"jsonrpc":"2.0","id":2,"method":"ping"}\n')]));
    await new Promise((resolve) => setImmediate(resolve));
    expect(seen).toEqual([`Parse error: a line of ${bad.length - 1} bytes is not valid UTF-8`, '{"jsonrpc":"2.0","id":2,"method":"ping"}']);
    await new Promise((resolve) => setImmediate(resolve));
    expect(sink.writes.join('')).toBe('{"jsonrpc":"2.0","id":null,"error":{"code":-32700,"message":"Parse error: the message is not valid UTF-8"}}\n');
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
