#!/usr/bin/env node
import { fileURLToPath } from 'node:url';
import { runServerCli } from '@bulkhead/core';
import { createFsServer, FS_VERSION } from './server.js';

await runServerCli({
  bin: 'bulkhead-fs',
  version: FS_VERSION,
  scriptPath: fileURLToPath(import.meta.url),
  build: (options) => createFsServer(options),
});
