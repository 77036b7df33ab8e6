// Every message a client sends gets an answer when JSON-RPC gives it one, so no client waits for
// its own timeout: garbage, invalid requests, odd ids, oversized requests, batches. Real
// processes over raw stdio pipes and raw HTTP; every reply asserted as the exact text sent.
import { spawn, type ChildProcessWithoutNullStreams } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, afterEach, describe, expect, it } from 'vitest';
import { startHttpServer, type HttpServerProcess } from '@bulkhead/core/testing';
import { FS_CLI, GATEWAY_CLI, until } from './helpers.js';

const folders: string[] = [];
function emptyFolder(): string {
  const folder = mkdtempSync(join(tmpdir(), 'bulkhead-invalid-'));
  writeFileSync(join(folder, 'a.txt'), 'a\n');
  folders.push(folder);
  return folder;
}

afterAll(() => {
  for (const folder of folders) rmSync(folder, { recursive: true, force: true });
});

const ID_RULE = 'the id must be a string or an integer from -(2^53-1) to 2^53-1 (not -0)';
const PARSE_ERROR = '{"jsonrpc":"2.0","id":null,"error":{"code":-32700,"message":"Parse error: the message is not valid JSON"}}';
const invalid = (id: string, why: string) => `{"jsonrpc":"2.0","id":${id},"error":${JSON.stringify({ code: -32600, message: `Invalid Request: ${why}` })}}`;
const INITIALIZE = JSON.stringify({ jsonrpc: '2.0', id: 0, method: 'initialize', params: { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 'raw', version: '1' } } });

/** A server process over raw stdio: lines in, lines out, nothing in between. */
class RawStdio {
  private readonly child: ChildProcessWithoutNullStreams;
  private buffered = '';
  private readonly lines: string[] = [];
  private waiting: (() => void) | undefined;
  stderr = '';

  constructor(script: string, args: readonly string[], cwd: string) {
    this.child = spawn(process.execPath, [script, ...args], { cwd, stdio: ['pipe', 'pipe', 'pipe'] });
    this.child.stderr.on('data', (chunk: Buffer) => (this.stderr += chunk.toString()));
    this.child.stdout.on('data', (chunk: Buffer) => {
      this.buffered += chunk.toString();
      for (let newline = this.buffered.indexOf('\n'); newline !== -1; newline = this.buffered.indexOf('\n')) {
        this.lines.push(this.buffered.slice(0, newline));
        this.buffered = this.buffered.slice(newline + 1);
      }
      this.waiting?.();
    });
  }

  write(text: string | Buffer): Promise<void> {
    return new Promise((resolve) => {
      if (this.child.stdin.write(text)) resolve();
      else this.child.stdin.once('drain', () => resolve());
    });
  }

  /** The next line the server writes (server notifications such as logs are skipped). */
  async next(): Promise<string> {
    for (;;) {
      const line = this.lines.shift();
      if (line !== undefined) {
        if ((JSON.parse(line) as { method?: string }).method === undefined) return line;
        continue;
      }
      await new Promise<void>((resolve, reject) => {
        const timer = setTimeout(() => reject(new Error(`no reply within 15 s; stderr: ${this.stderr}`)), 15_000);
        this.waiting = () => {
          clearTimeout(timer);
          resolve();
        };
      });
    }
  }

  /** Sends `line` and returns the next line the server answers with. */
  async exchange(line: string): Promise<string> {
    await this.write(`${line}\n`);
    return this.next();
  }

  async initialize(): Promise<void> {
    expect(JSON.parse(await this.exchange(INITIALIZE))).toMatchObject({ id: 0, result: { protocolVersion: '2025-06-18' } });
    await this.write('{"jsonrpc":"2.0","method":"notifications/initialized"}\n');
  }

  close(): Promise<void> {
    return new Promise((resolve) => {
      if (this.child.exitCode !== null) return resolve();
      this.child.once('exit', () => resolve());
      this.child.stdin.end();
      this.child.kill('SIGTERM');
    });
  }
}

const ANSWERED: readonly (readonly [string, string, string])[] = [
  ['garbage', 'not json at all', PARSE_ERROR],
  ['a cut message', '{"jsonrpc":"2.0","id":41,"method":"tools/list"', PARSE_ERROR],
  ['a JSON scalar', '42', invalid('null', 'a JSON-RPC message is an object, not number')],
  ['a batch', '[{"jsonrpc":"2.0","id":42,"method":"tools/list"}]', invalid('null', 'batches are not supported: send one JSON-RPC message at a time (MCP removed batching in revision 2025-06-18)')],
  ['params: null', '{"jsonrpc":"2.0","id":1,"method":"tools/list","params":null}', invalid('1', '"params" must be an object when present')],
  ['params: []', '{"jsonrpc":"2.0","id":"two","method":"tools/list","params":[]}', invalid('"two"', '"params" must be an object when present')],
  ['a missing method', '{"jsonrpc":"2.0","id":3}', invalid('3', 'a request needs a "method"')],
  ['a method that is not a string', '{"jsonrpc":"2.0","id":4,"method":["tools/list"]}', invalid('4', '"method" must be a string')],
  ['an extra key', '{"jsonrpc":"2.0","id":5,"method":"tools/list","extra":true}', invalid('5', 'unknown key "extra" (a request has jsonrpc, id, method and params)')],
  ['a fractional id', '{"jsonrpc":"2.0","id":1.5,"method":"tools/list"}', invalid('1.5', ID_RULE)],
  ['a huge id', '{"jsonrpc":"2.0","id":1e300,"method":"tools/list"}', invalid('1e300', ID_RULE)],
  ['an id past 2^53', '{"jsonrpc":"2.0","id":12345678901234567890,"method":"tools/list"}', invalid('12345678901234567890', ID_RULE)],
  ['negative zero', '{"jsonrpc":"2.0","id":-0,"method":"tools/list"}', invalid('-0', ID_RULE)],
  ['an object id', '{"jsonrpc":"2.0","id":{"n":6},"method":"tools/list"}', invalid('null', ID_RULE)],
  ['a wrong version', '{"jsonrpc":"1.0","id":7,"method":"tools/list"}', invalid('7', '"jsonrpc" must be "2.0"')],
];

describe('every invalid message over stdio gets its answer', () => {
  let raw: RawStdio | undefined;
  afterEach(async () => {
    await raw?.close();
    raw = undefined;
  });

  for (const [name, script, args] of [
    ['bulkhead-fs', FS_CLI, []],
    ['the gateway', GATEWAY_CLI, ['start']],
  ] as const) {
    it(`${name}: each with its error and its id as written, then serves the next call`, async () => {
      const folder = emptyFolder();
      raw = new RawStdio(script, [...args, '--root', folder], folder);
      await raw.initialize();
      for (const [what, line, reply] of ANSWERED) {
        expect(await raw.exchange(line), what).toBe(reply);
      }
      const notUtf8 = Buffer.concat([Buffer.from('{"jsonrpc":"2.0","id":8,"method":"tools/call","params":{"name":"x","arguments":{"p":"'), Buffer.from([0xed, 0xa0, 0x80]), Buffer.from('"}}}\n')]);
      await raw.write(notUtf8);
      expect(await raw.next()).toBe('{"jsonrpc":"2.0","id":null,"error":{"code":-32700,"message":"Parse error: the message is not valid UTF-8"}}');
      // An invalid notification is answered by nothing (JSON-RPC), but the next request is.
      await raw.write('{"jsonrpc":"2.0","method":"notifications/cancelled","params":null}\n');
      expect(JSON.parse(await raw.exchange('{"jsonrpc":"2.0","id":99,"method":"ping"}'))).toEqual({ jsonrpc: '2.0', id: 99, result: {} });
      // stderr is another pipe than the replies: its line may come after the ping's answer.
      const unanswered = 'refused a message: Invalid Request: "params" must be an object when present (no reply: it carries no request id)\n';
      const stdio = raw;
      await until('the refused notification on stderr', () => stdio.stderr.includes(unanswered));
      expect(raw.stderr).toContain('refused a message: Invalid Request: a request needs a "method"\n');
    });
  }

  it('leaves what reaches the SDK to the SDK: one answer each for an unknown method and bad params, never two', async () => {
    const folder = emptyFolder();
    raw = new RawStdio(FS_CLI, ['--root', folder], folder);
    await raw.initialize();
    const unknown = JSON.parse(await raw.exchange('{"jsonrpc":"2.0","id":10,"method":"no/such"}')) as { id: number; error: { code: number } };
    expect(unknown).toMatchObject({ id: 10, error: { code: -32601 } });
    const badParams = JSON.parse(await raw.exchange('{"jsonrpc":"2.0","id":11,"method":"tools/call","params":{"arguments":{}}}')) as { id: number; error: { code: number } };
    // The SDK's own answer: its handler's schema check of tools/call fails (it says -32603).
    expect(badParams).toMatchObject({ id: 11, error: { code: -32603 } });
    // The very next line answers the ping: nothing else was sent for 10 or 11.
    expect(JSON.parse(await raw.exchange('{"jsonrpc":"2.0","id":12,"method":"ping"}'))).toEqual({ jsonrpc: '2.0', id: 12, result: {} });
  });

  it('answers a request past the 16 MiB limit with its id, wherever the id stands in the line', async () => {
    const folder = emptyFolder();
    raw = new RawStdio(FS_CLI, ['--root', folder], folder);
    await raw.initialize();
    const big = (bytes: number) => `{"name":"read_file","arguments":{"path":"a.txt","pad":"${'x'.repeat(bytes)}","id":"not this one"}}`;
    const lines = [
      [`{"id":21,"jsonrpc":"2.0","method":"tools/call","params":${big(16 * 1024 * 1024)}}`, '21'],
      [`{"jsonrpc":"2.0","method":"tools/call","params":${big(9 * 1024 * 1024)},"id":"middle","more":${big(9 * 1024 * 1024)}}`, '"middle"'],
      [`{"jsonrpc":"2.0","method":"tools/call","params":${big(16 * 1024 * 1024)},"id":23}`, '23'],
    ] as const;
    for (const [line, id] of lines) {
      const message = `a message of ${Buffer.byteLength(line)} bytes exceeds this server's limit of 16777216 bytes; it was not processed`;
      expect(await raw.exchange(line), id).toBe(`{"jsonrpc":"2.0","id":${id},"error":{"code":-32600,"message":"${message}"}}`);
    }
    expect(JSON.parse(await raw.exchange('{"jsonrpc":"2.0","id":24,"method":"ping"}'))).toEqual({ jsonrpc: '2.0', id: 24, result: {} });
  });
});

describe('every invalid message over HTTP gets its answer, one message per POST', () => {
  let server: HttpServerProcess | undefined;
  afterEach(async () => {
    await server?.close();
    server = undefined;
  });

  for (const [name, script, args] of [
    ['bulkhead-fs', FS_CLI, []],
    ['the gateway', GATEWAY_CLI, ['start']],
  ] as const) {
    it(`${name}: 400 with the exact JSON-RPC error, in a session, and runs nothing`, async () => {
      const folder = emptyFolder();
      server = await startHttpServer({ script, args: [...args, '--root', folder], cwd: folder });
      const sessionId = (server.client.transport as { sessionId?: string }).sessionId!;
      const headers = { authorization: `Bearer ${server.token}`, 'content-type': 'application/json', accept: 'application/json, text/event-stream', 'mcp-session-id': sessionId, 'mcp-protocol-version': '2025-06-18' };
      const post = async (body: string | Uint8Array) => {
        const response = await fetch(server!.url, { method: 'POST', headers, body: body as BodyInit });
        return { status: response.status, type: response.headers.get('content-type'), body: await response.text() };
      };
      for (const [what, line, reply] of ANSWERED) expect(await post(line), what).toEqual({ status: 400, type: 'application/json', body: reply });
      const notUtf8 = '{"jsonrpc":"2.0","id":null,"error":{"code":-32700,"message":"Parse error: the body is not valid UTF-8"}}';
      for (const bytes of [[0xc0, 0xaf], [0xff], [0xed, 0xa0, 0x80]]) {
        const body = Buffer.concat([Buffer.from('{"jsonrpc":"2.0","id":30,"method":"tools/call","params":{"name":"x","arguments":{"p":"'), Buffer.from(bytes), Buffer.from('"}}}')]);
        expect(await post(body), Buffer.from(bytes).toString('hex')).toEqual({ status: 400, type: 'application/json', body: notUtf8 });
      }
      const bom = await post(Buffer.concat([Buffer.from([0xef, 0xbb, 0xbf]), Buffer.from('{"jsonrpc":"2.0","id":31,"method":"ping"}')]));
      expect(bom).toEqual({ status: 400, type: 'application/json', body: '{"jsonrpc":"2.0","id":null,"error":{"code":-32700,"message":"Parse error: the body starts with a UTF-8 byte order mark, which JSON text must not"}}' });
      expect(await post('')).toEqual({ status: 400, type: 'application/json', body: PARSE_ERROR });
      // Valid JSON: a lone surrogate escape reaches the tool, which answers it.
      const surrogate = await post('{"jsonrpc":"2.0","id":32,"method":"ping","params":{"_meta":{"note":"\\ud800"}}}');
      expect(surrogate.status).toBe(200);
      expect(surrogate.body).toContain('"id":32');
      expect(await server.client.ping()).toEqual({});
    });
  }
});
