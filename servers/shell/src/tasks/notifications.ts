import { formatBytes } from '@bulkhead/core';
import type { TaskInfo } from './task-info.js';

/** A finished task waiting to be reported, and whether its log can still be read. */
export interface EndedTask {
  readonly task: TaskInfo;
  readonly logKept: boolean;
}

const LABEL_CHARS = 80;

/** One line on how a task ended and where its log is. */
function describeTaskEnd({ task, logKept }: EndedTask): string {
  const log = logKept
    ? `log ${formatBytes(task.logBytes)}${task.droppedBytes > 0 ? ` (${formatBytes(task.droppedBytes)} more dropped)` : ''}; read it with task_output {"task_id":"${task.id}"}`
    : 'its log is no longer kept (too many finished tasks)';
  return `${task.id} ${JSON.stringify(label(task))} ${how(task)} after ${formatDuration(task.durationMs)}; ${log}`;
}

/** The `<task-notification>` block appended to the next result of any shell tool. */
export function notificationBlock(ended: readonly EndedTask[]): string {
  const noun = ended.length === 1 ? 'task' : 'tasks';
  const lines = ended.map((entry) => `- ${describeTaskEnd(entry)}`);
  return [`<task-notification>`, `${ended.length} background ${noun} ended:`, ...lines, `</task-notification>`].join('\n');
}

function how(task: TaskInfo): string {
  if (task.failure) return `failed to run (${task.failure})`;
  if (task.state === 'timed out') return 'timed out';
  if (task.state === 'killed') return 'was killed';
  if (task.exitCode !== null) return `exited with code ${task.exitCode}`;
  return `was ended by ${task.signal ?? 'a signal'}`;
}

// JSON quoting keeps a command's newlines and quotes from breaking the block's one-line entries.
function label(task: TaskInfo): string {
  const text = task.description ?? task.command;
  return text.length <= LABEL_CHARS ? text : `${text.slice(0, LABEL_CHARS)}…`;
}

function formatDuration(ms: number): string {
  if (ms < 1000) return `${Math.round(ms)} ms`;
  return `${(ms / 1000).toFixed(1)} s`;
}
