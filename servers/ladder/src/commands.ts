import { join, resolve } from 'node:path';
import { parseArgs } from 'node:util';
import { errorMessage } from '@bulkhead/core';

/** Where a command writes: its result to `out` (stdout), everything said about it to `err` (stderr). */
export interface CommandOutput {
  readonly out: (text: string) => void;
  readonly err: (text: string) => void;
}

/** Thrown for a command line that cannot run; the command prints it with its usage. */
export class CommandUsageError extends Error {}

/** The control-plane folder of a command: `--config`, else `./.bulkhead` in the current folder (not a root's). */
export function commandControlDir(cwd: string, config: string | undefined): string {
  return resolve(cwd, config ?? join(cwd, '.bulkhead'));
}

/** A command's flags: each takes a value or is a switch. */
export type CommandFlags = Readonly<Record<string, { readonly type: 'string' } | { readonly type: 'boolean' }>>;

export interface CommandLine<F extends CommandFlags> {
  readonly values: { readonly [K in keyof F]?: F[K] extends { readonly type: 'string' } ? string : boolean } & { readonly help?: boolean };
  readonly positionals: string[];
}

/** The flags of a command, `--help` among them; a flag it does not take is a CommandUsageError. */
export function parseCommandLine<F extends CommandFlags>(argv: readonly string[], flags: F): CommandLine<F> {
  try {
    const { values, positionals } = parseArgs({ args: [...argv], options: { ...flags, help: { type: 'boolean', short: 'h' } }, allowPositionals: true, strict: true });
    return { values: values as CommandLine<F>['values'], positionals };
  } catch (error) {
    // node:util's message goes on to explain `--` for positionals, which these commands do not take.
    throw new CommandUsageError(errorMessage(error).split('. ')[0]!);
  }
}

/**
 * Runs one `bulkhead-ladder <command>`: an error is printed on one line after
 * `bulkhead-ladder <command>: ` (a usage mistake followed by the usage) and exits 2.
 */
export async function runCommand(name: string, usage: string, output: CommandOutput, work: () => Promise<number>): Promise<number> {
  try {
    return await work();
  } catch (error) {
    output.err(`bulkhead-ladder ${name}: ${errorMessage(error)}\n${error instanceof CommandUsageError ? `\n${usage}\n` : ''}`);
    return 2;
  }
}
