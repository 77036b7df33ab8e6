import { spawn, type ChildProcess } from 'node:child_process';
import { ToolError } from '../errors.js';
import type { TokenVerdict } from './tokens.js';

const STDERR_KEPT_BYTES = 16 * 1024;

export interface GitProcessOptions {
  readonly cwd: string;
  /** Everything after `git`. */
  readonly argv: readonly string[];
  readonly env: Readonly<Record<string, string>>;
  readonly stdin?: Uint8Array;
  readonly timeoutMs: number;
  /** Most stdout bytes read: past it the process is killed and the result says `truncated`. */
  readonly maxOutputBytes: number;
  readonly signal?: AbortSignal;
  /**
   * Gets stdout as it arrives; answering `'stop'` ends the process because the caller has what it
   * needs. Without it, stdout is collected (up to the cap) into the result.
   */
  readonly onStdout?: (chunk: Buffer) => TokenVerdict;
}

export interface GitProcessResult {
  /** null when the process was killed (by the cap, by `'stop'`) or died of a signal. */
  readonly exitCode: number | null;
  /** What was collected when no `onStdout` was given. */
  readonly stdout: Buffer;
  /** The start of stderr. */
  readonly stderr: string;
  /** The output passed `maxOutputBytes`; what came before it was delivered. */
  readonly truncated: boolean;
  /** The `onStdout` handler said stop. */
  readonly stopped: boolean;
}

function killGroup(child: ChildProcess): void {
  if (child.pid === undefined) return;
  try {
    // The child leads its own process group, so whatever it started (a filter, a sub-git) goes too.
    process.kill(-child.pid, 'SIGKILL');
  } catch {
    // already gone
  }
}

/** The subcommand, for messages: the first argument that is neither an option nor an option's value. */
export function subcommandOf(argv: readonly string[]): string {
  for (let i = 0; i < argv.length; i++) {
    if (argv[i] === '-c') i++;
    else if (!argv[i]!.startsWith('-')) return argv[i]!;
  }
  return 'git';
}

/**
 * Runs git without a shell, in its own process group, with a deadline and an output cap. Output
 * is streamed: past the cap (or when the handler has enough) the group is killed, so a huge diff
 * costs what was read, never the whole of it.
 */
export function runGitProcess(options: GitProcessOptions): Promise<GitProcessResult> {
  const command = `git ${subcommandOf(options.argv)}`;
  return new Promise((resolve, reject) => {
    options.signal?.throwIfAborted();
    const child = spawn('git', options.argv, { cwd: options.cwd, env: options.env, detached: true, stdio: ['pipe', 'pipe', 'pipe'], windowsHide: true });
    const collected: Buffer[] = [];
    let outputBytes = 0;
    let truncated = false;
    let stopped = false;
    let stderr = '';
    let failure: Error | undefined;

    const finish = () => {
      clearTimeout(timer);
      options.signal?.removeEventListener('abort', onAbort);
    };
    const endEarly = (reason: Error | undefined) => {
      if (reason && !failure) failure = reason;
      killGroup(child);
    };
    const onAbort = () => endEarly(options.signal?.reason instanceof Error ? options.signal.reason : new Error('cancelled'));
    options.signal?.addEventListener('abort', onAbort, { once: true });
    const timer = setTimeout(
      () => endEarly(new ToolError(`${command} did not finish within ${options.timeoutMs} ms and was stopped (limits.timeout_ms)`, 'timeout')),
      options.timeoutMs,
    );

    child.stdout.on('data', (chunk: Buffer) => {
      if (truncated || stopped || failure) return;
      const room = options.maxOutputBytes - outputBytes;
      const part = chunk.length > room ? chunk.subarray(0, room) : chunk;
      outputBytes += part.length;
      if (part.length > 0) {
        if (options.onStdout) {
          if (options.onStdout(part) === 'stop') {
            stopped = true;
            killGroup(child);
            return;
          }
        } else {
          collected.push(part);
        }
      }
      if (chunk.length > room) {
        truncated = true;
        killGroup(child);
      }
    });
    child.stderr.on('data', (chunk: Buffer) => {
      if (stderr.length < STDERR_KEPT_BYTES) stderr += chunk.toString('utf8', 0, Math.min(chunk.length, STDERR_KEPT_BYTES - stderr.length));
    });
    // A process that exits before reading all its input is not an error of ours.
    child.stdin.on('error', () => undefined);
    child.stdin.end(options.stdin ?? Buffer.alloc(0));

    child.on('error', (error: NodeJS.ErrnoException) => {
      finish();
      reject(error.code === 'ENOENT' ? new ToolError('git is not installed (no `git` on PATH)', 'git_missing') : error);
    });
    child.on('close', (code) => {
      finish();
      if (failure) reject(failure);
      else resolve({ exitCode: code, stdout: Buffer.concat(collected), stderr, truncated, stopped });
    });
  });
}
