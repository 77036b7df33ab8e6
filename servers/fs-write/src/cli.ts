#!/usr/bin/env node
import { fileURLToPath } from 'node:url';
import { runServerCli } from '@bulkhead/core';
import { createFsWriteServer, FS_WRITE_VERSION } from './server.js';

await runServerCli({
  bin: 'bulkhead-fs-write',
  version: FS_WRITE_VERSION,
  scriptPath: fileURLToPath(import.meta.url),
  build: (options) => createFsWriteServer(options),
});
