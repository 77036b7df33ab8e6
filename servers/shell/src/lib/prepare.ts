import { ToolError } from '@bulkhead/core';
import type { Classification } from '../classify/classify.js';
import type { ShellCapabilities } from '../context.js';
import { SHELL_POLICY_FILE } from '../policy.js';
import { workingDirectory } from './working-directory.js';

export interface PreparedCommand {
  readonly cwd: string;
  readonly classification: Classification;
}

/**
 * What every way of running a command checks first: the folder is inside the roots and no part of
 * the command matches deny_commands.
 */
export async function prepareCommand(ctx: Pick<ShellCapabilities, 'paths' | 'classifier'>, command: string, cwd: string | undefined): Promise<PreparedCommand> {
  const folder = await workingDirectory(ctx.paths, cwd);
  const classification = (await ctx.classifier()).classify(command, folder);
  if (classification.denied !== undefined) {
    const how = classification.deniedCertainly === false ? 'which this command may run (a part of it is known only when it runs)' : 'which this command runs';
    throw new ToolError(`Refused: deny_commands in ${SHELL_POLICY_FILE} lists "${classification.denied}", ${how}. Nothing was run.`, 'denied');
  }
  return { cwd: folder, classification };
}

/** The timeout a call asked for, within the policy's bounds. */
export function timeoutFor(asked: number | undefined, limits: { default_timeout_ms: number; max_timeout_ms: number }): number {
  return Math.min(asked ?? limits.default_timeout_ms, limits.max_timeout_ms);
}
