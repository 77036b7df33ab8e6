import { formatBytes } from '@bulkhead/core';
import { z } from 'zod';
import type { TaskInfo } from '../tasks/task-info.js';
import { formatDuration } from './outcome.js';

export const taskIdInput = z.string().max(14).regex(/^bash_[1-9][0-9]{0,8}$/, 'is a task id such as bash_3 (list_tasks shows them)').describe('The task id run_shell returned (bash_<n>)');

export const taskRecordSchema = z.object({
  task_id: z.string(),
  command: z.string(),
  description: z.string().optional(),
  state: z.enum(['running', 'exited', 'killed', 'timed out']),
  exit_code: z.number().int().nullable(),
  signal: z.string().nullable(),
  started_at: z.string(),
  ended_at: z.string().nullable(),
  duration_ms: z.number(),
  log_bytes: z.number().int(),
  dropped_bytes: z.number().int().describe('Output past the log cap, not kept'),
});

export type TaskRecord = z.output<typeof taskRecordSchema>;

export function taskRecord(task: TaskInfo): TaskRecord {
  return {
    task_id: task.id,
    command: task.command,
    ...(task.description !== undefined ? { description: task.description } : {}),
    state: task.state,
    exit_code: task.exitCode,
    signal: task.signal,
    started_at: task.startedAt.toISOString(),
    ended_at: task.endedAt?.toISOString() ?? null,
    duration_ms: Math.round(task.durationMs),
    log_bytes: task.logBytes,
    dropped_bytes: task.droppedBytes,
  };
}

/** One line: id, state, how long, the log's size, what it runs. */
export function taskLine(task: TaskInfo): string {
  const state = task.state === 'exited' ? (task.exitCode !== null ? `exited with code ${task.exitCode}` : `ended by ${task.signal ?? 'a signal'}`) : task.state;
  const failure = task.failure !== undefined ? ` (failed to run: ${task.failure})` : '';
  return `${task.id}: ${state}${failure}, ${formatDuration(task.durationMs)}, log ${formatBytes(task.logBytes)} — ${JSON.stringify(task.description ?? task.command)}`;
}
