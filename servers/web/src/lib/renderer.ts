import { Worker } from 'node:worker_threads';
import { ToolError } from '@bulkhead/core';
import type { HtmlFormat, JobFailure, JobKind, JobOutputs, JobReply, JobRequest, JobSuccess, RenderedHtml, RenderJob } from './render-worker.js';

export type RenderedPage = RenderedHtml;
export type { HtmlFormat, JobKind, JobOutputs, RenderJob };

/** How a job's failures read to the model: each names what was being read. */
export interface FailureWording {
  /** The job's deadline passed, while it waited or while it ran. */
  timedOut(): ToolError;
  /** The worker could not finish it; `why` is a clause about the input ("it is nested too deeply"). */
  failed(why: string): ToolError;
}

/** The renderer as a search provider sees it: jobs run off the server's thread, within a deadline. */
export interface JobRunner {
  run<K extends JobKind>(job: Extract<RenderJob, { kind: K }>, deadline: number, signal: AbortSignal, wording: FailureWording): Promise<JobOutputs[K]>;
}

export interface HtmlRendererOptions {
  /** How many pages convert at once. */
  readonly workers?: number;
  /** Each worker's old-generation heap, in MB; past it the worker dies and its job fails. */
  readonly maxHeapMb?: number;
}

/**
 * Two workers, whatever the core count: the second is there so that one slow page never holds up
 * the next, not for throughput (an MCP client seldom has more than a fetch or two in flight). On
 * one core the two share it, each still bounded by its own deadline. More would multiply the
 * memory below for little gain.
 */
const DEFAULT_WORKERS = 2;

/**
 * jsdom, Readability and Turndown need about 300 MB of heap for a 1 MiB article and 1.4 GB for a
 * 4 MiB one (which took 26 s, near the default timeout_ms of 30 s). 1 GB lets through any page
 * that can convert in time while capping the two workers near 2 GB, instead of letting a hostile
 * 10 MiB page grow the process until its deadline.
 */
const DEFAULT_MAX_HEAP_MB = 1024;

const CLOSED_MESSAGE = 'the web server is closing: no more pages are converted';

interface Task {
  readonly id: number;
  readonly job: RenderJob;
  readonly wording: FailureWording;
  readonly accept: (success: JobSuccess) => void;
  readonly reject: (error: unknown) => void;
  /** Stops the task's deadline timer and abort listener. */
  readonly release: () => void;
}

/** One worker's place in the pool; the worker starts on its first job and is replaced as soon as one is abandoned. */
interface Slot {
  worker: Worker | undefined;
  task: Task | undefined;
}

/**
 * Turns HTML into Markdown or text, and reads DuckDuckGo's results, in worker threads that outlive
 * one call (jsdom loads once per worker), one job per worker at a time. A job's deadline and
 * cancellation count from the call, not from its turn: one that expires or is cancelled while
 * queued leaves the queue at once; one that expires while running ends its worker mid-parse (a
 * parse cannot be interrupted any other way) and the slot starts a fresh one. So no page, however
 * built, holds the server's own thread, or a core or a caller beyond its deadline.
 */
export class HtmlRenderer implements JobRunner {
  private readonly slots: Slot[];
  private readonly maxHeapMb: number;
  private readonly queue: Task[] = [];
  private nextId = 1;
  private closed = false;

  constructor(options: HtmlRendererOptions = {}) {
    this.slots = Array.from({ length: options.workers ?? DEFAULT_WORKERS }, () => ({ worker: undefined, task: undefined }));
    this.maxHeapMb = options.maxHeapMb ?? DEFAULT_MAX_HEAP_MB;
  }

  render(html: string, url: string, format: HtmlFormat, deadline: number, signal: AbortSignal): Promise<RenderedPage> {
    return this.run({ kind: 'page', html, url, format }, deadline, signal, {
      timedOut: () => conversionTimeout(format),
      failed: (why) => new ToolError(`the page could not be converted: ${why}`, 'render_failed'),
    });
  }

  run<K extends JobKind>(job: Extract<RenderJob, { kind: K }>, deadline: number, signal: AbortSignal, wording: FailureWording): Promise<JobOutputs[K]> {
    return new Promise<JobOutputs[K]>((resolve, reject) => {
      if (this.closed) return reject(new ToolError(CLOSED_MESSAGE, 'closed'));
      if (signal.aborted) return reject(signal.reason);
      const remaining = deadline - Date.now();
      if (remaining <= 0) return reject(wording.timedOut());
      const onAbort = () => this.abandon(task, signal.reason);
      const timer = setTimeout(() => this.abandon(task, wording.timedOut()), remaining);
      const task: Task = {
        id: this.nextId++,
        job,
        wording,
        // The worker answers each job with its own kind's output (see perform in render-worker.ts).
        accept: (success) => resolve(success.output as JobOutputs[K]),
        reject,
        release: () => {
          clearTimeout(timer);
          signal.removeEventListener('abort', onAbort);
        },
      };
      signal.addEventListener('abort', onAbort, { once: true });
      this.queue.push(task);
      this.dispatch();
    });
  }

  async close(): Promise<void> {
    this.closed = true;
    const closing = new ToolError(CLOSED_MESSAGE, 'closed');
    for (const task of this.queue.splice(0)) settle(task, closing);
    await Promise.all(this.slots.map((slot) => this.stop(slot, closing)));
  }

  private dispatch(): void {
    for (const slot of this.slots) {
      if (slot.task !== undefined) continue;
      const task = this.queue.shift();
      if (task === undefined) return;
      slot.task = task;
      this.workerOf(slot).postMessage({ id: task.id, job: task.job } satisfies JobRequest);
    }
  }

  private workerOf(slot: Slot): Worker {
    if (slot.worker !== undefined) return slot.worker;
    const worker = new Worker(new URL('./render-worker.js', import.meta.url), { resourceLimits: { maxOldGenerationSizeMb: this.maxHeapMb } });
    worker.unref();
    worker.on('message', (reply: JobReply) => {
      if (slot.worker !== worker || slot.task?.id !== reply.id) return;
      const task = slot.task;
      slot.task = undefined;
      if (reply.ok) {
        task.release();
        task.accept(reply);
      } else {
        settle(task, task.wording.failed(failureReason(reply.failure, reply.message)));
      }
      this.dispatch();
    });
    worker.on('error', (error: Error & { code?: string }) => {
      const why = error.code === 'ERR_WORKER_OUT_OF_MEMORY' ? `it needed more memory than the converter may use (${this.maxHeapMb} MB)` : error.message;
      this.lose(slot, worker, why);
    });
    worker.on('exit', (code) => this.lose(slot, worker, `the converter stopped (exit code ${code})`));
    slot.worker = worker;
    return worker;
  }

  /** A worker died on its own: its job fails with `why`, the slot starts a fresh worker on its next job. */
  private lose(slot: Slot, worker: Worker, why: string): void {
    if (slot.worker !== worker) return;
    slot.worker = undefined;
    const task = slot.task;
    slot.task = undefined;
    if (task !== undefined) settle(task, task.wording.failed(why));
    this.dispatch();
  }

  private abandon(task: Task, reason: unknown): void {
    const waiting = this.queue.indexOf(task);
    if (waiting !== -1) {
      this.queue.splice(waiting, 1);
      settle(task, reason);
      return;
    }
    const slot = this.slots.find((candidate) => candidate.task === task);
    if (slot === undefined) return;
    void this.stop(slot, reason);
    // The replacement loads jsdom now, while nothing waits for it, so the call after a hostile
    // page does not pay a cold start (about a second) inside its own deadline.
    if (!this.closed) this.workerOf(slot);
    this.dispatch();
  }

  /** Ends the slot's job with `reason` by ending its worker. */
  private async stop(slot: Slot, reason: unknown): Promise<void> {
    const { worker, task } = slot;
    slot.worker = undefined;
    slot.task = undefined;
    if (task !== undefined) settle(task, reason);
    await worker?.terminate();
  }
}

function settle(task: Task, error: unknown): void {
  task.release();
  task.reject(error);
}

function failureReason(failure: JobFailure, message: string): string {
  return failure === 'too_deep' ? 'it is nested too deeply' : message;
}

function conversionTimeout(format: HtmlFormat): ToolError {
  const advice = format === 'markdown' ? 'format "text" reads it in a time linear in its size, ' : '';
  return new ToolError(`converting the page to ${format} did not finish within the fetch's timeout_ms; ${advice}format "html" returns the source as served`, 'timeout');
}
