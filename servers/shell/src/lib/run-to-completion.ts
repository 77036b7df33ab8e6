import type { Risk } from '@bulkhead/core';
import { OutputCap } from '../run/output-cap.js';
import { startCommand } from '../run/start.js';
import type { RunOutcome, RunRequest, SandboxSpec } from '../run/types.js';
import type { ShellLimits } from '../policy.js';
import { outcomeLine } from './outcome.js';

/** What every way of running a command sends the runner, apart from where output goes and what cancels it. */
export type CommandLaunch = Omit<RunRequest, 'onOutput' | 'signal'>;

export function commandLaunch(command: string, cwd: string, timeoutMs: number, env: Readonly<Record<string, string>>, sandbox: SandboxSpec, limits: ShellLimits): CommandLaunch {
  return { command, cwd, timeoutMs, env, sandbox, maxProcesses: limits.max_processes, killGraceMs: limits.kill_grace_ms };
}

export interface CompletedRun {
  readonly outcome: RunOutcome;
  readonly text: string;
  readonly truncatedBytes: number;
}

/** Runs a command to its end, keeping its output within the cap (the head too for read-only commands). */
export async function runToCompletion(launch: CommandLaunch, signal: AbortSignal, maxOutputBytes: number, keepHead: boolean): Promise<CompletedRun> {
  const cap = new OutputCap(maxOutputBytes, keepHead);
  const outcome = await startCommand({ ...launch, signal, onOutput: (chunk) => cap.write(chunk) }).done;
  return { outcome, text: cap.text(), truncatedBytes: cap.droppedBytes };
}

/** The output, then the line saying how the command ended. */
export function completedText(run: CompletedRun, timeoutMs: number): string {
  return `${run.text === '' ? '(no output)' : run.text.replace(/\n$/, '')}\n${outcomeLine(run.outcome, timeoutMs)}`;
}

/** The fields of a finished command in structuredContent. */
export function completedRecord(run: CompletedRun, risk: Risk) {
  return {
    exit_code: run.outcome.exitCode,
    signal: run.outcome.signal,
    timed_out: run.outcome.timedOut,
    cancelled: run.outcome.cancelled,
    duration_ms: Math.round(run.outcome.durationMs),
    risk,
    output_truncated_bytes: run.truncatedBytes,
  };
}
