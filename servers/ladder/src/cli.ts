#!/usr/bin/env node
import { fileURLToPath } from 'node:url';
import { runServerCli } from '@bulkhead/core';
import { createLadderServer, LADDER_VERSION } from './server.js';

await runServerCli({
  bin: 'bulkhead-ladder',
  version: LADDER_VERSION,
  scriptPath: fileURLToPath(import.meta.url),
  build: (options) => createLadderServer(options),
});
