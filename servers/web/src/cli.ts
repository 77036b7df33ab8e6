#!/usr/bin/env node
import { fileURLToPath } from 'node:url';
import { runServerCli } from '@bulkhead/core';
import { createWebServer, WEB_VERSION } from './server.js';

await runServerCli({
  bin: 'bulkhead-web',
  version: WEB_VERSION,
  scriptPath: fileURLToPath(import.meta.url),
  build: (options) => createWebServer(options),
});
