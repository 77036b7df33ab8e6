// A bench worker process that says "ready", waits for "go", and reports once over IPC.
import { fork } from 'node:child_process';
import { track, untrack } from './processes.mjs';

/**
 * Forks `script args`. ready resolves on its "ready"; report resolves with `pick(message)` for the
 * first message pick accepts (not undefined), and rejects on {error} or an exit before reporting.
 * A worker that fails before "ready" resolves ready too, so the run does not wait for it.
 */
export function forkWorker(script, args, label, pick = (message) => message) {
  const child = fork(script, args, { stdio: ['ignore', 'inherit', 'inherit', 'ipc'] });
  track(child.pid);
  const exited = new Promise((resolve) => child.once('exit', resolve));
  exited.then(() => untrack(child.pid));
  let readyResolve;
  const ready = new Promise((resolve, reject) => {
    readyResolve = resolve;
    child.once('error', reject);
  });
  const report = new Promise((resolve, reject) => {
    child.on('message', (message) => {
      if (message === 'ready') return readyResolve();
      if (message?.error) return reject(new Error(`${label}: ${message.error}`));
      const picked = pick(message);
      if (picked !== undefined) resolve(picked);
    });
    child.once('exit', (code) => reject(new Error(`${label} exited with ${code} before reporting`)));
  });
  report.catch(() => readyResolve());
  return { child, ready, report, exited };
}
