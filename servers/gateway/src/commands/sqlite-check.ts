import { createRequire } from 'node:module';
import { dirname } from 'node:path';
import { errorMessage } from '@bulkhead/core';
import { builtinCli } from '../config/downstreams.js';
import type { Check } from './doctor.js';

interface Database {
  prepare(sql: string): { pluck(): { get(): unknown } };
  close(): void;
}

/** The folder an install lives in: the one above the first node_modules on the way to `path`. */
function installFolder(path: string): string {
  const at = path.search(/[\\/]node_modules[\\/]/);
  return at > 0 ? path.slice(0, at) : path;
}

function remedy(folder: string): string {
  return (
    `To fix: run \`npm rebuild better-sqlite3\` in ${folder} with the Node that runs Bulkhead. ` +
    'Where no prebuilt binary can be downloaded for this platform and Node version, that compiles it from source ' +
    'and needs a C++ toolchain: python3, make and g++ (Debian or Ubuntu: apt-get install python3 make g++).'
  );
}

/**
 * Whether the ladder's better-sqlite3 loads in this Node: resolved from @bulkhead/ladder as the
 * ladder resolves it, then an in-memory database opened and closed.
 */
export function sqliteCheck(): Check {
  const what = 'better-sqlite3';
  const ladderCli = builtinCli('ladder');
  if (!ladderCli) return { level: 'warn', what, detail: 'the ladder compartment is not installed, so its SQLite binding was not checked' };
  const require = createRequire(dirname(ladderCli) + '/');
  let entry: string;
  try {
    entry = require.resolve('better-sqlite3');
  } catch {
    return { level: 'fail', what, detail: `not installed beside @bulkhead/ladder (${dirname(dirname(ladderCli))}), so every ladder tool fails. To fix: install @bulkhead/gateway again (npm install in ${installFolder(ladderCli)}), which brings it.` };
  }
  const folder = installFolder(entry);
  try {
    const Database = require(entry) as new (file: string) => Database;
    const db = new Database(':memory:');
    try {
      const version = db.prepare('select sqlite_version()').pluck().get();
      const pkg = require('better-sqlite3/package.json') as { version: string };
      return { level: 'ok', what, detail: `${pkg.version}, SQLite ${String(version)}` };
    } finally {
      db.close();
    }
  } catch (error) {
    const message = errorMessage(error);
    const versions = /NODE_MODULE_VERSION (\d+)[\s\S]*?NODE_MODULE_VERSION (\d+)/.exec(message);
    if (versions) {
      return {
        level: 'fail',
        what,
        detail:
          `its binding was built for another Node: NODE_MODULE_VERSION ${versions[1]}, while this Node (${process.version}) ` +
          `needs NODE_MODULE_VERSION ${process.versions.modules}, so every ladder tool fails. ${remedy(folder)}`,
      };
    }
    if (/Could not locate the bindings file/.test(message)) {
      return {
        level: 'fail',
        what,
        detail: `its binding is missing (its install step neither downloaded a prebuilt binary nor compiled one), so every ladder tool fails. ${remedy(folder)}`,
      };
    }
    return { level: 'fail', what, detail: `does not load (${message.split('\n')[0]}), so every ladder tool fails. ${remedy(folder)}` };
  }
}
