// The parts `pnpm bench ladder --backend postgres` runs against: a durable throwaway PostgreSQL
// cluster (scripts/pg-cluster.mjs, fsync on) with one database, and real `bulkhead-ladder --http`
// processes (servers/ladder/dist/cli.js) on it, each with its own control-plane folder (its own
// audit chain) holding the same ladder_policy.yaml. Everything started here is stopped on exit,
// Ctrl-C included (bench/lib/processes.mjs for the servers, an exit hook for the cluster).
import { spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import pg from '../../servers/ladder/node_modules/pg/lib/index.js';
import { startCluster, stopCluster } from '../../scripts/pg-cluster.mjs';
import { track, untrack } from './processes.mjs';

const CLI = fileURLToPath(new URL('../../servers/ladder/dist/cli.js', import.meta.url));
const DATABASE = 'ladder_bench';
const BANNER_TIMEOUT_MS = 30_000;

/** The cluster in `dir` with the bench's database; stop() (also run at exit) removes it all. */
export async function startBenchDatabase(dir) {
  const cluster = await startCluster(dir, { durable: true });
  let stopped = false;
  const stop = () => {
    if (stopped) return;
    stopped = true;
    stopCluster(cluster.dir);
  };
  process.once('exit', stop);
  try {
    const password = readPassword(cluster.passwordFile);
    const admin = new pg.Client({ connectionString: withPassword(cluster.url, password) });
    await admin.connect();
    try {
      await admin.query(`CREATE DATABASE ${DATABASE}`);
      const { rows } = await admin.query("SELECT version() AS version, current_setting('fsync') AS fsync, current_setting('synchronous_commit') AS synchronous_commit, current_setting('shared_buffers') AS shared_buffers, current_setting('max_connections') AS max_connections");
      const url = new URL(cluster.url);
      url.pathname = `/${DATABASE}`;
      return { url: url.toString(), passwordFile: cluster.passwordFile, password, settings: rows[0], stop };
    } finally {
      await admin.end();
    }
  } catch (error) {
    stop();
    throw error;
  }
}

/** A connection string with the password in it, in memory only (pg lets the URL's fields override a config's `password`). */
export function withPassword(url, password) {
  const parsed = new URL(url);
  parsed.password = password;
  return parsed.toString();
}

export function readPassword(file) {
  return readFileSync(file, 'utf8').split('\n')[0];
}

/** A plain pg client on the bench database, for setup, resets and checks. */
export async function adminClient(database) {
  const client = new pg.Client({ connectionString: withPassword(database.url, database.password), application_name: 'bulkhead-bench-admin' });
  await client.connect();
  return client;
}

/** A control-plane folder for one server: the policy naming the database, every ladder tool allowed, an operator token. */
function controlFolder(dir, database, poolSize) {
  mkdirSync(join(dir, 'config'), { recursive: true });
  mkdirSync(join(dir, 'root'), { recursive: true });
  writeFileSync(join(dir, 'config', 'ladder_policy.yaml'), `database: ${database.url}\npassword_file: ${database.passwordFile}\npool_size: ${poolSize}\nactor: bench-operator\nrepo:\n  name: bench/claims\n`);
  writeFileSync(join(dir, 'config', 'permissions.yaml'), 'allow:\n  - ladder\n');
  const operatorToken = randomBytes(32).toString('base64url');
  writeFileSync(join(dir, 'operator-token'), `${operatorToken}\n`, { mode: 0o600 });
  return { config: join(dir, 'config'), root: join(dir, 'root'), tokenFile: join(dir, 'operator-token'), operatorToken };
}

/**
 * Starts `bulkhead-ladder --http 127.0.0.1:0` on the database (its pool_size: `poolSize`) and
 * resolves once its banner says where it listens. kill() is `kill -9`; stop() is SIGTERM, then SIGKILL after 3 s.
 */
export async function startLadderServer(dir, database, name, { poolSize = 10, args = [] } = {}) {
  const folder = controlFolder(dir, database, poolSize);
  const child = spawn(process.execPath, [CLI, '--http', '127.0.0.1:0', '--config', folder.config, '--root', folder.root, '--token-file', folder.tokenFile, ...args], {
    cwd: folder.root,
    env: { PATH: process.env.PATH ?? '', HOME: process.env.HOME ?? '' },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  track(child.pid);
  const exited = new Promise((resolve) => child.once('exit', (code, signal) => resolve({ code, signal })));
  exited.then(() => untrack(child.pid));
  let stdout = '';
  let stderr = '';
  child.stderr.on('data', (chunk) => {
    stderr = (stderr + chunk).slice(-4000);
  });
  const url = await new Promise((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`${name} did not print its URL within ${BANNER_TIMEOUT_MS / 1000} s; stderr: ${stderr}`)), BANNER_TIMEOUT_MS);
    child.stdout.on('data', (chunk) => {
      stdout += chunk;
      const match = /listening on (http:\/\/\S+)/.exec(stdout);
      if (match && stdout.includes('Ctrl-C stops it.')) {
        clearTimeout(timer);
        resolve(match[1]);
      }
    });
    exited.then(({ code, signal }) => {
      clearTimeout(timer);
      reject(new Error(`${name} exited (${signal ?? code}) before listening; stderr: ${stderr}`));
    });
  });
  child.stdout.resume();
  const gone = () => child.exitCode !== null || child.signalCode !== null;
  return {
    name,
    url,
    pid: child.pid,
    /** The --token-file token: calls with it act as the policy's actor. */
    operatorToken: folder.operatorToken,
    stderr: () => stderr,
    exited,
    kill() {
      if (!gone()) child.kill('SIGKILL');
      return exited;
    },
    async stop() {
      if (gone()) return;
      child.kill('SIGTERM');
      const timer = setTimeout(() => !gone() && child.kill('SIGKILL'), 3000);
      await exited;
      clearTimeout(timer);
    },
  };
}
