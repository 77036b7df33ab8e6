#!/usr/bin/env node
import { fileURLToPath } from 'node:url';
import { runServerCli } from '@bulkhead/core';
import { createShellServer, loadShellPolicy, SHELL_VERSION, shellContainment } from './server.js';
import { SHELL_POLICY_FILE } from './policy.js';
import { join } from 'node:path';

await runServerCli({
  bin: 'bulkhead-shell',
  version: SHELL_VERSION,
  scriptPath: fileURLToPath(import.meta.url),
  build: (options) => {
    const policy = loadShellPolicy(options.controlDir);
    if (!policy.enabled) {
      process.stderr.write(
        `bulkhead-shell: off: ${join(options.controlDir, SHELL_POLICY_FILE)} does not say enabled: true, so no tool is registered. ` +
          'To turn it on, set enabled: true there (bulkhead config init writes a commented one).\n',
      );
    } else {
      process.stderr.write(`bulkhead-shell: ${shellContainment(policy, options.roots, options.controlDir)}\n`);
    }
    return createShellServer({ ...options, policy });
  },
});
