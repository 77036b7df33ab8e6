import { z } from 'zod';
import { defineTool, structuredReply } from '@bulkhead/core';
import type { ShellCapabilities } from '../context.js';
import { withTaskNotifications } from '../lib/notify.js';
import { formatDuration } from '../lib/outcome.js';
import { taskIdInput, taskLine, taskRecord, taskRecordSchema } from '../lib/task-text.js';

const input = z.strictObject({ task_id: taskIdInput });

const output = z.object({
  task: taskRecordSchema,
  was_running: z.boolean().describe('false when the task had already ended'),
});

export const shellKill = defineTool<ShellCapabilities, typeof input, typeof output>({
  name: 'shell_kill',
  title: 'Stop a background task',
  description: 'Stops a background task: its whole process group gets SIGTERM, then SIGKILL after a grace period; its log is kept for task_output.',
  input,
  output,
  annotations: { readOnlyHint: false, destructiveHint: true, idempotentHint: true, openWorldHint: false },
  risk: 'low',
  async run(args, ctx) {
    const { wasRunning, task } = await ctx.tasks.kill(args.task_id);
    const head = wasRunning
      ? `Stopped ${task.id}: its process group got SIGTERM, then SIGKILL if it was still there after ${formatDuration(ctx.limits.kill_grace_ms)}.`
      : `${task.id} had already ended; nothing to stop.`;
    return withTaskNotifications(ctx.tasks, structuredReply(`${head}\n${taskLine(task)}`, { task: taskRecord(task), was_running: wasRunning }));
  },
});
