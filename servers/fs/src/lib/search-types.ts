import type { PinnedFolder } from './beneath.js';
import type { DenyInodes, InodeStat } from './deny-inodes.js';

export type GrepMode = 'content' | 'files_with_matches' | 'count';

export interface GrepRequest {
  /** The folder the search runs in, held open; result paths are relative to it. */
  readonly folder: PinnedFolder;
  /** A file directly inside `folder` to search alone, or undefined for the whole folder. */
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
  /** Refuses files that are a second name (hard link) of a deny_read file. */
  readonly denyInodes: Pick<DenyInodes, 'denial'>;
  readonly maxLineChars: number;
  /** Stop collecting after this many result lines (the tool pages within them). */
  readonly maxRecords: number;
  readonly timeoutMs: number;
  readonly signal: AbortSignal;
  /** Told how many files matched so far while the search runs (an engine that cannot tell says nothing). */
  readonly onProgress?: (matchingFiles: number) => void;
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
  /** Device, inode and link count of the file that was searched, when it has several links. */
  inode?: InodeStat;
}

export interface GrepOutcome {
  readonly files: GrepFile[];
  /** False when a cap or the timeout stopped the search early. */
  readonly complete: boolean;
  readonly timedOut: boolean;
}

export interface ListRequest {
  /** The folder listed, held open; result paths are relative to it. */
  readonly folder: PinnedFolder;
  readonly pattern: string;
  readonly hidden: boolean;
  readonly respectGitignore: boolean;
  readonly denyRead: readonly string[];
  readonly timeoutMs: number;
  readonly signal: AbortSignal;
  /** Told how many files the walk saw and how many of them match, while it runs (an engine that cannot tell says nothing). */
  readonly onProgress?: (walked: number, matching: number) => void;
}

export interface ListOutcome {
  /** Paths relative to `folder`, as the walk saw them: not yet checked beneath the descriptor. */
  readonly paths: string[];
  readonly timedOut: boolean;
}

export interface SearchEngine {
  readonly kind: 'ripgrep' | 'builtin';
  grep(request: GrepRequest): Promise<GrepOutcome>;
  list(request: ListRequest): Promise<ListOutcome>;
}
