#!/usr/bin/env node
// The gateway bench's reference proxy: starts `command args` and copies bytes between this
// process's stdio and the child's, parsing nothing and checking nothing. What it costs is the
// floor for any stdio proxy on the machine: one more process and one more hop each way.
//
//   node bench/lib/gateway-relay.mjs COMMAND [ARG...]
import { spawn } from 'node:child_process';

const [command, ...args] = process.argv.slice(2);
const child = spawn(command, args, { stdio: ['pipe', 'pipe', 'inherit'] });
process.stdin.pipe(child.stdin);
child.stdout.pipe(process.stdout);
child.on('exit', (code, signal) => process.exit(code ?? (signal ? 1 : 0)));
