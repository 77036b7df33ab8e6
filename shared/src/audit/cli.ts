#!/usr/bin/env node
import { join, resolve } from 'node:path';
import { parseArgs } from 'node:util';
import { receiptPublicKeyFile } from './layout.js';
import { folderPublicKey } from './receipts.js';
import { verifyAuditFolder } from './verify.js';

const USAGE = 'usage: bulkhead-audit verify [--config DIR] [FILE...]\n  Checks the hash chain of each audit file against its head record (default: every *.jsonl in DIR/audit, DIR defaults to ./.bulkhead); signed head records with DIR/keys/receipt.pub.';

function main(argv: string[]): number {
  const { values, positionals } = parseArgs({ args: argv, options: { config: { type: 'string' }, help: { type: 'boolean' } }, allowPositionals: true });
  const [command, ...files] = positionals;
  if (values.help || command !== 'verify') {
    process.stderr.write(`${USAGE}\n`);
    return values.help ? 0 : 2;
  }
  const controlDir = resolve(values.config ?? '.bulkhead');
  const publicKey = folderPublicKey(receiptPublicKeyFile(controlDir));
  const report = verifyAuditFolder(join(controlDir, 'audit'), files, publicKey ? { publicKey } : {});
  for (const line of report.lines) process.stdout.write(`${line}\n`);
  return report.exitCode;
}

process.exitCode = main(process.argv.slice(2));
