import { z } from 'zod';
import { defineTool, structuredReply } from '@bulkhead/core';
import type { ShellCapabilities } from '../context.js';
import { withTaskNotifications } from '../lib/notify.js';
import { prepareCommand, timeoutFor } from '../lib/prepare.js';
import { commandLaunch, completedRecord, completedText, runToCompletion } from '../lib/run-to-completion.js';

const input = z.strictObject({
  command: z.string().min(1).max(100_000).describe('A bash command line to run in the throwaway checkout'),
  rev: z.string().min(1).max(256).default('HEAD').describe('The commit to check out (a branch, tag or commit id; default HEAD)'),
  timeout_ms: z.number().int().min(100).max(600_000).optional().describe('Stop the command after this long (default 120000, at most limits.max_timeout_ms)'),
});

const output = z.object({
  commit: z.string().describe('The commit the checkout was made at'),
  exit_code: z.number().int().nullable(),
  signal: z.string().nullable(),
  timed_out: z.boolean(),
  cancelled: z.boolean(),
  duration_ms: z.number(),
  risk: z.enum(['low', 'medium', 'high']),
  output_truncated_bytes: z.number().int(),
});

export const runInSandbox = defineTool<ShellCapabilities, typeof input, typeof output>({
  name: 'run_in_sandbox',
  title: 'Run a command in a throwaway checkout',
  description:
    'Checks out the repository of the first root at rev (default HEAD) into a throwaway folder, runs a bash command there (the checkout is the only writable folder; the roots stay read-only), returns the exit code and bounded output, and removes the checkout. ' +
    'For trying a build or a test at a commit without touching the working tree.',
  input,
  output,
  annotations: { readOnlyHint: false, destructiveHint: false, idempotentHint: false, openWorldHint: true },
  risk: 'high',
  subjectArg: 'command',
  async run(args, ctx) {
    const { classification } = await prepareCommand(ctx, args.command, undefined);
    const timeoutMs = timeoutFor(args.timeout_ms, ctx.limits);
    const checkout = await ctx.checkouts.make(args.rev, ctx.signal);
    try {
      // The checkout's objects live in the repository: the roots are shown, read-only.
      const sandbox = { ...ctx.sandbox(), writable: [checkout.dir], readOnly: [], visible: ctx.paths.real };
      const run = await runToCompletion(commandLaunch(args.command, checkout.dir, timeoutMs, ctx.env, sandbox, ctx.limits), ctx.signal, ctx.limits.max_output_bytes, classification.readOnly);
      const header = `In a throwaway checkout of ${checkout.shownAs} at ${checkout.commit.slice(0, 12)} (removed afterwards):`;
      return withTaskNotifications(ctx.tasks, structuredReply(`${header}\n${completedText(run, timeoutMs)}`, { commit: checkout.commit, ...completedRecord(run, classification.tier) }));
    } finally {
      await checkout.remove();
    }
  },
});
