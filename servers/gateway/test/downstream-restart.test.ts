// The restart budget counts how long each run stayed up: a run that stayed up `stableMs` earns a
// fresh budget, a start that fails never does. Real child processes (test/fixtures/crashy-server.mjs),
// a small RestartPolicy so that a budget is used up in seconds.
import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { afterEach, describe, expect, it } from 'vitest';
import { tempWorkspace, type TempWorkspace } from '@bulkhead/core/testing';
import { Downstream, type RestartPolicy } from '../src/downstream/downstream.js';

const CRASHY = fileURLToPath(new URL('../../../test/fixtures/crashy-server.mjs', import.meta.url));
const POLICY: RestartPolicy = { initialDelayMs: 50, maxDelayMs: 200, budget: 3, stableMs: 1000 };

let ws: TempWorkspace | undefined;
let downstream: Downstream | undefined;

afterEach(async () => {
  await downstream?.stop();
  downstream = undefined;
  ws?.cleanup();
  ws = undefined;
});

/** Starts the fixture in `uptimes` mode under `policy`, and records every restart and give-up line. */
function crashy(uptimes: string, policy: RestartPolicy = POLICY): { runs: () => number; reports: string[] } {
  ws = tempWorkspace({ 'runs.txt': '' });
  const runsFile = ws.path('runs.txt');
  const spec = { kind: 'stdio' as const, namespace: 'crashy', trust: new Set<never>(), child: { command: process.execPath, args: [CRASHY, 'uptimes', runsFile, uptimes], env: { PATH: process.env['PATH'] ?? '' } } };
  downstream = new Downstream(spec, policy);
  const reports: string[] = [];
  const current = downstream;
  current.onStateChanged = () => {
    if (current.state === 'ready') reports.push('up');
    else if (current.state === 'restarting' || current.state === 'failed') reports.push(current.unavailableReason!);
  };
  void current.start();
  return { runs: () => readFileSync(runsFile, 'utf8').trim().split('\n').filter(Boolean).length, reports };
}

async function until(condition: () => boolean, what: string, ms = 30_000): Promise<void> {
  const end = Date.now() + ms;
  while (!condition()) {
    if (Date.now() > end) throw new Error(`gave up waiting for ${what} (state ${downstream?.state}: ${downstream?.unavailableReason ?? "no reason"})`);
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}

describe('the restart budget', () => {
  it('gives up on a server that stayed up once and then crashes at every start, after the budget', async () => {
    const { runs, reports } = crashy('1500');
    await until(() => downstream!.state === 'failed', 'the server to be given up on');
    expect(runs()).toBe(4);
    expect(reports).toEqual([
      'up',
      'crashy stopped (exited with code 1); its last stderr lines: crashy: run 1 exiting after 1500 ms; restarting in 1 s (restart 1 of at most 3)',
      'crashy did not start: it exited with code 3 (stderr: crashy: run 2 refuses to start) (restart 2 of at most 3, next attempt in 1 s)',
      'crashy did not start: it exited with code 3 (stderr: crashy: run 3 refuses to start) (restart 3 of at most 3, next attempt in 1 s)',
      'crashy is down and was given up on after 3 restarts (last error: it exited with code 3 (stderr: crashy: run 4 refuses to start))',
    ]);
    // Given up means no more starts, however long one waits.
    await new Promise((resolve) => setTimeout(resolve, 1500));
    expect(runs()).toBe(4);
  });

  it('gives up on a server whose every run is shorter than stableMs, after the budget', async () => {
    const { runs, reports } = crashy('100,100,100,100,100,100');
    await until(() => downstream!.state === 'failed', 'the server to be given up on');
    expect(runs()).toBe(4);
    expect(reports.filter((line) => line.startsWith('crashy stopped')).map((line) => /\(restart (\d) of at most 3\)$/.exec(line)?.[1])).toEqual(['1', '2', '3']);
    expect(reports.at(-1)).toBe('crashy is down and was given up on after 3 restarts (last error: stopped (exited with code 1); its last stderr lines: crashy: run 4 exiting after 100 ms)');
  });

  it('gives a fresh budget to a run that stayed up stableMs, and counts on from there after short runs', async () => {
    // Budget 2: a long run resets the count, two short runs use it up, the third is one too many.
    const { runs, reports } = crashy('1200,100,1200,100,100,100', { ...POLICY, budget: 2 });
    await until(() => downstream!.state === 'failed', 'the server to be given up on');
    expect(runs()).toBe(5);
    const restarts = reports.filter((line) => line.startsWith('crashy stopped')).map((line) => /\(restart (\d) of at most 2\)$/.exec(line)?.[1]);
    expect(restarts).toEqual(['1', '2', '1', '2']);
    expect(reports.filter((line) => line === 'up')).toHaveLength(5);
  });

  it('keeps restarting a server whose every run stays up stableMs, each time as restart 1', async () => {
    const { runs, reports } = crashy('1100,1100,1100,1100,1100', { ...POLICY, budget: 1 });
    await until(() => runs() >= 4 && downstream!.state === 'ready', 'the fourth run');
    expect(downstream!.state).toBe('ready');
    expect(reports.filter((line) => line.startsWith('crashy stopped')).map((line) => /\(restart (\d) of at most 1\)$/.exec(line)?.[1])).toEqual(['1', '1', '1']);
  });
});
