import { OutputCap } from '../run/output-cap.js';
import { startCommand } from '../run/start.js';
import type { RunOutcome, RunRequest } from '../run/types.js';

export interface CompletedRun {
  readonly outcome: RunOutcome;
  readonly text: string;
  readonly truncatedBytes: number;
}

/** Runs a command to its end, keeping its output within the cap (the head too for read-only commands). */
export async function runToCompletion(request: Omit<RunRequest, 'onOutput'> & { readonly maxOutputBytes: number; readonly keepHead: boolean }): Promise<CompletedRun> {
  const { maxOutputBytes, keepHead, ...run } = request;
  const cap = new OutputCap(maxOutputBytes, keepHead);
  const outcome = await startCommand({ ...run, onOutput: (chunk) => cap.write(chunk) }).done;
  return { outcome, text: cap.text(), truncatedBytes: cap.droppedBytes };
}
