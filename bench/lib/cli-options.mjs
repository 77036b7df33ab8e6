import { parseArgs } from 'node:util';

/** Parses a bench's flags (plus --help); bad flags print the usage and exit 2. */
export function benchFlags(argv, options, usage) {
  let values;
  try {
    ({ values } = parseArgs({ args: argv, options: { ...options, help: { type: 'boolean', short: 'h' } } }));
  } catch (error) {
    process.stderr.write(`${error.message}\n\n${usage}`);
    process.exit(2);
  }
  if (values.help) {
    process.stdout.write(usage);
    process.exit(0);
  }
  return values;
}

/** A flag that must be a positive integer, or `fallback` when absent. */
export function positiveInteger(text, fallback, flag) {
  if (text === undefined) return fallback;
  const n = Number(text);
  if (!Number.isInteger(n) || n < 1) {
    process.stderr.write(`${flag} expects a positive integer, got ${text}\n`);
    process.exit(2);
  }
  return n;
}
