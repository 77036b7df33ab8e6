/** `timed out`: stopped by its own timeout_ms; `killed`: stopped by shell_kill or the server closing. */
export type TaskState = 'running' | 'exited' | 'killed' | 'timed out';

/** What the tools show of one background task. */
export interface TaskInfo {
  /** `bash_<n>`, counted from 1 per server. */
  readonly id: string;
  /** The command, cut to a length that keeps listings short. */
  readonly command: string;
  readonly description: string | undefined;
  readonly state: TaskState;
  /** null while running and when the task was ended by a signal. */
  readonly exitCode: number | null;
  readonly signal: NodeJS.Signals | null;
  /** Set when the runner itself failed, so there is no exit code to show. */
  readonly failure: string | undefined;
  readonly startedAt: Date;
  readonly endedAt: Date | undefined;
  /** Up to now while the task runs. */
  readonly durationMs: number;
  readonly logFile: string;
  /** Bytes in the log file. */
  readonly logBytes: number;
  /** Output bytes past the log's cap (or lost to a failed write). */
  readonly droppedBytes: number;
}
