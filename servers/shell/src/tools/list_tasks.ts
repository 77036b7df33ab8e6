import { z } from 'zod';
import { defineTool, READ_ONLY_LOCAL, structuredReply } from '@bulkhead/core';
import type { ShellCapabilities } from '../context.js';
import { withTaskNotifications } from '../lib/notify.js';
import { taskLine, taskRecord, taskRecordSchema } from '../lib/task-text.js';

const input = z.strictObject({});

const output = z.object({ tasks: z.array(taskRecordSchema) });

export const listTasks = defineTool<ShellCapabilities, typeof input, typeof output>({
  name: 'list_tasks',
  title: 'List background tasks',
  description: 'Lists the background tasks of this server, running and recently ended, with state, exit code, duration and log size.',
  input,
  output,
  annotations: READ_ONLY_LOCAL,
  risk: 'low',
  async run(_args, ctx) {
    const tasks = ctx.tasks.list();
    const text = tasks.length === 0 ? 'No background tasks. run_shell with run_in_background: true starts one.' : tasks.map(taskLine).join('\n');
    return withTaskNotifications(ctx.tasks, structuredReply(text, { tasks: tasks.map(taskRecord) }));
  },
});
