#!/usr/bin/env node
import { readdirSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { parseArgs } from 'node:util';
import { verifyAuditFile } from './verify.js';

const USAGE = 'usage: bulkhead-audit verify [--config DIR] [FILE...]\n  Checks the hash chain of each audit file (default: every *.jsonl in DIR/audit, DIR defaults to ./.bulkhead).';

function main(argv: string[]): number {
  const { values, positionals } = parseArgs({ args: argv, options: { config: { type: 'string' }, help: { type: 'boolean' } }, allowPositionals: true });
  const [command, ...files] = positionals;
  if (values.help || command !== 'verify') {
    process.stderr.write(`${USAGE}\n`);
    return values.help ? 0 : 2;
  }
  let targets = files;
  if (targets.length === 0) {
    const dir = join(resolve(values.config ?? '.bulkhead'), 'audit');
    try {
      targets = readdirSync(dir).filter((name) => name.endsWith('.jsonl')).map((name) => join(dir, name));
    } catch {
      process.stderr.write(`no audit folder at ${dir}\n`);
      return 2;
    }
  }
  let failed = false;
  for (const file of targets) {
    const result = verifyAuditFile(file);
    if (result.ok) process.stdout.write(`OK ${file}: ${result.entries} entries, chain intact\n`);
    else {
      failed = true;
      process.stdout.write(`FAIL ${file} line ${result.line}: ${result.problem}\n`);
    }
  }
  return failed ? 1 : 0;
}

process.exitCode = main(process.argv.slice(2));
