#!/usr/bin/env node
import { join, resolve } from 'node:path';
import { parseArgs } from 'node:util';
import { verifyAuditFolder } from './verify.js';

const USAGE = 'usage: bulkhead-audit verify [--config DIR] [FILE...]\n  Checks the hash chain of each audit file (default: every *.jsonl in DIR/audit, DIR defaults to ./.bulkhead).';

function main(argv: string[]): number {
  const { values, positionals } = parseArgs({ args: argv, options: { config: { type: 'string' }, help: { type: 'boolean' } }, allowPositionals: true });
  const [command, ...files] = positionals;
  if (values.help || command !== 'verify') {
    process.stderr.write(`${USAGE}\n`);
    return values.help ? 0 : 2;
  }
  const report = verifyAuditFolder(join(resolve(values.config ?? '.bulkhead'), 'audit'), files);
  for (const line of report.lines) process.stdout.write(`${line}\n`);
  return report.exitCode;
}

process.exitCode = main(process.argv.slice(2));
