#!/usr/bin/env node
import { fileURLToPath } from 'node:url';
import { runServerCli } from '@bulkhead/core';
import { createGitServer, GIT_VERSION } from './server.js';

await runServerCli({
  bin: 'bulkhead-git',
  version: GIT_VERSION,
  scriptPath: fileURLToPath(import.meta.url),
  build: (options) => createGitServer(options),
});
