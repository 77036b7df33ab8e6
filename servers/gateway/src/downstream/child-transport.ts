import { spawn, type ChildProcess } from 'node:child_process';
import { ReadBuffer, serializeMessage } from '@modelcontextprotocol/sdk/shared/stdio.js';
import type { Transport } from '@modelcontextprotocol/sdk/shared/transport.js';
import type { JSONRPCMessage } from '@modelcontextprotocol/sdk/types.js';
import { killGroup, trackGroup, untrackGroup } from '../process-groups.js';

export interface ChildSpec {
  readonly command: string;
  readonly args: readonly string[];
  readonly env: Record<string, string>;
  readonly cwd?: string;
}

const STDERR_KEEP = 16 * 1024;

/**
 * An MCP stdio transport to a child started in its own process group, so that stopping it ends
 * its grandchildren too (an `npx` wrapper and the server it starts, say).
 */
export class ChildProcessTransport implements Transport {
  onclose?: () => void;
  onerror?: (error: Error) => void;
  onmessage?: (message: JSONRPCMessage) => void;

  private child: ChildProcess | undefined;
  private readonly buffer = new ReadBuffer();
  private stderrTail = '';
  private closed = false;

  constructor(private readonly spec: ChildSpec) {}

  /** The last lines the child wrote to stderr, for error messages. */
  get stderr(): string {
    return this.stderrTail;
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
      child.once('error', (error) => {
        this.finish();
        reject(error);
      });
      child.once('spawn', () => {
        if (child.pid !== undefined) trackGroup(child.pid);
        resolve();
      });
      child.once('exit', () => this.finish());
      child.stdout!.on('data', (chunk: Buffer) => {
        this.buffer.append(chunk);
        for (;;) {
          let message: JSONRPCMessage | null;
          try {
            message = this.buffer.readMessage();
          } catch (error) {
            this.onerror?.(error as Error);
            continue;
          }
          if (message === null) break;
          this.onmessage?.(message);
        }
      });
      child.stderr!.on('data', (chunk: Buffer) => {
        this.stderrTail = (this.stderrTail + chunk.toString()).slice(-STDERR_KEEP);
      });
      child.stdin!.on('error', (error) => this.onerror?.(error));
    });
  }

  send(message: JSONRPCMessage): Promise<void> {
    return new Promise((resolve, reject) => {
      const stdin = this.child?.stdin;
      if (!stdin || this.closed) return reject(new Error('the child process is not running'));
      if (stdin.write(serializeMessage(message))) resolve();
      else stdin.once('drain', resolve);
    });
  }

  /** Ends the whole process group: SIGTERM, then SIGKILL after `graceMs`. */
  async close(graceMs = 2000): Promise<void> {
    const child = this.child;
    if (!child || child.pid === undefined || this.closed) return this.finish();
    const pid = child.pid;
    const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
    try {
      process.kill(-pid, 'SIGTERM');
    } catch {
      // already gone
    }
    const timer = setTimeout(() => killGroup(pid), graceMs);
    await exited;
    clearTimeout(timer);
    killGroup(pid);
    this.finish();
  }

  private finish(): void {
    if (this.closed) return;
    this.closed = true;
    if (this.child?.pid !== undefined) {
      killGroup(this.child.pid);
      untrackGroup(this.child.pid);
    }
    this.buffer.clear();
    this.onclose?.();
  }
}
