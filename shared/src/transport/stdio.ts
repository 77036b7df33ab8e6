import type { Readable, Writable } from 'node:stream';
import type { Transport } from '@modelcontextprotocol/sdk/shared/transport.js';
import type { JSONRPCMessage } from '@modelcontextprotocol/sdk/types.js';
import { DEFAULT_MAX_REQUEST_BYTES, type ToolServer } from '../kit/server.js';
import type { ScannedId } from './json-rpc-id.js';
import { answerJsonRpcLines, errorReply, INVALID_REQUEST, PARSE_ERROR } from './json-rpc.js';
import { BatchedWriter, LineReader } from './stream-lines.js';

/**
 * The SDK's stdio server transport, made cheaper per message: lines are parsed by
 * `parseJsonRpcLine`'s fast path and the replies of one tick go out in one write. Unlike the SDK's,
 * it answers what it cannot process instead of dropping it silently: a line that is not JSON (or
 * not UTF-8) gets a parse error, an invalid request (and a request past the server's limit) an error with its id;
 * an invalid notification gets no reply, as JSON-RPC says. Each is also reported through
 * `onerror` and `report` (stderr).
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
    /** Where a refused line is reported for the operator (the server's stderr). */
    private readonly report: (line: string) => void = () => {},
  ) {
    this.writer = new BatchedWriter(stdout);
    this.lines = new LineReader(maxMessageBytes, { action: 'skip', skipped: (bytes, id) => this.refuseOversized(bytes, id, maxMessageBytes) }, (bytes) =>
      this.refuse(`Parse error: a line of ${bytes} bytes is not valid UTF-8`, errorReply({ kind: 'none' }, PARSE_ERROR, 'Parse error: the message is not valid UTF-8')),
    );
  }

  /**
   * A request past the limit is dropped, not the connection: the client gets an error for it (its
   * id read wherever it stands in the line) and every other call goes on.
   */
  private refuseOversized(bytes: number, id: ScannedId, limit: number): void {
    const message = `a message of ${bytes} bytes exceeds this server's limit of ${limit} bytes; it was not processed`;
    this.refuse(message, id.kind === 'none' ? undefined : errorReply(id, INVALID_REQUEST, message));
  }

  private readonly refuse = (problem: string, reply: string | undefined): void => {
    this.onerror?.(new Error(problem));
    this.report(`refused a message: ${problem}${reply === undefined ? ' (no reply: it carries no request id)' : ''}`);
    if (reply !== undefined) void this.writer.write(`${reply}\n`);
  };

  private readonly ondata = (chunk: Buffer): void => {
    answerJsonRpcLines(this.lines.push(chunk), this.onmessage, this.refuse);
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
  const transport = new StdioTransport(process.stdin, process.stdout, toolServer.maxRequestBytes, (line) => process.stderr.write(`bulkhead-${toolServer.namespace}: ${line}\n`));
  const closed = new Promise<void>((resolve) => {
    process.stdin.once('end', resolve);
    process.stdin.once('close', resolve);
    transport.onclose = resolve;
  });
  await toolServer.connect(transport);
  await closed;
}
