/** How a command is contained. */
export interface SandboxSpec {
  /** bubblewrap: the system read-only, the roots read-write, a private /tmp; none: the host as it is. */
  readonly kind: 'bubblewrap' | 'none';
  /** Whether the command may use the network (bubblewrap only: without it the command gets no network namespace peers). */
  readonly network: boolean;
  /** Folders the command may write (the roots), absolute and real. */
  readonly writable: readonly string[];
  /** Folders inside the writable ones that stay read-only (the control-plane folder). */
  readonly readOnly: readonly string[];
  /**
   * Folders emptied last, over the read-only ones (bubblewrap only): the control plane's private
   * folders (`keys/`: credentials; `approvals/`: pending approvals), which a command must not read.
   */
  readonly secret?: readonly string[];
  /**
   * Folders replaced by an empty, throwaway tmpfs inside the sandbox (bubblewrap only), so the command cannot
   * read the server user's keys and tokens; roots inside them stay visible. Default: the server user's home folder.
   */
  readonly hidden?: readonly string[];
  /**
   * Folders shown read-only (bubblewrap only) even where /tmp or a hidden folder would cover them: the
   * roots, for a command that runs in a throwaway checkout whose objects live in the repository there.
   */
  readonly visible?: readonly string[];
  /**
   * Most bytes each throwaway in-memory folder (/tmp, /var/tmp, /dev/shm, /run, the hidden home)
   * may hold (bubblewrap only): without it each may grow to half the host's memory.
   */
  readonly tmpfsBytes?: number;
}

/** One command to run. */
export interface RunRequest {
  /** Passed to `bash -c` as it is; classification happened before. */
  readonly command: string;
  /** Absolute, already confined to the roots. */
  readonly cwd: string;
  readonly timeoutMs: number;
  /** The whole environment of the command (already reduced to the allow list). */
  readonly env: Readonly<Record<string, string>>;
  readonly sandbox: SandboxSpec;
  /** Most processes the command may have alive at once (fork bombs stop here). */
  readonly maxProcesses: number;
  /** Cancels the command: its whole process group gets SIGTERM, then SIGKILL after killGraceMs. */
  readonly signal: AbortSignal;
  readonly killGraceMs: number;
  /** Receives stdout and stderr interleaved, in arrival order. */
  readonly onOutput: (chunk: Buffer) => void;
}

export interface RunOutcome {
  /** null when the command was ended by a signal. */
  readonly exitCode: number | null;
  readonly signal: NodeJS.Signals | null;
  readonly timedOut: boolean;
  readonly cancelled: boolean;
  readonly durationMs: number;
}

export interface RunningCommand {
  readonly pid: number;
  /** Settles once the command and every process of its group or sandbox are gone. */
  readonly done: Promise<RunOutcome>;
  /** SIGTERM to the whole group, SIGKILL after the grace period; resolves when all are gone. */
  stop(): Promise<RunOutcome>;
}
