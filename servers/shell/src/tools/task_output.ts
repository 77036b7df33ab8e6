import { z } from 'zod';
import { defineTool, READ_ONLY_LOCAL, structuredReply } from '@bulkhead/core';
import type { ShellCapabilities } from '../context.js';
import { withTaskNotifications } from '../lib/notify.js';
import { taskIdInput, taskLine, taskRecord, taskRecordSchema } from '../lib/task-text.js';
import { DEFAULT_PAGE_BYTES, MAX_PAGE_BYTES, MIN_PAGE_BYTES } from '../tasks/task-manager.js';

const input = z.strictObject({
  task_id: taskIdInput,
  offset: z.number().int().min(0).default(0).describe('Byte of the log to start at (next_offset of the previous page)'),
  limit: z.number().int().min(MIN_PAGE_BYTES).max(MAX_PAGE_BYTES).default(DEFAULT_PAGE_BYTES).describe(`Most bytes to read (default ${DEFAULT_PAGE_BYTES})`),
});

const output = z.object({
  task: taskRecordSchema,
  offset: z.number().int(),
  next_offset: z.number().int().nullable().describe('Where the next page starts; null once the task ended and the log was read to its end'),
  size: z.number().int().describe('Bytes in the log now'),
});

export const taskOutput = defineTool<ShellCapabilities, typeof input, typeof output>({
  name: 'task_output',
  title: 'Read a background task\'s output',
  description: 'Reads a page of the output log of a background task (run_shell with run_in_background), while it runs or after it ended; next_offset reads on.',
  input,
  output,
  annotations: READ_ONLY_LOCAL,
  risk: 'low',
  async run(args, ctx) {
    const page = ctx.tasks.output(args.task_id, args.offset, args.limit);
    const footer =
      page.nextOffset === null
        ? `[bytes ${page.offset}–${page.size} of ${page.size}; end of the log]`
        : `[bytes ${page.offset}–${page.nextOffset} of ${page.size} so far; call again with offset=${page.nextOffset}${page.task.state === 'running' ? ' (the task is still running)' : ''}]`;
    const text = `${taskLine(page.task)}\n${page.text === '' ? '(nothing in this part of the log yet)' : page.text}\n${footer}`;
    return withTaskNotifications(ctx.tasks, structuredReply(text, { task: taskRecord(page.task), offset: page.offset, next_offset: page.nextOffset, size: page.size }));
  },
});
