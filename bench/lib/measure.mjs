// Timing loops. A measurement is { median, times, peakRssKb, error?, detail?, note? } in ms/KiB.
import { spawn, spawnSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import { performance } from 'node:perf_hooks';
import { CallError } from './mcp.mjs';
import { track, untrack } from './processes.mjs';

/** After one call this slow a case stops repeating: the point is made and the run stays short. */
export const SLOW_MS = 10_000;
const TIME_BIN = '/usr/bin/time';

function median(values) {
  if (values.length === 0) return undefined;
  const sorted = [...values].sort((a, b) => a - b);
  const mid = Math.floor(sorted.length / 2);
  return sorted.length % 2 ? sorted[mid] : (sorted[mid - 1] + sorted[mid]) / 2;
}

/** Records results that fail their check, and shouts about each one as it happens. */
export class Checker {
  constructor() {
    this.mismatches = [];
  }
  verify(label, { ok, detail }) {
    if (!ok) {
      this.mismatches.push(`${label}: ${detail}`);
      process.stderr.write(`\n  ✗ MISMATCH ${label}: ${detail}\n`);
    }
    return detail;
  }
}

/**
 * Calls `count` times on one server, stopping at the first error or after a call slower
 * than SLOW_MS.
 */
async function callRepeatedly(server, request, count, verify) {
  const times = [];
  let detail;
  for (let i = 0; i < count; i++) {
    try {
      const { ms, text } = await server.call(request.name, request.args);
      detail = verify(text);
      times.push(ms);
      if (ms > SLOW_MS) break;
    } catch (error) {
      if (!(error instanceof CallError)) throw error;
      return { times, detail, error: `${error.message} after ${formatMs(error.ms)}`, errorMs: error.ms };
    }
  }
  return { times, detail };
}

function summarize({ times, detail, error, errorMs }, peak, note) {
  return { median: median(times), times, peakRssKb: peak, ...(error ? { error, errorMs } : {}), ...(detail ? { detail } : {}), ...(note ? { note } : {}) };
}

/** One server: a warmup call, then `runs` timed calls. */
export async function measureWarm(start, request, runs, verify) {
  const server = await start();
  try {
    const outcome = await callRepeatedly(server, request, runs + 1, verify);
    const slow = outcome.times.length === 1 && !outcome.error;
    const times = slow ? outcome.times : outcome.times.slice(1);
    return summarize({ ...outcome, times }, server.peakRssKb(), slow ? `1 call (over ${SLOW_MS / 1000} s)` : undefined);
  } finally {
    await server.close();
  }
}

/** A fresh server for each of `runs` calls: what the first call after start costs. */
export async function measureCold(start, request, runs, verify) {
  const times = [];
  let peak = 0;
  let detail;
  for (let i = 0; i < runs; i++) {
    const server = await start();
    try {
      const outcome = await callRepeatedly(server, request, 1, verify);
      detail = outcome.detail ?? detail;
      if (outcome.error) return summarize({ ...outcome, times }, Math.max(peak, server.peakRssKb()));
      times.push(...outcome.times);
    } finally {
      peak = Math.max(peak, server.peakRssKb());
      await server.close();
    }
  }
  return summarize({ times, detail }, peak);
}

function runOnce(command, args, cwd) {
  return new Promise((resolve, reject) => {
    const started = performance.now();
    const child = spawn(command, args, { cwd, stdio: ['ignore', 'pipe', 'pipe'], env: { PATH: process.env.PATH ?? '' } });
    track(child.pid);
    const out = [];
    child.stdout.on('data', (chunk) => out.push(chunk));
    child.stderr.resume();
    child.on('error', reject);
    child.on('close', (code) => {
      untrack(child.pid);
      resolve({ ms: performance.now() - started, code, text: Buffer.concat(out).toString('utf8') });
    });
  });
}

/** Max RSS of one extra, untimed run, so /usr/bin/time stays out of the timed runs. */
function processPeakRssKb(command, args, cwd) {
  if (!existsSync(TIME_BIN)) return undefined;
  const result = spawnSync(TIME_BIN, ['-f', '%M', command, ...args], { cwd, encoding: 'utf8', maxBuffer: 1024 * 1024 * 1024, env: { PATH: process.env.PATH ?? '' } });
  const kb = Number(result.stderr.trim().split('\n').at(-1));
  return Number.isFinite(kb) ? kb : undefined;
}

/** A whole process run (spawn to exit, output read through a pipe): warmup, then `runs` runs. */
export async function measureProcess(command, args, cwd, runs, verify) {
  const times = [];
  let detail;
  for (let i = 0; i <= runs; i++) {
    const { ms, code, text } = await runOnce(command, args, cwd);
    if (code !== 0) return summarize({ times, error: `exit code ${code}` });
    detail = verify(text);
    if (i > 0) times.push(ms);
  }
  return summarize({ times, detail }, processPeakRssKb(command, args, cwd));
}

export function formatMs(ms) {
  if (ms === undefined) return '—';
  if (ms < 10) return `${ms.toFixed(2)} ms`;
  if (ms < 1000) return `${ms.toFixed(1)} ms`;
  return `${(ms / 1000).toFixed(2)} s`;
}
