import { rmSync } from 'node:fs';
import { join } from 'node:path';
import { errorMessage, ToolError } from '@bulkhead/core';
import type { RunningCommand, RunOutcome, RunRequest } from '../run/types.js';
import { createLogFolder } from './log-folder.js';
import { readLogPage } from './log-page.js';
import { notificationBlock, type EndedTask } from './notifications.js';
import type { TaskInfo, TaskState } from './task-info.js';
import { TaskLog } from './task-log.js';

export interface TaskManagerOptions {
  /** The server's state folder; logs go to `<stateDir>/tasks/<pid>-<random>/bash_<n>.log`. */
  readonly stateDir: string;
  /** Starts one command (the process runner). */
  readonly start: (request: RunRequest) => RunningCommand;
  /** Most tasks running at once; the next one is refused (0: every one is). */
  readonly maxTasks: number;
  /** Most finished tasks remembered; the oldest is forgotten and its log deleted. */
  readonly maxFinishedTasks: number;
  /** Most bytes kept in one task's log. */
  readonly maxLogBytes: number;
  /** Called once when a task ends, however it ends (the server sends an MCP log message). */
  readonly onTaskEnd?: (ended: EndedTask) => void;
}

export type BackgroundRequest = Omit<RunRequest, 'onOutput' | 'signal'> & { readonly description?: string };

export interface TaskOutput {
  readonly text: string;
  readonly offset: number;
  /** Where to read on; null once the task has ended and the text reaches the end of its log. */
  readonly nextOffset: number | null;
  /** Bytes in the log at the time of the read. */
  readonly size: number;
  readonly task: TaskInfo;
}

export interface WaitResult {
  /** True when timeout_ms passed first; the task keeps running. */
  readonly timedOut: boolean;
  readonly task: TaskInfo;
}

export interface KillResult {
  /** False when the task had already ended before the kill. */
  readonly wasRunning: boolean;
  readonly task: TaskInfo;
}

/** Largest page task_output reads at once, so one call never holds much of a log in memory. */
export const MAX_PAGE_BYTES = 1024 * 1024;
/** Smallest page: big enough that a page always moves past at least one whole character. */
export const MIN_PAGE_BYTES = 16;
export const DEFAULT_PAGE_BYTES = 32 * 1024;
/** A day: longer waits are surely mistakes, and timers overflow past about 24.8 days anyway. */
const MAX_WAIT_MS = 24 * 60 * 60 * 1000;
const COMMAND_SHOWN_CHARS = 200;
const IDS_SHOWN_IN_ERRORS = 5;

interface TaskEnd {
  readonly state: Exclude<TaskState, 'running'>;
  readonly outcome: RunOutcome | undefined;
  readonly failure: string | undefined;
  readonly endedAt: Date;
}

interface Task {
  readonly id: string;
  readonly command: string;
  readonly description: string | undefined;
  readonly startedAt: Date;
  readonly log: TaskLog;
  readonly running: RunningCommand;
  /** Settles once `end` is set and the log is closed. */
  readonly ended: Promise<void>;
  /** Set by kill and closeAll: the end is reported by their result, not by a notification. */
  stopRequested: boolean;
  end: TaskEnd | undefined;
}

/**
 * The background tasks of one shell server: starts them with their output going to a capped log,
 * reads the logs, waits for and stops tasks, and reports each task's end once.
 */
export class TaskManager {
  private readonly tasks = new Map<string, Task>();
  /** Finished task ids, oldest first, for forgetting the oldest. */
  private readonly finishedOrder: string[] = [];
  /** Ends not yet reported, in the order they happened. */
  private readonly unreported = new Map<string, EndedTask>();
  /** This server's log folder, made by the first background task (see logFolder). */
  private ownLogFolder: string | undefined;
  private lastNumber = 0;
  private closing = false;

  constructor(private readonly options: TaskManagerOptions) {
    for (const [key, min] of [['maxTasks', 0], ['maxFinishedTasks', 0], ['maxLogBytes', 1]] as const) {
      if (!Number.isInteger(options[key]) || options[key] < min) throw new Error(`TaskManager: ${key} must be an integer >= ${min}`);
    }
  }

  /**
   * Made when the first task starts, not with the server: a shell server that ran no background
   * task leaves no folder in the control plane (`bulkhead tools` keeps an empty folder empty).
   */
  private get logFolder(): string {
    this.ownLogFolder ??= createLogFolder(this.options.stateDir);
    return this.ownLogFolder;
  }

  /** Starts a task and returns at once. */
  start(request: BackgroundRequest): TaskInfo {
    if (this.closing) throw new ToolError('The shell server is shutting down; no background task can start now.', 'closed');
    const runningCount = this.runningTasks().length;
    if (this.options.maxTasks === 0) {
      throw new ToolError('Refused: background tasks are off (limits.max_background_tasks is 0 in shell_policy.yaml); run the command without run_in_background.', 'disabled');
    }
    if (runningCount >= this.options.maxTasks) {
      throw new ToolError(
        `Refused: ${runningCount} background tasks are running, the most allowed at once (limits.max_background_tasks in shell_policy.yaml). ` +
          'See them with list_tasks {} and stop one with shell_kill {"task_id":"bash_<n>"}, or wait for one with wait_task.',
        'too_many_tasks',
      );
    }
    const { description, ...runRequest } = request;
    const id = `bash_${++this.lastNumber}`;
    const log = new TaskLog(join(this.logFolder, `${id}.log`), this.options.maxLogBytes);
    let running: RunningCommand;
    try {
      running = this.options.start({
        ...runRequest,
        // A background task outlives the call that started it, so no call's signal may reach it;
        // it ends by itself, by its timeout, or through stop().
        signal: new AbortController().signal,
        onOutput: (chunk) => log.append(chunk),
      });
    } catch (error) {
      log.close();
      removeQuietly(log.path);
      throw error;
    }
    const task: Task = {
      id,
      command: request.command,
      description,
      startedAt: new Date(),
      log,
      running,
      ended: running.done.then(
        (outcome) => this.finish(task, outcome, undefined),
        (error: unknown) => this.finish(task, undefined, errorMessage(error)),
      ),
      stopRequested: false,
      end: undefined,
    };
    this.tasks.set(id, task);
    return this.info(task);
  }

  /** A page of a task's log, running or not. */
  output(id: string, offset = 0, limit = DEFAULT_PAGE_BYTES): TaskOutput {
    const task = this.find(id);
    requireInteger('offset', offset, 0, Number.MAX_SAFE_INTEGER);
    requireInteger('limit', limit, MIN_PAGE_BYTES, MAX_PAGE_BYTES);
    const complete = task.end !== undefined;
    const page = readLogPage(task.log.path, offset, limit, complete);
    return {
      text: page.text,
      offset: page.offset,
      nextOffset: complete && page.end >= page.size ? null : page.end,
      size: page.size,
      task: this.info(task),
    };
  }

  /** Waits until the task ends or `timeoutMs` passes; a timeout leaves the task running. */
  async wait(id: string, timeoutMs: number, signal?: AbortSignal): Promise<WaitResult> {
    const task = this.find(id);
    requireInteger('timeout_ms', timeoutMs, 0, MAX_WAIT_MS);
    if (!task.end && !(await endsWithin(task, timeoutMs, signal))) return { timedOut: true, task: this.info(task) };
    // This result shows the end, so no notification repeats it.
    this.unreported.delete(id);
    return { timedOut: false, task: this.info(task) };
  }

  /** Stops the task's whole process group (SIGTERM, then SIGKILL) and closes its log. */
  async kill(id: string): Promise<KillResult> {
    const task = this.find(id);
    if (task.end) {
      this.unreported.delete(id);
      return { wasRunning: false, task: this.info(task) };
    }
    task.stopRequested = true;
    await task.running.stop();
    await task.ended;
    return { wasRunning: true, task: this.info(task) };
  }

  /** Every task remembered, in start order. */
  list(): TaskInfo[] {
    return [...this.tasks.values()].map((task) => this.info(task));
  }

  /** The `<task-notification>` block for tasks that ended since the last call, or undefined. */
  takeNotifications(): string | undefined {
    if (this.unreported.size === 0) return undefined;
    const ended = [...this.unreported.values()];
    this.unreported.clear();
    return notificationBlock(ended);
  }

  /** Stops every running task and closes its log; no task starts afterwards. */
  async closeAll(): Promise<void> {
    this.closing = true;
    await Promise.allSettled(this.runningTasks().map((task) => this.kill(task.id)));
  }

  private runningTasks(): Task[] {
    return [...this.tasks.values()].filter((task) => task.end === undefined);
  }

  private finish(task: Task, outcome: RunOutcome | undefined, failure: string | undefined): void {
    task.log.close();
    task.end = { state: endState(task, outcome), outcome, failure, endedAt: new Date() };
    this.finishedOrder.push(task.id);
    const ended: EndedTask = { task: this.info(task), logKept: true };
    if (!task.stopRequested) this.unreported.set(task.id, ended);
    this.forgetOldestFinished();
    try {
      this.options.onTaskEnd?.(ended);
    } catch {
      // The hook only reports; a failure there must not leave the task looking unfinished.
    }
  }

  private forgetOldestFinished(): void {
    while (this.finishedOrder.length > this.options.maxFinishedTasks) {
      const id = this.finishedOrder.shift()!;
      const task = this.tasks.get(id);
      this.tasks.delete(id);
      if (task) removeQuietly(task.log.path);
      const unreported = this.unreported.get(id);
      if (unreported) this.unreported.set(id, { ...unreported, logKept: false });
    }
  }

  private find(id: string): Task {
    const task = this.tasks.get(id);
    if (task) return task;
    const number = Number(/^bash_([1-9]\d*)$/.exec(id)?.[1]);
    if (!Number.isInteger(number)) {
      const shown = id.length > 40 ? `${id.slice(0, 40)}…` : id;
      throw new ToolError(`${JSON.stringify(shown)} is not a task id: ids look like bash_1, as run_shell returned them. ${this.knownIds()}`, 'bad_argument');
    }
    if (number <= this.lastNumber) {
      throw new ToolError(`${id} ended and was forgotten: only the last ${this.options.maxFinishedTasks} finished tasks are kept. ${this.knownIds()}`, 'not_found');
    }
    throw new ToolError(`There is no task ${id}. ${this.knownIds()}`, 'not_found');
  }

  private knownIds(): string {
    const ids = [...this.tasks.keys()];
    if (ids.length === 0) return 'No background task is known now.';
    const shown = ids.slice(-IDS_SHOWN_IN_ERRORS).reverse().join(', ');
    return ids.length <= IDS_SHOWN_IN_ERRORS ? `Known tasks: ${shown}.` : `Newest tasks: ${shown}; list_tasks {} shows all ${ids.length}.`;
  }

  private info(task: Task): TaskInfo {
    const end = task.end;
    return {
      id: task.id,
      command: task.command.length <= COMMAND_SHOWN_CHARS ? task.command : `${task.command.slice(0, COMMAND_SHOWN_CHARS)}…`,
      description: task.description,
      state: end?.state ?? 'running',
      exitCode: end?.outcome?.exitCode ?? null,
      signal: end?.outcome?.signal ?? null,
      failure: end?.failure,
      startedAt: task.startedAt,
      endedAt: end?.endedAt,
      durationMs: end?.outcome?.durationMs ?? (end?.endedAt ?? new Date()).getTime() - task.startedAt.getTime(),
      logFile: task.log.path,
      logBytes: task.log.size,
      droppedBytes: task.log.droppedBytes,
    };
  }
}

function endState(task: Task, outcome: RunOutcome | undefined): Exclude<TaskState, 'running'> {
  if (outcome?.timedOut) return 'timed out';
  if (task.stopRequested) return 'killed';
  return 'exited';
}

/** True when the task ended first; false when the timeout passed. Throws when the wait is cancelled. */
function endsWithin(task: Task, timeoutMs: number, signal: AbortSignal | undefined): Promise<boolean> {
  return new Promise((resolve, reject) => {
    const onAbort = () => {
      settle();
      reject(new ToolError(`wait_task was cancelled; ${task.id} keeps running.`, 'cancelled'));
    };
    const timer = setTimeout(() => {
      settle();
      resolve(false);
    }, timeoutMs);
    const settle = () => {
      clearTimeout(timer);
      signal?.removeEventListener('abort', onAbort);
    };
    if (signal?.aborted) return onAbort();
    signal?.addEventListener('abort', onAbort, { once: true });
    void task.ended.then(() => {
      settle();
      resolve(true);
    });
  });
}

/** Deletes a log; a failure only leaves a file behind, in a folder the next server start removes. */
function removeQuietly(path: string): void {
  try {
    rmSync(path, { force: true });
  } catch {
    // Recording the task's end matters more than this file, so the error stops here.
  }
}

function requireInteger(name: string, value: number, min: number, max: number): void {
  if (!Number.isInteger(value) || value < min || value > max) {
    throw new ToolError(`${name} must be a whole number from ${min} to ${max}; got ${value}`, 'bad_argument');
  }
}
