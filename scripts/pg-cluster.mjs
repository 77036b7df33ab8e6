// A throwaway PostgreSQL cluster for the tests and benchmarks: `initdb` into a folder, listening on
// 127.0.0.1 on a free port only (no other address), with password (SCRAM) authentication for TCP,
// stopped and removed at the end. Uses Debian's `postgresql` package; as root it runs the server
// as the `postgres` user, since PostgreSQL refuses to run as root.
//
//   node scripts/pg-cluster.mjs start DIR [--durable]   prints the URL; DIR/url and DIR/password hold it
//   node scripts/pg-cluster.mjs stop DIR
//
// Without --durable the cluster trades crash safety for speed (fsync off), which is right for tests.
import { spawnSync } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { chownSync, existsSync, mkdirSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:net';
import { join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';

/** The superuser the tests and benchmarks connect as. */
export const CLUSTER_USER = 'bulkhead';

/** The newest installed server's bin folder, or undefined when PostgreSQL is not installed. */
export function postgresBinDir() {
  const base = '/usr/lib/postgresql';
  if (!existsSync(base)) return undefined;
  const versions = readdirSync(base)
    .filter((name) => existsSync(join(base, name, 'bin', 'initdb')))
    .sort((a, b) => Number(b) - Number(a));
  return versions.length === 0 ? undefined : join(base, versions[0], 'bin');
}

function freePort() {
  return new Promise((done, fail) => {
    const server = createServer();
    server.once('error', fail);
    server.listen(0, '127.0.0.1', () => {
      const { port } = server.address();
      server.close(() => done(port));
    });
  });
}

function ownerIds() {
  const passwd = readFileSync('/etc/passwd', 'utf8').split('\n').find((line) => line.startsWith('postgres:'));
  if (!passwd) throw new Error('running as root needs the postgres user (installed with the postgresql package)');
  const [, , uid, gid] = passwd.split(':');
  return { uid: Number(uid), gid: Number(gid) };
}

function run(bin, args, asPostgres) {
  const command = asPostgres ? 'runuser' : bin;
  const argv = asPostgres ? ['-u', 'postgres', '--', bin, ...args] : args;
  const result = spawnSync(command, argv, { encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'], timeout: 120_000 });
  if (result.status !== 0) throw new Error(`${bin} ${args.join(' ')} failed: ${(result.stderr || result.stdout || String(result.error)).trim().slice(-2000)}`);
  return result.stdout;
}

/**
 * Starts a cluster in `dir` (made if missing) and returns its URL (no password in it), the file
 * holding the password, and stop(), which stops the server and removes `dir`.
 */
export async function startCluster(dir, { durable = false } = {}) {
  const bin = postgresBinDir();
  if (!bin) throw new Error('PostgreSQL is not installed: apt-get install postgresql (Debian), or set BULKHEAD_TEST_PG_URL to a server of your own');
  const home = resolve(dir);
  mkdirSync(home, { recursive: true });
  const asPostgres = process.getuid?.() === 0;
  const data = join(home, 'data');
  const passwordFile = join(home, 'password');
  const password = randomBytes(18).toString('base64url');
  writeFileSync(passwordFile, `${password}\n`, { mode: 0o600 });
  if (asPostgres) {
    const { uid, gid } = ownerIds();
    chownSync(home, uid, gid);
    chownSync(passwordFile, uid, gid);
  }
  run(join(bin, 'initdb'), ['-D', data, '-U', CLUSTER_USER, `--pwfile=${passwordFile}`, '--auth-local=trust', '--auth-host=scram-sha-256', '-E', 'UTF8', '--locale=C.UTF-8', '--no-sync'], asPostgres);
  const port = await freePort();
  const settings = [`-c listen_addresses=127.0.0.1`, `-p ${port}`, `-k ${home}`, '-c max_connections=200', '-c shared_buffers=128MB'];
  if (!durable) settings.push('-c fsync=off', '-c synchronous_commit=off', '-c full_page_writes=off');
  run(join(bin, 'pg_ctl'), ['-D', data, '-l', join(home, 'server.log'), '-w', '-t', '60', '-o', settings.join(' '), 'start'], asPostgres);
  const url = `postgres://${CLUSTER_USER}@127.0.0.1:${port}/postgres`;
  writeFileSync(join(home, 'url'), `${url}\n`);
  return { url, port, passwordFile, dir: home, stop: () => stopCluster(home) };
}

/** Stops the cluster in `dir` at once (its data is thrown away) and removes the folder. */
export function stopCluster(dir) {
  const home = resolve(dir);
  const bin = postgresBinDir();
  const data = join(home, 'data');
  if (bin && existsSync(join(data, 'postmaster.pid'))) {
    try {
      run(join(bin, 'pg_ctl'), ['-D', data, '-m', 'immediate', '-w', 'stop'], process.getuid?.() === 0);
    } catch (error) {
      process.stderr.write(`pg-cluster: ${error.message}\n`);
    }
  }
  rmSync(home, { recursive: true, force: true });
}

if (process.argv[1] && resolve(process.argv[1]) === fileURLToPath(import.meta.url)) {
  const [command, dir, ...flags] = process.argv.slice(2);
  if ((command !== 'start' && command !== 'stop') || !dir) {
    process.stderr.write('usage: node scripts/pg-cluster.mjs start DIR [--durable] | stop DIR\n');
    process.exit(2);
  }
  try {
    if (command === 'start') process.stdout.write(`${(await startCluster(dir, { durable: flags.includes('--durable') })).url}\n`);
    else stopCluster(dir);
  } catch (error) {
    process.stderr.write(`pg-cluster: ${error.message}\n`);
    process.exit(1);
  }
}
