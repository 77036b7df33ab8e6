// The shell bench's launch breakdown (untimed by the main table): the exact process trees the
// bulkhead-shell server spawned in the profile pass (read from its trace), replayed straight from
// the bench with the server taken away, next to variants that drop one layer each, so the cost of
// each layer (the containment wrapper bash, bwrap, bwrap's network namespace) stands on its own.
import { spawn } from 'node:child_process';
import { existsSync, mkdirSync, rmdirSync, writeFileSync } from 'node:fs';
import { basename, dirname, join } from 'node:path';
import { performance } from 'node:perf_hooks';
import { track, untrack } from './processes.mjs';

const WRAPPER_NAME = 'bulkhead-contain';

/**
 * Splits a traced launch: [SHELL, ...its options, -c, SCRIPT, bulkhead-contain, limit, count,
 * ...procsFiles, ...inner] (or just inner when no wrapper was used). The wrapper's shell is kept as
 * traced (the server uses /bin/sh when it needs no RLIMIT_NPROC, bash otherwise).
 */
export function splitLaunch(file, args) {
  const at = args.indexOf(WRAPPER_NAME);
  if (at < 0) return { wrapper: undefined, inner: [file, ...args] };
  const script = args[at - 1];
  const limit = args[at + 1];
  const count = Number(args[at + 2]);
  const procsFiles = args.slice(at + 3, at + 3 + count);
  return { wrapper: { head: [file, ...args.slice(0, at - 1)], script, limit, procsFiles }, inner: args.slice(at + 3 + count) };
}

/** The wrapper shell a variant uses: as the server traced it, or bash, or dash. */
function wrapperHead(variant) {
  if (variant.wrapperShell === 'sh') return ['/bin/sh', '-c'];
  if (variant.wrapperShell === 'bash') return ['bash', '--noprofile', '--norc', '-c'];
  return variant.wrapper.head;
}

let made = 0;
const leftovers = new Set();

/** Fresh cgroups beside the server's, one per procs file, with the server's default pids.max. */
function makeCgroups(procsFiles) {
  made += 1;
  return procsFiles.map((file) => {
    const folder = join(dirname(dirname(file)), `bench-${process.pid}-${made}`);
    mkdirSync(folder);
    if (existsSync(join(folder, 'pids.max'))) writeFileSync(join(folder, 'pids.max'), '256');
    return folder;
  });
}

function removeCgroups(folders) {
  for (const folder of [...leftovers, ...folders]) {
    try {
      rmdirSync(folder);
      leftovers.delete(folder);
    } catch {
      leftovers.add(folder);
    }
  }
}

/** The argv of a variant for `command`; `folders` are the cgroups made for this run. */
function argvOf(variant, command, folders) {
  const inner = [...variant.inner.slice(0, -1), command];
  if (!variant.wrapper) return inner;
  const files = folders.map((folder) => join(folder, 'cgroup.procs'));
  return [...wrapperHead(variant), variant.wrapper.script, WRAPPER_NAME, variant.wrapper.limit, String(files.length), ...files, ...inner];
}

function runOnce(argv, cwd, env) {
  return new Promise((resolve) => {
    const started = performance.now();
    const child = spawn(argv[0], argv.slice(1), { cwd, env, stdio: ['ignore', 'pipe', 'pipe'], detached: true });
    track(child.pid);
    const out = [];
    child.stdout.on('data', (chunk) => out.push(chunk));
    child.stderr.on('data', (chunk) => out.push(chunk));
    child.on('error', (error) => resolve({ ms: performance.now() - started, error: error.message }));
    child.on('close', (code) => {
      untrack(child.pid);
      resolve({ ms: performance.now() - started, code, text: Buffer.concat(out).toString('utf8') });
    });
  });
}

/**
 * The variants to time, from the traced launches of the no-sandbox and bubblewrap servers
 * (either may be missing).
 */
export function launchVariants({ none, bubblewrap }) {
  const variants = [];
  const bash = none ?? bubblewrap;
  if (!bash) return variants;
  const bashInner = bash.wrapper ? bash.inner.slice(bash.inner.findIndex((arg) => basename(arg) === 'bash')) : bash.inner;
  variants.push({ id: 'bash', label: '`bash -c` alone', inner: bashInner });
  if (none?.wrapper) {
    variants.push({ id: 'wrapper-traced', label: `server launch, no sandbox: wrapper ${basename(none.wrapper.head[0])} (joins the cgroups) → exec \`bash -c\``, inner: none.inner, wrapper: none.wrapper });
    variants.push({ id: 'wrapper-bash', label: 'the same with bash as the wrapper', inner: none.inner, wrapper: none.wrapper, wrapperShell: 'bash' });
  }
  if (bubblewrap) {
    const unshare = bubblewrap.inner.indexOf('--unshare-all');
    const sharedNet = [...bubblewrap.inner.slice(0, unshare + 1), '--share-net', ...bubblewrap.inner.slice(unshare + 1)];
    variants.push({ id: 'bwrap', label: 'bwrap (the server\'s arguments) → `bash -c`, no wrapper', inner: bubblewrap.inner });
    variants.push({ id: 'bwrap-share-net', label: 'the same with `--share-net` (no new network namespace)', inner: sharedNet });
    if (bubblewrap.wrapper) {
      variants.push({ id: 'wrapper-bwrap', label: `server launch, bubblewrap: wrapper ${basename(bubblewrap.wrapper.head[0])} → exec bwrap → \`bash -c\``, inner: bubblewrap.inner, wrapper: bubblewrap.wrapper });
      variants.push({ id: 'wrapper-bash-bwrap', label: 'the same with bash as the wrapper', inner: bubblewrap.inner, wrapper: bubblewrap.wrapper, wrapperShell: 'bash' });
    }
  }
  return variants;
}

const median = (values) => {
  const sorted = [...values].sort((a, b) => a - b);
  const mid = Math.floor(sorted.length / 2);
  return sorted.length % 2 ? sorted[mid] : (sorted[mid - 1] + sorted[mid]) / 2;
};

/**
 * `warmup` untimed then `rounds` timed runs of every variant, taking turns (rotating), each on the
 * command list round and round; every output checked with `check(spec, {text, code})`.
 */
export async function measureLaunches(variants, { commandAt, cwd, env, warmup, rounds, check }) {
  const times = Object.fromEntries(variants.map((v) => [v.id, []]));
  const wrong = Object.fromEntries(variants.map((v) => [v.id, 0]));
  for (let i = 0; i < warmup + rounds; i++) {
    const spec = commandAt(i);
    const shift = i % variants.length;
    for (const variant of [...variants.slice(shift), ...variants.slice(0, shift)]) {
      const folders = variant.wrapper ? makeCgroups(variant.wrapper.procsFiles) : [];
      try {
        const run = await runOnce(argvOf(variant, spec.command, folders), cwd, env);
        if (run.error || !check(spec, run)) wrong[variant.id] += 1;
        else if (i >= warmup) times[variant.id].push(run.ms);
      } finally {
        removeCgroups(folders);
      }
    }
  }
  removeCgroups([]);
  return variants.map((v) => ({ id: v.id, label: v.label, median: median(times[v.id]), runs: times[v.id].length, wrong: wrong[v.id] }));
}

/**
 * The cgroup join after idle: the no-sandbox launch with its cgroups and the same wrapper joining
 * none, each run preceded by `idleMs` of idle, taking turns; `rounds` runs each. Medians and p90s.
 */
export async function measureIdleJoin(none, { commandAt, cwd, env, idleMs, rounds, check }) {
  if (!none?.wrapper) return undefined;
  const variants = [
    { id: 'join', label: `wrapper ${basename(none.wrapper.head[0])} joins the cgroups → exec \`bash -c\` (the server's launch)`, inner: none.inner, wrapper: none.wrapper },
    { id: 'no-join', label: 'the same wrapper joining no cgroup', inner: none.inner, wrapper: { ...none.wrapper, procsFiles: [] } },
  ];
  const times = { join: [], 'no-join': [] };
  let wrong = 0;
  for (let i = 0; i < rounds; i++) {
    const spec = commandAt(i);
    for (const variant of i % 2 ? [...variants].reverse() : variants) {
      const folders = makeCgroups(variant.wrapper.procsFiles);
      try {
        await new Promise((resolve) => setTimeout(resolve, idleMs));
        const run = await runOnce(argvOf(variant, spec.command, folders), cwd, env);
        if (run.error || !check(spec, run)) wrong += 1;
        else times[variant.id].push(run.ms);
      } finally {
        removeCgroups(folders);
      }
    }
  }
  removeCgroups([]);
  const p90 = (values) => [...values].sort((a, b) => a - b)[Math.max(0, Math.ceil(0.9 * values.length) - 1)];
  return { idleMs, rounds, wrong, rows: variants.map((v) => ({ id: v.id, label: v.label, median: median(times[v.id]), p90: p90(times[v.id]), runs: times[v.id].length })) };
}
