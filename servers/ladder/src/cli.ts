#!/usr/bin/env node
import { fileURLToPath } from 'node:url';
import { parseHostPort, runServerCli } from '@bulkhead/core';
import { createLadderServer, LADDER_VERSION } from './server.js';
import { runTokenCommand } from './token-cli.js';

const TOOL_ENDPOINT_FLAG = '--tool-endpoint';

/** `--tool-endpoint HOST:PORT` is the ladder's own flag; the rest are every server's. */
function splitToolEndpoint(argv: readonly string[]): { endpoint: string | undefined; rest: string[] } {
  const at = argv.indexOf(TOOL_ENDPOINT_FLAG);
  if (at === -1) return { endpoint: undefined, rest: [...argv] };
  return { endpoint: argv[at + 1], rest: [...argv.slice(0, at), ...argv.slice(at + 2)] };
}

const argv = process.argv.slice(2);
if (argv[0] === 'token') {
  process.exitCode = await runTokenCommand(argv.slice(1), process.cwd(), (text) => process.stdout.write(text));
} else {
  const { endpoint, rest } = splitToolEndpoint(argv);
  await runServerCli(
    {
      bin: 'bulkhead-ladder',
      version: LADDER_VERSION,
      scriptPath: fileURLToPath(import.meta.url),
      build: (options) => {
        if (argv.includes(TOOL_ENDPOINT_FLAG) && endpoint === undefined) throw new Error(`${TOOL_ENDPOINT_FLAG} expects HOST:PORT`);
        return createLadderServer({
          ...options,
          ...(endpoint !== undefined ? { toolEndpoint: parseHostPort(endpoint) } : {}),
          onToolEndpoint: (url) => process.stderr.write(`bulkhead-ladder tool endpoint at ${url}/api/repos/<owner>/<repo>/tools/<tool> (bearer tokens: bulkhead-ladder token create --actor NAME)\n`),
        });
      },
    },
    rest,
  );
}
