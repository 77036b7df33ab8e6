// Makes a fresh clone usable with nothing but Node.js and npm: finds or fetches pnpm, installs
// from the lockfile when node_modules is missing or stale, and builds.
import { execFileSync, spawnSync } from 'node:child_process';
import { existsSync, statSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

export const repo = join(dirname(fileURLToPath(import.meta.url)), '..');
const PNPM_VERSION = '12.4.2';

function pnpmCommand() {
  const probe = spawnSync('pnpm', ['--version'], { encoding: 'utf8', shell: false });
  if (probe.status === 0) return ['pnpm'];
  return ['npx', '--yes', `pnpm@${PNPM_VERSION}`];
}

export function run(command, args, options = {}) {
  const result = spawnSync(command, args, { cwd: repo, stdio: 'inherit', ...options });
  if (result.status !== 0) {
    process.stderr.write(`\n${command} ${args.join(' ')} failed (exit ${result.status ?? result.signal})\n`);
    process.exit(result.status ?? 1);
  }
}

export function ensureInstalledAndBuilt({ quiet = false } = {}) {
  const pnpm = pnpmCommand();
  const marker = join(repo, 'node_modules', '.modules.yaml');
  const lock = join(repo, 'pnpm-lock.yaml');
  const env = { ...process.env };
  if (existsSync('/usr/include/node') && !env.npm_config_nodedir) env.npm_config_nodedir = '/usr';
  if (!existsSync(marker) || statSync(lock).mtimeMs > statSync(marker).mtimeMs) {
    if (!quiet) process.stderr.write('Installing dependencies from the lockfile…\n');
    run(pnpm[0], [...pnpm.slice(1), 'install', '--frozen-lockfile'], { env });
  }
  if (!quiet) process.stderr.write('Building…\n');
  run(pnpm[0], [...pnpm.slice(1), 'run', 'build'], { env });
  return pnpm;
}

export function nodeVersionOk() {
  const [major] = process.versions.node.split('.').map(Number);
  return major >= 20;
}

export { execFileSync };
