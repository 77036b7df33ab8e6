import { startCommand } from '../src/run/start.js';
import type { RunningCommand, SandboxSpec } from '../src/run/types.js';

/** Starts `command` in cwd contained by spec, collecting its output. */
export function startContained(command: string, spec: SandboxSpec, cwd: string, env: Record<string, string> = {}): { running: RunningCommand; output: () => string } {
  const chunks: Buffer[] = [];
  const running = startCommand({
    command,
    cwd,
    timeoutMs: 20_000,
    env: { PATH: process.env['PATH'] ?? '/usr/bin:/bin', HOME: cwd, LANG: 'C', ...env },
    sandbox: spec,
    maxProcesses: 64,
    signal: new AbortController().signal,
    killGraceMs: 300,
    onOutput: (chunk) => chunks.push(chunk),
  });
  return { running, output: () => Buffer.concat(chunks).toString('utf8') };
}

/** Runs `command` to its end; its exit code and output. */
export async function runContained(command: string, spec: SandboxSpec, cwd: string, env: Record<string, string> = {}): Promise<{ exitCode: number | null; output: string }> {
  const { running, output } = startContained(command, spec, cwd, env);
  const outcome = await running.done;
  return { exitCode: outcome.exitCode, output: output() };
}
