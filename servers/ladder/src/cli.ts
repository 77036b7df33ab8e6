#!/usr/bin/env node
import { fileURLToPath } from 'node:url';
import { runServerCli } from '@bulkhead/core';
import type { CommandOutput } from './commands.js';
import { runCopyCommand } from './copy-cli.js';
import { runMigrateCommand } from './migrate-cli.js';
import { createLadderServer, LADDER_VERSION } from './server.js';
import { runTokenCommand } from './token-cli.js';

/** The commands beside serving, each with its own usage (`bulkhead-ladder <command> --help`). */
const COMMANDS: Readonly<Record<string, (argv: readonly string[], cwd: string, output: CommandOutput) => Promise<number>>> = {
  token: runTokenCommand,
  migrate: runMigrateCommand,
  copy: runCopyCommand,
};

const COMMANDS_USAGE = `commands (each with --help):
  bulkhead-ladder token create|list|revoke ...   the bearer tokens of the HTTP side, in the ladder database
  bulkhead-ladder migrate [--config DIR]         apply the database's pending schema migrations and report them
  bulkhead-ladder copy --from sqlite:PATH --to postgres://user@host:port/database [--password-file FILE]
                                                 move a SQLite ladder into a new PostgreSQL database`;

const argv = process.argv.slice(2);
const command = argv[0] === undefined ? undefined : COMMANDS[argv[0]];
if (command) {
  process.exitCode = await command(argv.slice(1), process.cwd(), { out: (text) => process.stdout.write(text), err: (text) => process.stderr.write(text) });
} else {
  await runServerCli({ bin: 'bulkhead-ladder', version: LADDER_VERSION, scriptPath: fileURLToPath(import.meta.url), build: createLadderServer }, argv);
  if ((argv.includes('--help') || argv.includes('-h')) && !process.exitCode) process.stdout.write(`\n${COMMANDS_USAGE}\n`);
}
