export type GrepMode = 'content' | 'files_with_matches' | 'count';

export interface GrepRequest {
  /** Real folder the search runs in; result paths are relative to it. */
  readonly cwd: string;
  /** A file inside `cwd` to search alone, or undefined for the whole folder. */
  readonly file?: string;
  readonly pattern: string;
  readonly mode: GrepMode;
  readonly caseInsensitive: boolean;
  readonly multiline: boolean;
  readonly literal: boolean;
  readonly context: number;
  readonly glob?: string;
  readonly type?: string;
  readonly hidden: boolean;
  readonly denyRead: readonly string[];
  readonly maxLineChars: number;
  /** Stop collecting after this many result lines (the tool pages within them). */
  readonly maxRecords: number;
  readonly timeoutMs: number;
  readonly signal: AbortSignal;
}

export interface GrepLine {
  readonly line: number;
  readonly text: string;
  readonly context: boolean;
}

export interface GrepFile {
  readonly path: string;
  readonly lines: GrepLine[];
  count: number;
}

export interface GrepOutcome {
  readonly files: GrepFile[];
  /** False when a cap or the timeout stopped the search early. */
  readonly complete: boolean;
  readonly timedOut: boolean;
}

export interface ListRequest {
  readonly cwd: string;
  readonly pattern: string;
  readonly hidden: boolean;
  readonly respectGitignore: boolean;
  readonly denyRead: readonly string[];
  readonly timeoutMs: number;
  readonly signal: AbortSignal;
}

export interface ListOutcome {
  /** Paths relative to `cwd`. */
  readonly paths: string[];
  readonly timedOut: boolean;
}

export interface SearchEngine {
  readonly kind: 'ripgrep' | 'builtin';
  grep(request: GrepRequest): Promise<GrepOutcome>;
  list(request: ListRequest): Promise<ListOutcome>;
}
