import { z } from 'zod';
import { defineTool, structuredReply, ToolError } from '@bulkhead/core';
import type { ShellCapabilities } from '../context.js';
import { prepareCommand, timeoutFor } from '../lib/prepare.js';
import { withTaskNotifications } from '../lib/notify.js';
import { commandLaunch, completedRecord, completedText, runToCompletion } from '../lib/run-to-completion.js';

export const runShellInput = z.strictObject({
  command: z.string().min(1).max(100_000).describe('A bash command line; pipes, lists and redirects are parsed and tiered by risk before it runs'),
  cwd: z.string().min(1).max(65_536).optional().describe('Folder to run in, inside the roots (default: the first root)'),
  timeout_ms: z.number().int().min(100).max(600_000).optional().describe('Stop the command after this long (default 120000, at most limits.max_timeout_ms)'),
  run_in_background: z.boolean().default(false).describe('Return a task id (bash_<n>) at once; read the output with task_output, wait with wait_task, stop with shell_kill'),
  description: z.string().max(200).optional().describe('A few words saying what the command is for (shown in list_tasks)'),
});

const output = z.object({
  exit_code: z.number().int().nullable().describe('null when a signal ended the command, or while a background task runs'),
  signal: z.string().nullable(),
  timed_out: z.boolean(),
  cancelled: z.boolean(),
  duration_ms: z.number(),
  risk: z.enum(['low', 'medium', 'high']).describe('The tier the parsed command was given'),
  output_truncated_bytes: z.number().int().describe('Bytes of output left out to fit limits.max_output_bytes'),
  task_id: z.string().optional().describe('The background task, with run_in_background'),
});

export const runShell = defineTool<ShellCapabilities, typeof runShellInput, typeof output>({
  name: 'run_shell',
  title: 'Run a shell command',
  description:
    'Runs a bash command in a folder inside the roots, contained by the sandbox the policy sets (by default: the system read-only, the roots writable, a private /tmp, no network), with stdin closed and a reduced environment. ' +
    'Returns stdout and stderr together (capped: read-only commands keep their start and end, others their end), the exit code and the duration. With run_in_background it returns a task id at once.',
  input: runShellInput,
  output,
  annotations: { readOnlyHint: false, destructiveHint: true, idempotentHint: false, openWorldHint: true },
  risk: 'high',
  subjectArg: 'command',
  async run(args, ctx) {
    const { cwd, classification } = await prepareCommand(ctx, args.command, args.cwd);
    const timeoutMs = timeoutFor(args.timeout_ms, ctx.limits);
    const launch = commandLaunch(args.command, cwd, timeoutMs, ctx.env, ctx.sandbox(), ctx.limits);
    if (args.run_in_background) {
      if (ctx.limits.max_background_tasks === 0) throw new ToolError('run_in_background is off: limits.max_background_tasks is 0 in shell_policy.yaml', 'disabled');
      const task = ctx.tasks.start({ ...launch, ...(args.description !== undefined ? { description: args.description } : {}) });
      const text = `Started ${task.id} in the background (${classification.tier} risk). Read its output with task_output {"task_id":"${task.id}"}, wait for it with wait_task, stop it with shell_kill.`;
      return withTaskNotifications(ctx.tasks, structuredReply(text, { exit_code: null, signal: null, timed_out: false, cancelled: false, duration_ms: 0, risk: classification.tier, output_truncated_bytes: 0, task_id: task.id }));
    }
    const run = await runToCompletion(launch, ctx.signal, ctx.limits.max_output_bytes, classification.readOnly);
    return withTaskNotifications(ctx.tasks, structuredReply(completedText(run, timeoutMs), completedRecord(run, classification.tier)));
  },
});
