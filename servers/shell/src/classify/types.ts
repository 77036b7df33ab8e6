import type { Risk } from '@bulkhead/core';

export type Tier = Risk;

/**
 * One word of a command after quote removal. `glob` and `expansion` words are only known when
 * bash runs the line; `staticPrefix` is what they certainly start with.
 */
export type Word =
  | { readonly kind: 'static'; readonly text: string }
  | { readonly kind: 'glob'; readonly text: string; readonly staticPrefix: string }
  | { readonly kind: 'expansion'; readonly text: string; readonly staticPrefix: string; readonly several: boolean };

/** A command the line would run: a simple command, or one run through a wrapper (xargs, env, find -exec…). */
export interface ParsedCommand {
  readonly words: readonly Word[];
  /** xargs appends words read from its input: the command gets arguments nobody can see yet. */
  readonly argumentsFromInput: boolean;
}

export interface Classification {
  readonly tier: Tier;
  /** Every stage only reads, searches, lists or runs read-only git (the runner keeps head and tail of its output). */
  readonly readOnly: boolean;
  /** Why, one line per finding, e.g. "command substitution $(…)". */
  readonly reasons: readonly string[];
  readonly commands: readonly ParsedCommand[];
  /** The deny_commands rule the line matches, or may match: the tool refuses it. */
  readonly denied?: string;
  /** false when the line only may run what `denied` forbids (a part of it is known only when it runs). */
  readonly deniedCertainly?: boolean;
}

/** What a table says about one command with its arguments. */
export interface Verdict {
  readonly tier: Tier;
  readonly readOnly: boolean;
  readonly reason: string;
  /** What the command amounts to for deny rules (git's subcommand without its global options). */
  readonly alsoRuns?: readonly ParsedCommand[];
}

export const TIER_ORDER: Readonly<Record<Tier, number>> = { low: 0, medium: 1, high: 2 };

export function maxTier(a: Tier, b: Tier): Tier {
  return TIER_ORDER[a] >= TIER_ORDER[b] ? a : b;
}

/** Whether the word may be an option when bash runs it (a file named --pre=sh matches `*`). */
export function mayBeOption(word: Word): boolean {
  if (word.kind === 'static') return word.text.startsWith('-') && word.text !== '-';
  return word.staticPrefix === '' || word.staticPrefix.startsWith('-');
}

export function high(reason: string): Verdict {
  return { tier: 'high', readOnly: false, reason };
}
