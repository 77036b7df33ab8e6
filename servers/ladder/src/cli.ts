#!/usr/bin/env node
import { fileURLToPath } from 'node:url';
import { runServerCli } from '@bulkhead/core';
import { createLadderServer, LADDER_VERSION } from './server.js';
import { runTokenCommand } from './token-cli.js';

const argv = process.argv.slice(2);
if (argv[0] === 'token') {
  process.exitCode = await runTokenCommand(argv.slice(1), process.cwd(), { out: (text) => process.stdout.write(text), err: (text) => process.stderr.write(text) });
} else {
  await runServerCli({ bin: 'bulkhead-ladder', version: LADDER_VERSION, scriptPath: fileURLToPath(import.meta.url), build: createLadderServer }, argv);
}
