// Call loops for the gateway overhead bench: sequential calls, and a fixed number of calls kept
// N in flight at once. Every reply is checked; latencies are client-side round trips in ms.
import { performance } from 'node:perf_hooks';

/** Nearest-rank percentile of an ascending array. */
export function percentile(sorted, p) {
  if (sorted.length === 0) return undefined;
  const rank = Math.ceil((p / 100) * sorted.length);
  return sorted[Math.min(sorted.length, Math.max(1, rank)) - 1];
}

export function median(values) {
  if (values.length === 0) return undefined;
  const sorted = [...values].sort((a, b) => a - b);
  const mid = Math.floor(sorted.length / 2);
  return sorted.length % 2 ? sorted[mid] : (sorted[mid - 1] + sorted[mid]) / 2;
}

async function timedCall(request) {
  const started = performance.now();
  const text = await request.send();
  const ms = performance.now() - started;
  if (text !== request.expect) throw new Error(`${request.label}: unexpected reply ${JSON.stringify(text.slice(0, 200))}, expected ${JSON.stringify(request.expect.slice(0, 200))}`);
  return ms;
}

/** `count` calls with at most `concurrency` in flight; returns each call's latency and the wall time. */
export async function runBatch(request, count, concurrency) {
  const latencies = new Array(count);
  let next = 0;
  const started = performance.now();
  const worker = async () => {
    while (next < count) {
      const i = next++;
      latencies[i] = await timedCall(request);
    }
  };
  await Promise.all(Array.from({ length: Math.min(concurrency, count) }, worker));
  const wallMs = performance.now() - started;
  return { latencies, wallMs, callsPerSecond: (count * 1000) / wallMs };
}

/** Pools the rounds of one case: percentiles over every call, throughput as the median round's. */
export function summarize(rounds) {
  const all = rounds.flatMap((round) => round.latencies).sort((a, b) => a - b);
  const rates = rounds.map((round) => round.callsPerSecond);
  return {
    calls: all.length,
    rounds: rounds.length,
    callsPerSecond: median(rates),
    callsPerSecondByRound: rates.map((rate) => Math.round(rate)),
    p50Ms: percentile(all, 50),
    p99Ms: percentile(all, 99),
    meanMs: all.reduce((sum, ms) => sum + ms, 0) / all.length,
  };
}
