// Packing and installing the publishable packages as a user gets them, for the packaging tests:
// `pnpm pack` of every package under shared/ and servers/*, `npm install` of the tarballs into an
// empty prefix with a chosen Node, the installed `bulkhead start` through a real MCP client, and
// Node 22 from the npm registry (the node-<platform>-<arch> package, which ships its headers).
// Every process started here is tracked and stopped by stopAll().
import { execFileSync, spawn, type ChildProcess } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, realpathSync, rmSync, statSync } from 'node:fs';
import { homedir, tmpdir } from 'node:os';
import { delimiter, dirname, join, relative } from 'node:path';
import { fileURLToPath } from 'node:url';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { matchingNodedir } from '../../scripts/node-headers.mjs';
import { pnpmCommand } from '../../scripts/ensure.mjs';
import { alive, descendants } from './helpers.js';

export const REPO = realpathSync(fileURLToPath(new URL('../..', import.meta.url)));

/** A progress line on stderr (vitest shows a test's stderr as it comes). */
export function progress(label: string, line: string): void {
  process.stderr.write(`[${label}] ${line}\n`);
}

export function seconds(ms: number): string {
  return `${(ms / 1000).toFixed(1)} s`;
}

export function kib(bytes: number): string {
  return `${(bytes / 1024).toFixed(1)} KiB`;
}

interface Manifest {
  name: string;
  version: string;
  private?: boolean;
  license?: string;
  main?: string;
  bin?: Record<string, string>;
  exports?: Record<string, { types?: string; default?: string }>;
  files?: string[];
  repository?: { directory?: string };
  engines?: { node?: string };
  dependencies?: Record<string, string>;
  devDependencies?: Record<string, string>;
  optionalDependencies?: Record<string, string>;
  peerDependencies?: Record<string, string>;
}

function manifest(dir: string): Manifest {
  return JSON.parse(readFileSync(join(dir, 'package.json'), 'utf8')) as Manifest;
}

export interface Publishable {
  readonly name: string;
  /** The folder, relative to the repository (`servers/gateway`). */
  readonly folder: string;
}

/** shared/ and every servers/* folder with a package.json, relative to the repository. */
export function packageFolders(): string[] {
  return ['shared', ...readdirSync(join(REPO, 'servers')).map((name) => `servers/${name}`)].filter((folder) => existsSync(join(REPO, folder, 'package.json')));
}

/** The packages of packageFolders() that are not private. */
export function publishablePackages(): Publishable[] {
  return packageFolders()
    .map((folder) => ({ folder, manifest: manifest(join(REPO, folder)) }))
    .filter(({ manifest: m }) => !m.private)
    .map(({ folder, manifest: m }) => ({ name: m.name, folder }));
}

/**
 * What the benchmarks pull in that no published package needs: bench/package.json's
 * devDependencies (the peer servers) and its dependencies that no publishable package declares.
 */
export function benchOnlyPackages(): string[] {
  const bench = manifest(join(REPO, 'bench'));
  const declared = new Set(publishablePackages().flatMap(({ folder }) => Object.keys(manifest(join(REPO, folder)).dependencies ?? {})));
  return [...Object.keys(bench.devDependencies ?? {}), ...Object.keys(bench.dependencies ?? {}).filter((name) => !name.startsWith('@bulkhead/') && !declared.has(name))];
}

// ---------------------------------------------------------------------------------------------
// Processes

const live = new Set<ChildProcess>();

export interface RunResult {
  readonly code: number | null;
  readonly output: string;
  readonly ms: number;
}

/**
 * Runs a command in its own process group, collecting its output, with a heartbeat on stderr
 * every 30 s and the whole group killed at the timeout.
 */
export function runTracked(command: string, args: readonly string[], options: { cwd?: string; env?: NodeJS.ProcessEnv; timeoutMs: number; label: string; what: string }): Promise<RunResult> {
  const started = performance.now();
  return new Promise((resolve, reject) => {
    const child = spawn(command, args, { cwd: options.cwd, env: options.env ?? process.env, stdio: ['ignore', 'pipe', 'pipe'], detached: true });
    live.add(child);
    let output = '';
    child.stdout!.on('data', (chunk: Buffer) => (output += chunk.toString()));
    child.stderr!.on('data', (chunk: Buffer) => (output += chunk.toString()));
    const heartbeat = setInterval(() => progress(options.label, `${options.what}: still running after ${seconds(performance.now() - started)}`), 30_000);
    const timer = setTimeout(() => {
      progress(options.label, `${options.what}: timed out after ${seconds(options.timeoutMs)}, killing it`);
      killGroup(child, 'SIGKILL');
    }, options.timeoutMs);
    child.once('error', (error) => {
      clearInterval(heartbeat);
      clearTimeout(timer);
      live.delete(child);
      reject(error);
    });
    child.once('close', (code) => {
      clearInterval(heartbeat);
      clearTimeout(timer);
      live.delete(child);
      resolve({ code, output, ms: performance.now() - started });
    });
  });
}

function killGroup(child: ChildProcess, signal: NodeJS.Signals): void {
  if (child.pid === undefined || child.exitCode !== null || child.signalCode !== null) return;
  try {
    process.kill(-child.pid, signal);
  } catch {
    // already gone
  }
}

/** Waits up to `ms` for every pid to exit; returns those still alive. */
export async function waitGone(pids: readonly number[], ms: number): Promise<number[]> {
  const deadline = Date.now() + ms;
  let left = pids.filter(alive);
  while (left.length > 0 && Date.now() < deadline) {
    await new Promise((resolve) => setTimeout(resolve, 100));
    left = left.filter(alive);
  }
  return left;
}

const gateways = new Set<InstalledGateway>();

/** Stops whatever is still running: commands (their whole group) and gateways (their whole tree). */
export async function stopAll(): Promise<void> {
  for (const child of live) killGroup(child, 'SIGKILL');
  await Promise.allSettled([...gateways].map((gateway) => gateway.close()));
}

// ---------------------------------------------------------------------------------------------
// Packing

export interface Tarball {
  readonly name: string;
  readonly folder: string;
  readonly file: string;
  readonly bytes: number;
}

/** `pnpm pack --pack-destination dest` in every publishable package folder. */
export async function packAll(dest: string, label: string): Promise<Tarball[]> {
  mkdirSync(dest, { recursive: true });
  const [command, ...prefix] = pnpmCommand();
  const tarballs: Tarball[] = [];
  for (const { name, folder } of publishablePackages()) {
    const result = await runTracked(command!, [...prefix, 'pack', '--json', '--pack-destination', dest], { cwd: join(REPO, folder), timeoutMs: 120_000, label, what: `pnpm pack ${name}` });
    if (result.code !== 0) throw new Error(`pnpm pack in ${folder} failed (exit ${result.code}):\n${result.output}`);
    const json = JSON.parse(result.output.slice(result.output.indexOf('{'))) as { filename: string };
    tarballs.push({ name, folder, file: json.filename, bytes: statSync(json.filename).size });
  }
  return tarballs;
}

/** Every file of a tarball, unpacked into `into`: path (below package/) → content. */
function unpack(tarball: string, into: string): Map<string, Buffer> {
  mkdirSync(into, { recursive: true });
  execFileSync('tar', ['-xzf', tarball, '-C', into]);
  const files = new Map<string, Buffer>();
  const walk = (dir: string) => {
    for (const entry of readdirSync(dir, { withFileTypes: true })) {
      const path = join(dir, entry.name);
      if (entry.isDirectory()) walk(path);
      else files.set(relative(join(into, 'package'), path), readFileSync(path));
    }
  };
  walk(join(into, 'package'));
  return files;
}

/** Source and test files never belong in a tarball; data files a dist reads at run time may sit in src/. */
const RUNTIME_DATA = new Set(['src/search/word-vectors.bin']);

/**
 * What is wrong with a packed tarball: sources or tests in it, missing LICENSE, entry points that
 * are not in it, unresolved workspace dependencies, metadata that differs from the workspace's,
 * or an absolute path of this machine in any file.
 */
export function tarballProblems(tarball: Tarball, scratch: string): string[] {
  const problems: string[] = [];
  const files = unpack(tarball.file, join(scratch, tarball.folder.replace(/\//g, '_')));
  const names = [...files.keys()];
  for (const name of names) {
    if (name.startsWith('src/') && !RUNTIME_DATA.has(name)) problems.push(`ships a source file: ${name}`);
    if (/(^|\/)(test|tests|__tests__)\//.test(name) || /\.(test|spec)\.[cm]?[jt]s$/.test(name)) problems.push(`ships a test: ${name}`);
    if (/\.tsbuildinfo$|\.map$|(^|\/)tsconfig[^/]*\.json$/.test(name)) problems.push(`ships a build artefact: ${name}`);
  }
  if (!files.has('LICENSE')) problems.push('has no LICENSE');
  const packed = JSON.parse(files.get('package.json')!.toString('utf8')) as Manifest;
  const root = manifest(REPO);
  if (packed.private) problems.push('is private');
  if (packed.license !== 'MIT') problems.push(`license is ${packed.license}`);
  if (packed.repository?.directory !== tarball.folder) problems.push(`repository.directory is ${packed.repository?.directory}, not ${tarball.folder}`);
  if (packed.engines?.node !== root.engines?.node) problems.push(`engines.node is ${packed.engines?.node}, not the root's ${root.engines?.node}`);
  const entryPoints = [packed.main, ...Object.values(packed.bin ?? {}), ...Object.values(packed.exports ?? {}).flatMap((target) => [target.types, target.default])].filter((file): file is string => typeof file === 'string');
  for (const entry of entryPoints) if (!files.has(entry.replace(/^\.\//, ''))) problems.push(`entry point ${entry} is not in the tarball`);
  for (const field of ['dependencies', 'optionalDependencies', 'peerDependencies'] as const) {
    for (const [dep, spec] of Object.entries(packed[field] ?? {})) if (/^(workspace|file|link|portal):/.test(spec)) problems.push(`${field}.${dep} is ${spec}`);
  }
  const bench = new Set(benchOnlyPackages());
  for (const dep of Object.keys({ ...packed.dependencies, ...packed.optionalDependencies, ...packed.peerDependencies })) if (bench.has(dep)) problems.push(`depends on the benchmark peer ${dep}`);
  const machinePaths = [...new Set([REPO, fileURLToPath(new URL('../..', import.meta.url)).replace(/\/$/, ''), homedir(), scratch])].filter((path) => path.length > 1);
  for (const [name, content] of files) {
    const text = content.toString('latin1');
    for (const path of machinePaths) if (text.includes(`${path}/`)) problems.push(`${name} holds the absolute path ${path}/`);
  }
  return problems;
}

// ---------------------------------------------------------------------------------------------
// Installing and running

/** The environment for npm and the installed gateway under the node at `node`: its bin first on PATH, its own headers for node-gyp. */
export function nodeEnv(node: string, version: string): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = {};
  for (const [key, value] of Object.entries(process.env)) {
    // What a parent npm or pnpm run sets for its own project must not steer this install.
    if (/^npm_(package|lifecycle)_/.test(key) || /^npm_config_(prefix|local_prefix|global_prefix|nodedir)$/i.test(key)) continue;
    env[key] = value;
  }
  env['PATH'] = [dirname(node), process.env['PATH'] ?? ''].join(delimiter);
  const nodedir = matchingNodedir({ execPath: node, version });
  if (nodedir) env['npm_config_nodedir'] = nodedir;
  return env;
}

/** npm's CLI run by `node` when npm is a JavaScript file on PATH (as everywhere but Windows), else npm itself. */
function npmCommand(node: string): string[] {
  for (const dir of (process.env['PATH'] ?? '').split(delimiter)) {
    const candidate = join(dir, 'npm');
    if (!existsSync(candidate)) continue;
    const real = realpathSync(candidate);
    return real.endsWith('.js') ? [node, real] : [candidate];
  }
  return ['npm'];
}

export interface Install {
  readonly prefix: string;
  readonly ms: number;
}

/** `npm install --prefix <empty prefix> <every tarball>` with the node at `node`. */
export async function installTarballs(options: { tarballs: readonly Tarball[]; prefix: string; node: string; version: string; label: string }): Promise<Install> {
  mkdirSync(options.prefix, { recursive: true });
  if (readdirSync(options.prefix).length > 0) throw new Error(`${options.prefix} is not empty`);
  const env = nodeEnv(options.node, options.version);
  const [command, ...args] = npmCommand(options.node);
  progress(options.label, `npm install of ${options.tarballs.length} tarballs with Node v${options.version} (node-gyp headers: ${env['npm_config_nodedir'] ?? 'looked up by node-gyp'}); better-sqlite3 may compile from source, a minute or more`);
  const result = await runTracked(command!, [...args, 'install', '--prefix', options.prefix, '--no-audit', '--no-fund', '--no-update-notifier', ...options.tarballs.map((t) => t.file)], {
    cwd: options.prefix,
    env,
    timeoutMs: 15 * 60_000,
    label: options.label,
    what: 'npm install',
  });
  if (result.code !== 0) throw new Error(`npm install failed (exit ${result.code}) after ${seconds(result.ms)}:\n${result.output.slice(-4000)}`);
  progress(options.label, `npm install done in ${seconds(result.ms)}`);
  return { prefix: options.prefix, ms: result.ms };
}

/** The package names npm installed into a prefix (from its package-lock.json). */
export function installedPackages(prefix: string): Set<string> {
  const lock = JSON.parse(readFileSync(join(prefix, 'package-lock.json'), 'utf8')) as { packages: Record<string, unknown> };
  return new Set(Object.keys(lock.packages).filter(Boolean).map((key) => key.slice(key.lastIndexOf('node_modules/') + 'node_modules/'.length)));
}

export interface InstalledGateway {
  readonly client: Client;
  readonly pid: number;
  stderr(): string;
  /** Closes the client, waits for the gateway's whole process tree to exit and kills what is left; returns the pids that had to be killed. */
  close(): Promise<number[]>;
}

/** Runs `<prefix>/node_modules/.bin/bulkhead start --root <root>` with the node at `node` (first on PATH, as a user's shell finds it) and connects. */
export async function startInstalledGateway(options: { prefix: string; node: string; version: string; root: string }): Promise<InstalledGateway> {
  const env = nodeEnv(options.node, options.version);
  const transport = new StdioClientTransport({
    command: join(options.prefix, 'node_modules', '.bin', 'bulkhead'),
    args: ['start', '--root', options.root],
    cwd: options.root,
    env: { PATH: env['PATH']!, HOME: process.env['HOME'] ?? '' },
    stderr: 'pipe',
  });
  let stderr = '';
  transport.stderr?.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
  const client = new Client({ name: 'bulkhead-packaging-test', version: '1.0.0' });
  let closed: Promise<number[]> | undefined;
  const close = (pid: number | undefined) => async (): Promise<number[]> => {
    const tree = pid === undefined ? [] : [pid, ...descendants(pid)];
    await client.close().catch(() => undefined);
    const left = await waitGone(tree, 10_000);
    for (const survivor of left) {
      try {
        process.kill(survivor, 'SIGKILL');
      } catch {
        // gone meanwhile
      }
    }
    return left;
  };
  try {
    await client.connect(transport);
  } catch (error) {
    await close(transport.pid ?? undefined)();
    throw new Error(`the installed bulkhead did not start: ${String(error)}; stderr: ${stderr}`);
  }
  const gateway: InstalledGateway = {
    client,
    pid: transport.pid!,
    stderr: () => stderr,
    close: () => {
      closed ??= close(transport.pid ?? undefined)().finally(() => gateways.delete(gateway));
      return closed;
    },
  };
  gateways.add(gateway);
  return gateway;
}

/** Runs the installed `bulkhead doctor --root <root>` with the node at `node`; its output, whatever its exit code. */
export async function installedDoctor(options: { prefix: string; node: string; version: string; root: string; label: string }): Promise<string> {
  const env = nodeEnv(options.node, options.version);
  const result = await runTracked(options.node, [join(options.prefix, 'node_modules', '@bulkhead', 'gateway', 'dist', 'cli.js'), 'doctor', '--root', options.root], {
    cwd: options.root,
    env: { PATH: env['PATH']!, HOME: process.env['HOME'] ?? '' },
    timeoutMs: 60_000,
    label: options.label,
    what: 'bulkhead doctor',
  });
  return result.output;
}

// ---------------------------------------------------------------------------------------------
// Node 22 from the registry

export type Node22 = { readonly node: string; readonly version: string; readonly ms: number } | { readonly skip: string };

/**
 * A Node 22 binary: the running node when it is 22, else the npm package node-<platform>-<arch>@22
 * installed into `dir` (its bin/node, with its headers in include/node), or already there.
 */
export async function node22(dir: string, label: string): Promise<Node22> {
  if (process.versions.node.startsWith('22.')) return { node: process.execPath, version: process.versions.node, ms: 0 };
  const platform = { linux: 'linux', darwin: 'darwin' }[process.platform as string];
  if (!platform) return { skip: `no node-<platform>-<arch> package is used for ${process.platform}` };
  const pkg = `node-${platform}-${process.arch}`;
  const node = join(dir, 'node_modules', pkg, 'bin', 'node');
  // A folder kept between runs (a cache) is fetched into once.
  const kept = existsSync(node) ? execFileSync(node, ['-p', 'process.versions.node'], { encoding: 'utf8' }).trim() : '';
  if (kept.startsWith('22.')) return { node, version: kept, ms: 0 };
  mkdirSync(dir, { recursive: true });
  const [command, ...args] = npmCommand(process.execPath);
  progress(label, `fetching Node 22 from the registry: npm install ${pkg}@22`);
  let result: RunResult;
  try {
    result = await runTracked(command!, [...args, 'install', '--prefix', dir, '--no-audit', '--no-fund', '--no-update-notifier', `${pkg}@22`], { cwd: dir, timeoutMs: 5 * 60_000, label, what: `npm install ${pkg}@22` });
  } catch (error) {
    return { skip: `npm could not run to fetch ${pkg}@22: ${String(error)}` };
  }
  if (result.code !== 0) return { skip: `npm install ${pkg}@22 failed (exit ${result.code}): ${result.output.trim().split('\n').slice(-3).join(' / ')}` };
  if (!existsSync(node)) return { skip: `${pkg}@22 has no bin/node` };
  const version = execFileSync(node, ['-p', 'process.versions.node'], { encoding: 'utf8' }).trim();
  progress(label, `Node v${version} fetched in ${seconds(result.ms)}`);
  return { node, version, ms: result.ms };
}

/** A fresh temporary folder, removed by the returned function. */
export function scratchDir(prefix: string): { path: string; remove(): void } {
  const path = realpathSync(mkdtempSync(join(tmpdir(), prefix)));
  return { path, remove: () => rmSync(path, { recursive: true, force: true }) };
}
