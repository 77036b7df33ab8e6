import { spawn } from 'node:child_process';
import { CallAuditor, ConfigError, errorMessage, parseToolPattern, ToolError, type CallState, type Middleware, type ToolPattern } from '@bulkhead/core';
import type { HookEntry, HooksConfig } from './config/hooks.js';
import { killGroup, trackGroup, untrackGroup } from './process-groups.js';

const MAX_HOOK_OUTPUT = 1024 * 1024;

interface HookRun {
  readonly code: number | null;
  readonly stdout: string;
  readonly stderr: string;
  readonly timedOut: boolean;
}

/** Runs one hook command with the event on stdin; its whole process group ends at the timeout. */
function runHook(hook: HookEntry, cwd: string, event: unknown, signal: AbortSignal): Promise<HookRun> {
  return new Promise((resolve, reject) => {
    const child = spawn('/bin/sh', ['-c', hook.command], { cwd, stdio: ['pipe', 'pipe', 'pipe'], detached: true, env: { PATH: process.env['PATH'] ?? '', HOME: process.env['HOME'] ?? '' } });
    if (child.pid !== undefined) trackGroup(child.pid);
    let stdout = '';
    let stderr = '';
    let timedOut = false;
    const stop = () => {
      if (child.pid !== undefined) killGroup(child.pid);
    };
    const timer = setTimeout(() => {
      timedOut = true;
      stop();
    }, hook.timeout_ms);
    signal.addEventListener('abort', stop, { once: true });
    child.stdout.on('data', (chunk: Buffer) => {
      if (stdout.length < MAX_HOOK_OUTPUT) stdout += chunk.toString();
    });
    child.stderr.on('data', (chunk: Buffer) => {
      if (stderr.length < MAX_HOOK_OUTPUT) stderr += chunk.toString();
    });
    const settle = () => {
      clearTimeout(timer);
      signal.removeEventListener('abort', stop);
      if (child.pid !== undefined) untrackGroup(child.pid);
    };
    child.on('error', (error) => {
      settle();
      reject(error);
    });
    child.on('close', (code) => {
      settle();
      resolve({ code, stdout, stderr, timedOut });
    });
    child.stdin.on('error', () => undefined);
    child.stdin.end(JSON.stringify(event));
  });
}

interface CompiledHook {
  readonly entry: HookEntry;
  readonly pattern: ToolPattern;
}

/**
 * pre_tool and post_tool hooks from hooks.yaml as middlewares. A pre_tool hook may block (exit 2,
 * or a timeout: it fails closed) or replace the arguments, which are then validated again; every
 * hook run is audited.
 */
export class Hooks {
  private readonly pre: readonly CompiledHook[];
  private readonly post: readonly CompiledHook[];

  constructor(
    config: HooksConfig,
    private readonly cwd: string,
    private readonly auditor: CallAuditor,
  ) {
    const compile = (entry: HookEntry) => {
      const pattern = parseToolPattern(entry.matcher);
      if (pattern.argument) throw new ConfigError(`hooks.yaml: a matcher names tools, not arguments (\`${entry.matcher}\`); the hook gets the arguments on stdin`);
      return { entry, pattern };
    };
    this.pre = config.pre_tool.map(compile);
    this.post = config.post_tool.map(compile);
  }

  private static matching(hooks: readonly CompiledHook[], qualified: string): CompiledHook[] {
    return hooks.filter((hook) => hook.pattern.matchesName(qualified));
  }

  private audit(event: string, hook: HookEntry, state: CallState, started: number, outcome: 'ok' | 'error' | 'denied', error?: string): void {
    this.auditor.record({
      tool: `hook:${event}`,
      caller: state.caller,
      args: { matcher: hook.matcher, command: hook.command, call: state.qualifiedName },
      decision: event,
      outcome,
      ...(error ? { error } : {}),
      durationMs: performance.now() - started,
    });
  }

  /**
   * The pre_tool hooks of one tool, run before the permission gate; `revalidate` checks arguments
   * a hook replaced. Undefined when no hook matches the tool: the chain then has no step for it.
   */
  preToolMiddleware(qualified: string, revalidate: (state: CallState) => Record<string, unknown>): Middleware<CallState> | undefined {
    const hooks = Hooks.matching(this.pre, qualified);
    if (hooks.length === 0) return undefined;
    return async (state, next) => {
      for (const hook of hooks) {
        const started = performance.now();
        const run = await runHook(hook.entry, this.cwd, { event: 'pre_tool', tool: state.qualifiedName, arguments: state.args, caller: state.caller }, state.signal);
        if (run.timedOut) {
          this.audit('pre_tool', hook.entry, state, started, 'denied', 'timed out');
          throw new ToolError(`Blocked by a pre_tool hook (${hook.entry.matcher}): it did not answer within ${hook.entry.timeout_ms} ms. Nothing was run.`, 'denied');
        }
        if (run.code === 2) {
          const reason = run.stderr.trim() || 'no reason given';
          this.audit('pre_tool', hook.entry, state, started, 'denied', reason);
          state.decision = 'hook:blocked';
          throw new ToolError(`Blocked by a pre_tool hook (${hook.entry.matcher}): ${reason}. Nothing was run.`, 'denied');
        }
        const replacement = parseReplacement(run.stdout);
        if (replacement) {
          state.rawArgs = replacement;
          state.args = revalidate(state);
        }
        this.audit('pre_tool', hook.entry, state, started, run.code === 0 ? 'ok' : 'error', run.code === 0 ? (replacement ? 'replaced the arguments' : undefined) : `exit ${run.code}: ${run.stderr.trim()}`);
      }
      return next();
    };
  }

  /** The post_tool hooks of one tool; undefined when none matches it. */
  postToolMiddleware(qualified: string): Middleware<CallState> | undefined {
    const hooks = Hooks.matching(this.post, qualified);
    if (hooks.length === 0) return undefined;
    return async (state, next) => {
      await next();
      for (const hook of hooks) {
        const started = performance.now();
        // The call already happened: a hook that cannot run is recorded, never turned into a failed call.
        const run = await runHook(hook.entry, this.cwd, { event: 'post_tool', tool: state.qualifiedName, arguments: state.args, result: state.result, caller: state.caller }, state.signal).catch(
          (error: unknown) => ({ code: null, stdout: '', stderr: errorMessage(error), timedOut: false }),
        );
        this.audit('post_tool', hook.entry, state, started, run.code === 0 && !run.timedOut ? 'ok' : 'error', run.timedOut ? 'timed out' : run.code === 0 ? undefined : `exit ${run.code}: ${run.stderr.trim()}`);
      }
    };
  }
}

function parseReplacement(stdout: string): Record<string, unknown> | undefined {
  const trimmed = stdout.trim();
  if (!trimmed.startsWith('{')) return undefined;
  try {
    const parsed = JSON.parse(trimmed) as { arguments?: unknown };
    return parsed.arguments && typeof parsed.arguments === 'object' && !Array.isArray(parsed.arguments) ? (parsed.arguments as Record<string, unknown>) : undefined;
  } catch {
    return undefined;
  }
}

