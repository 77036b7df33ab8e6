// Side-by-side timing for the git bench: every side (an MCP server, or the raw git CLI) gets one
// warmup call, then the timed rounds run each side once per round in an order that rotates from
// round to round, so drift in the machine (page cache, CPU frequency, other load) spreads over
// all sides instead of landing on whichever runs last.
import { spawn, spawnSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import { performance } from 'node:perf_hooks';
import { CallError } from './mcp.mjs';
import { formatMs } from './measure.mjs';
import { track, untrack } from './processes.mjs';

const TIME_BIN = '/usr/bin/time';
/** After one call this slow a side stops repeating (a whole-file blame pages through three calls of seconds each). */
export const SLOW_MS = 30_000;

/** Nearest-rank percentile (p = 50 for the median of an odd count, 90 for p90). */
export function percentile(values, p) {
  if (values.length === 0) return undefined;
  const sorted = [...values].sort((a, b) => a - b);
  if (p === 50 && sorted.length % 2 === 0) return (sorted[sorted.length / 2 - 1] + sorted[sorted.length / 2]) / 2;
  return sorted[Math.min(sorted.length - 1, Math.ceil((p / 100) * sorted.length) - 1)];
}

/** The environment raw git runs in: no system or global config, as bulkhead runs it. */
export function rawGitEnv() {
  return { PATH: process.env.PATH ?? '', GIT_CONFIG_NOSYSTEM: '1', GIT_CONFIG_GLOBAL: '/dev/null', GIT_TERMINAL_PROMPT: '0', LC_ALL: 'C' };
}

function runGit(args, cwd) {
  return new Promise((resolve, reject) => {
    const started = performance.now();
    const child = spawn('git', args, { cwd, stdio: ['ignore', 'pipe', 'pipe'], env: rawGitEnv() });
    track(child.pid);
    const out = [];
    let err = '';
    child.stdout.on('data', (chunk) => out.push(chunk));
    child.stderr.on('data', (chunk) => {
      err = (err + chunk).slice(-500);
    });
    child.on('error', reject);
    child.on('close', (code) => {
      untrack(child.pid);
      const ms = performance.now() - started;
      if (code !== 0) reject(new CallError(`error: git exited with ${code}: ${err.trim().split('\n')[0]}`, ms));
      else resolve({ ms, text: Buffer.concat(out).toString('utf8') });
    });
  });
}

/** Max RSS of one extra, untimed run, so /usr/bin/time stays out of the timed runs. */
function gitPeakRssKb(args, cwd) {
  if (!existsSync(TIME_BIN)) return undefined;
  const result = spawnSync(TIME_BIN, ['-f', '%M', 'git', ...args], { cwd, encoding: 'utf8', maxBuffer: 256 * 1024 * 1024, env: rawGitEnv() });
  const kb = Number(result.stderr.trim().split('\n').at(-1));
  return Number.isFinite(kb) ? kb : undefined;
}

/** A side that runs `git args` in `cwd` per call: spawn to exit, all of stdout read. */
export function gitSide(args, cwd) {
  return {
    async open() {
      return {
        call: () => runGit(args, cwd),
        peakRssKb: () => gitPeakRssKb(args, cwd),
        close: async () => {},
      };
    },
  };
}

/** A side that calls tool `name` with `args` on a server from `start()` (see mcp.mjs). */
export function serverSide(start, name, args) {
  return {
    async open() {
      const server = await start();
      return {
        call: () => server.call(name, args),
        peakRssKb: () => server.peakRssKb(),
        close: () => server.close(),
      };
    },
  };
}

/**
 * Like serverSide, but one "call" follows the server's paging until `next(text)` gives no more
 * arguments, as a client reading the whole answer would; the time is the sum of the calls and
 * the pages' texts are joined with a form feed.
 */
export function pagedServerSide(start, name, args, next) {
  return {
    async open() {
      const server = await start();
      return {
        async call() {
          let ms = 0;
          const texts = [];
          for (let page = args; page !== undefined; page = next(texts.at(-1))) {
            const reply = await server.call(name, page);
            ms += reply.ms;
            texts.push(reply.text);
          }
          this.pages = texts.length;
          return { ms, text: texts.join('\f') };
        },
        peakRssKb: () => server.peakRssKb(),
        close: () => server.close(),
      };
    },
  };
}

/**
 * Runs one case. `sides` maps a key to { open, verify(text) → { ok, detail } }; returns, per key,
 * { median, p90, times, peakRssKb, detail, wrong?, error?, errorMs?, note? }. A side stops at its
 * first error or after one call slower than SLOW_MS. Every reply, warmup included, is verified;
 * the first failed check is kept in `wrong`.
 */
export async function measureSides(sides, rounds, onCheck) {
  const keys = Object.keys(sides);
  const state = Object.fromEntries(keys.map((key) => [key, { times: [], detail: undefined, wrong: undefined, error: undefined, errorMs: undefined, stopped: false, runner: undefined }]));
  const callOnce = async (key, timed) => {
    const side = state[key];
    if (side.stopped) return;
    try {
      const { ms, text } = await side.runner.call();
      const check = sides[key].verify(text);
      onCheck?.(key, check);
      side.detail = check.detail;
      if (!check.ok && side.wrong === undefined) side.wrong = check.detail;
      if (timed || ms > SLOW_MS) side.times.push(ms);
      if (ms > SLOW_MS) {
        side.stopped = true;
        side.note = `1 call (over ${SLOW_MS / 1000} s)`;
      }
    } catch (error) {
      if (!(error instanceof CallError)) throw error;
      side.error = `${error.message} after ${formatMs(error.ms)}`;
      side.errorMs = error.ms;
      side.stopped = true;
    }
  };
  try {
    for (const key of keys) state[key].runner = await sides[key].open();
    for (const key of keys) await callOnce(key, false);
    for (let round = 0; round < rounds; round++) {
      for (let i = 0; i < keys.length; i++) await callOnce(keys[(round + i) % keys.length], true);
    }
    const results = {};
    for (const key of keys) {
      const side = state[key];
      results[key] = {
        median: side.error ? undefined : percentile(side.times, 50),
        p90: side.error ? undefined : percentile(side.times, 90),
        times: side.times,
        peakRssKb: side.runner.peakRssKb(),
        ...(side.detail ? { detail: side.detail } : {}),
        ...(side.wrong ? { wrong: side.wrong } : {}),
        ...(side.error ? { error: side.error, errorMs: side.errorMs } : {}),
        ...(side.note ? { note: side.note } : {}),
        ...(side.runner.pages ? { pages: side.runner.pages } : {}),
      };
    }
    return results;
  } finally {
    for (const key of keys) await state[key].runner?.close();
  }
}
