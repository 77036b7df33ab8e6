import type { Readable, Writable } from 'node:stream';
import type { Transport } from '@modelcontextprotocol/sdk/shared/transport.js';
import type { JSONRPCMessage } from '@modelcontextprotocol/sdk/types.js';
import { DEFAULT_MAX_REQUEST_BYTES, type ToolServer } from '../kit/server.js';
import { deliverJsonRpcLines } from './json-rpc.js';
import { BatchedWriter, LineReader } from './stream-lines.js';

/**
 * The SDK's stdio server transport, made cheaper per message: lines are parsed by
 * `parseJsonRpcLine` (same messages, same errors) and the replies of one tick go out in one write.
 * A malformed line is reported through `onerror` and skipped; so is a line past the server's
 * request limit, answered with an error when its id can be read.
 */
export class StdioTransport implements Transport {
  onclose?: () => void;
  onerror?: (error: Error) => void;
  onmessage?: (message: JSONRPCMessage) => void;

  private readonly lines: LineReader;
  private readonly writer: BatchedWriter;
  private started = false;

  constructor(
    private readonly stdin: Readable = process.stdin,
    stdout: Writable = process.stdout,
    maxMessageBytes: number = DEFAULT_MAX_REQUEST_BYTES,
  ) {
    this.writer = new BatchedWriter(stdout);
    this.lines = new LineReader(maxMessageBytes, { action: 'skip', skipped: (bytes, tail) => this.refuseOversized(bytes, tail, maxMessageBytes) });
  }

  /**
   * A request past the limit is dropped, not the connection: the client gets an error for it (its
   * id is read from the end of the line, where the SDK puts it) and every other call goes on.
   */
  private refuseOversized(bytes: number, tail: string, limit: number): void {
    const message = `a message of ${bytes} bytes exceeds this server's limit of ${limit} bytes; it was not processed`;
    this.onerror?.(new Error(message));
    const id = /"id"\s*:\s*(-?\d+|"(?:[^"\\]|\\.)*")\s*}\s*$/.exec(tail)?.[1];
    if (id === undefined) return;
    void this.send({ jsonrpc: '2.0', id: JSON.parse(id) as string | number, error: { code: -32600, message } });
  }

  private readonly ondata = (chunk: Buffer): void => {
    deliverJsonRpcLines(this.lines.push(chunk), this.onmessage, this.onerror);
  };

  private readonly onStreamError = (error: Error): void => {
    this.onerror?.(error);
  };

  async start(): Promise<void> {
    if (this.started) throw new Error('StdioTransport already started');
    this.started = true;
    this.stdin.on('data', this.ondata);
    this.stdin.on('error', this.onStreamError);
  }

  async close(): Promise<void> {
    this.stdin.off('data', this.ondata);
    this.stdin.off('error', this.onStreamError);
    // Pausing is ours to do only when no one else reads stdin.
    if (this.stdin.listenerCount('data') === 0) this.stdin.pause();
    this.lines.clear();
    this.onclose?.();
  }

  send(message: JSONRPCMessage): Promise<void> {
    return this.writer.write(`${JSON.stringify(message)}\n`);
  }
}

/** Serves one client over stdin/stdout; resolves when the client goes away. */
export async function serveStdio(toolServer: ToolServer): Promise<void> {
  const transport = new StdioTransport(process.stdin, process.stdout, toolServer.maxRequestBytes);
  const closed = new Promise<void>((resolve) => {
    process.stdin.once('end', resolve);
    process.stdin.once('close', resolve);
    transport.onclose = resolve;
  });
  await toolServer.connect(transport);
  await closed;
}
