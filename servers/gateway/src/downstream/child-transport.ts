import { spawn, type ChildProcess } from 'node:child_process';
import { StringDecoder } from 'node:string_decoder';
import type { Transport } from '@modelcontextprotocol/sdk/shared/transport.js';
import type { JSONRPCMessage } from '@modelcontextprotocol/sdk/types.js';
import { BatchedWriter, deliverJsonRpcLines, LineReader, redactText, neutralizeInvisible } from '@bulkhead/core';
import { killGroup, trackGroup, untrackGroup } from '../process-groups.js';
import { familyOf, killSurvivors } from './proc-table.js';

export interface ChildSpec {
  readonly command: string;
  readonly args: readonly string[];
  readonly env: Record<string, string>;
  readonly cwd?: string;
}

/** How much of a child's stderr is kept (its tail): a child that floods stderr costs no more. */
const STDERR_KEEP = 16 * 1024;
/** How many of those lines, and how much of each, go into a report or an error message. */
const STDERR_LINES_SHOWN = 5;
const STDERR_LINE_CHARS = 300;
/** How long the gateway waits after a child's exit for the rest of its stderr. */
const STDERR_DRAIN_MS = 250;

/**
 * Largest message a child may send. Results are capped after they arrive, so this only has to
 * stop a runaway child from exhausting memory; past it the child is stopped and restarted.
 */
export const MAX_CHILD_MESSAGE_BYTES = 64 * 1024 * 1024;

/**
 * An MCP stdio transport to a child started in its own process group, so that stopping it ends
 * its grandchildren too (an `npx` wrapper and the server it starts, say).
 */
export class ChildProcessTransport implements Transport {
  onclose?: () => void;
  onerror?: (error: Error) => void;
  onmessage?: (message: JSONRPCMessage) => void;

  private child: ChildProcess | undefined;
  private readonly lines = new LineReader(MAX_CHILD_MESSAGE_BYTES, {
    action: 'throw',
    error: () => new Error(`it sent a message larger than ${MAX_CHILD_MESSAGE_BYTES / (1024 * 1024)} MiB, the gateway's limit for one message`),
  });
  private writer: BatchedWriter | undefined;
  private stderrTail = '';
  /** Whether the tail was cut, so that its first line is a fragment. */
  private stderrCut = false;
  private readonly stderrDecoder = new StringDecoder('utf8');
  private closed = false;
  /** Why the gateway stopped the child itself, when it did. */
  closeReason: string | undefined;
  /** How the child ended, once it has: "exited with code 3", "was killed by SIGKILL". */
  exitDescription: string | undefined;

  constructor(private readonly spec: ChildSpec) {}

  /**
   * The last lines the child wrote to stderr, for reports and error messages: at most a few, each
   * cut short, with secrets redacted (a server may print its token when it fails).
   */
  get stderrLines(): string[] {
    const lines = this.stderrTail.split(/\r?\n/);
    if (this.stderrCut) lines.shift();
    return lines
      .map((line) => line.trim())
      .filter((line) => line !== '')
      .slice(-STDERR_LINES_SHOWN)
      .map((line) => {
        // Controls and bidi characters written out: these lines reach terminals and, in errors, the model.
        const redacted = neutralizeInvisible(redactText(line));
        return redacted.length > STDERR_LINE_CHARS ? `${redacted.slice(0, STDERR_LINE_CHARS)}…` : redacted;
      });
  }

  start(): Promise<void> {
    return new Promise((resolve, reject) => {
      const child = spawn(this.spec.command, [...this.spec.args], {
        cwd: this.spec.cwd,
        env: this.spec.env,
        stdio: ['pipe', 'pipe', 'pipe'],
        detached: true,
      });
      this.child = child;
      this.writer = new BatchedWriter(child.stdin!);
      child.once('error', (error) => {
        this.finish();
        reject(error);
      });
      child.once('spawn', () => {
        if (child.pid !== undefined) trackGroup(child.pid);
        resolve();
      });
      child.once('exit', (code, signal) => {
        this.exitDescription = code !== null ? `exited with code ${code}` : `was killed by ${signal}`;
        // Its last stderr lines may still be in the pipe; a grandchild holding the pipe open must not hold this up.
        killGroup(child.pid!);
        const drained = setTimeout(() => this.finish(), STDERR_DRAIN_MS);
        child.stderr!.once('close', () => {
          clearTimeout(drained);
          this.finish();
        });
      });
      child.stdout!.on('data', (chunk: Buffer) => this.receive(chunk));
      child.stderr!.on('data', (chunk: Buffer) => {
        const tail = this.stderrTail + this.stderrDecoder.write(chunk);
        if (tail.length > STDERR_KEEP) this.stderrCut = true;
        this.stderrTail = tail.length > STDERR_KEEP ? tail.slice(-STDERR_KEEP) : tail;
      });
      child.stdin!.on('error', (error) => this.onerror?.(error));
    });
  }

  private receive(chunk: Buffer): void {
    let lines: string[];
    try {
      lines = this.lines.push(chunk);
    } catch (error) {
      this.closeReason = (error as Error).message;
      void this.close();
      return;
    }
    deliverJsonRpcLines(lines, this.onmessage, this.onerror);
  }

  send(message: JSONRPCMessage): Promise<void> {
    if (!this.writer || this.closed) return Promise.reject(new Error('the child process is not running'));
    return this.writer.write(`${JSON.stringify(message)}\n`);
  }

  /** Ends the whole process group: SIGTERM, then SIGKILL after `graceMs`. */
  async close(graceMs = 2000): Promise<void> {
    const child = this.child;
    if (!child || child.pid === undefined || this.closed) return this.finish();
    const pid = child.pid;
    // Read before the child goes: once it has, its children that left its session are orphans no link leads to.
    const family = familyOf(new Set([pid]));
    const exited = new Promise<void>((resolve) => (child.exitCode !== null || child.signalCode !== null ? resolve() : child.once('exit', () => resolve())));
    try {
      process.kill(-pid, 'SIGTERM');
    } catch {
      // already gone
    }
    const timer = setTimeout(() => killGroup(pid), graceMs);
    await exited;
    clearTimeout(timer);
    killGroup(pid);
    killSurvivors(family);
    this.finish();
  }

  private finish(): void {
    if (this.closed) return;
    this.closed = true;
    if (this.child?.pid !== undefined) {
      killGroup(this.child.pid);
      untrackGroup(this.child.pid);
    }
    this.lines.clear();
    this.onclose?.();
  }
}
