import type { RunOutcome } from '../run/types.js';

/** The line after a command's output that says how it ended. */
export function outcomeLine(outcome: RunOutcome, timeoutMs: number): string {
  const took = formatDuration(outcome.durationMs);
  if (outcome.timedOut) return `[stopped after the timeout of ${formatDuration(timeoutMs)}: SIGTERM to its process group, then SIGKILL]`;
  if (outcome.cancelled) return `[cancelled after ${took}: its process group was stopped]`;
  if (outcome.exitCode === null) return `[ended by ${outcome.signal ?? 'a signal'} after ${took}]`;
  return `[exit code ${outcome.exitCode} · ${took}]`;
}

export function formatDuration(ms: number): string {
  return ms < 1000 ? `${Math.round(ms)} ms` : `${(ms / 1000).toFixed(ms < 10_000 ? 2 : 1)} s`;
}
