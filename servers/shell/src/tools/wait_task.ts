import { z } from 'zod';
import { defineTool, READ_ONLY_LOCAL, structuredReply } from '@bulkhead/core';
import type { ShellCapabilities } from '../context.js';
import { withTaskNotifications } from '../lib/notify.js';
import { formatDuration } from '../lib/outcome.js';
import { taskIdInput, taskLine, taskRecord, taskRecordSchema } from '../lib/task-text.js';

const input = z.strictObject({
  task_id: taskIdInput,
  timeout_ms: z.number().int().min(0).max(600_000).default(30_000).describe('Stop waiting after this long (the task keeps running); default 30000'),
});

const output = z.object({
  task: taskRecordSchema,
  timed_out: z.boolean().describe('timeout_ms passed before the task ended; it is still running'),
});

export const waitTask = defineTool<ShellCapabilities, typeof input, typeof output>({
  name: 'wait_task',
  title: 'Wait for a background task',
  description: 'Blocks until a background task ends or timeout_ms passes (the task then keeps running), and says how it ended.',
  input,
  output,
  annotations: READ_ONLY_LOCAL,
  risk: 'low',
  async run(args, ctx) {
    const { timedOut, task } = await ctx.tasks.wait(args.task_id, args.timeout_ms, ctx.signal);
    const text = timedOut
      ? `${task.id} is still running after waiting ${formatDuration(args.timeout_ms)}.\n${taskLine(task)}`
      : `${taskLine(task)}\nRead its output with task_output {"task_id":"${task.id}"}.`;
    return withTaskNotifications(ctx.tasks, structuredReply(text, { task: taskRecord(task), timed_out: timedOut }));
  },
});
