import type { Roots } from '@bulkhead/core';
import type { CommandClassifier } from './classify/classify.js';
import type { ShellLimits } from './policy.js';
import type { SandboxSpec } from './run/types.js';
import type { TaskManager } from './tasks/task-manager.js';
import type { CheckoutMaker } from './lib/checkout.js';

/** What shell tools may touch: commands run only through these. */
export interface ShellCapabilities {
  readonly paths: Roots;
  readonly limits: ShellLimits;
  /** Parses and tiers a command (loaded once; the grammar is WebAssembly). */
  readonly classifier: () => Promise<CommandClassifier>;
  /** How commands are contained; refused with the reason and the fix when the configured sandbox is missing. */
  readonly sandbox: () => SandboxSpec;
  /** The environment every command gets: the allow list, nothing else of the server's. */
  readonly env: Readonly<Record<string, string>>;
  readonly tasks: TaskManager;
  /** Throwaway checkouts of the repository for run_in_sandbox. */
  readonly checkouts: CheckoutMaker;
}
