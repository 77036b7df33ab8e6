import type { Readable, Writable } from 'node:stream';
import { STDIO_DEFAULT_MAX_BUFFER_SIZE } from '@modelcontextprotocol/sdk/shared/stdio.js';
import type { Transport } from '@modelcontextprotocol/sdk/shared/transport.js';
import type { JSONRPCMessage } from '@modelcontextprotocol/sdk/types.js';
import type { ToolServer } from '../kit/server.js';
import { parseJsonRpcLine } from './json-rpc.js';
import { BatchedWriter, LineReader } from './stream-lines.js';

/**
 * The SDK's stdio server transport, made cheaper per message: lines are parsed by
 * `parseJsonRpcLine` (same messages, same errors) and the replies of one tick go out in one write.
 * A malformed line is reported through `onerror` and skipped; a line past the SDK's 10 MiB limit
 * closes the transport, as the SDK's does.
 */
export class StdioTransport implements Transport {
  onclose?: () => void;
  onerror?: (error: Error) => void;
  onmessage?: (message: JSONRPCMessage) => void;

  private readonly lines = new LineReader(STDIO_DEFAULT_MAX_BUFFER_SIZE, () => new Error(`ReadBuffer exceeded maximum size of ${STDIO_DEFAULT_MAX_BUFFER_SIZE} bytes`));
  private readonly writer: BatchedWriter;
  private started = false;

  constructor(
    private readonly stdin: Readable = process.stdin,
    stdout: Writable = process.stdout,
  ) {
    this.writer = new BatchedWriter(stdout);
  }

  private readonly ondata = (chunk: Buffer): void => {
    let lines: string[];
    try {
      lines = this.lines.push(chunk);
    } catch (error) {
      this.onerror?.(error as Error);
      void this.close();
      return;
    }
    for (const line of lines) {
      let message: JSONRPCMessage;
      try {
        message = parseJsonRpcLine(line);
      } catch (error) {
        this.onerror?.(error as Error);
        continue;
      }
      this.onmessage?.(message);
    }
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
  const transport = new StdioTransport();
  const closed = new Promise<void>((resolve) => {
    process.stdin.once('end', resolve);
    process.stdin.once('close', resolve);
    transport.onclose = resolve;
  });
  await toolServer.connect(transport);
  await closed;
}
