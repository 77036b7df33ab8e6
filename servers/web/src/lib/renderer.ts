import { Worker } from 'node:worker_threads';
import { ToolError } from '@bulkhead/core';
import type { HtmlFormat, RenderedHtml, RenderReply, RenderTask } from './render-worker.js';

export type RenderedPage = RenderedHtml;

interface QueuedTask {
  readonly task: RenderTask;
  readonly deadline: number;
  readonly signal: AbortSignal;
  readonly resolve: (page: RenderedPage) => void;
  readonly reject: (error: unknown) => void;
}

/**
 * Turns HTML into Markdown or text in a worker thread that outlives one call (jsdom loads once),
 * one page at a time. A page that takes past its deadline, or whose call is cancelled, ends the
 * worker mid-parse; the next page gets a fresh one. So no page, however built, holds the server's
 * own thread or a core beyond the fetch's timeout.
 */
export class HtmlRenderer {
  private worker: Worker | undefined;
  private readonly queue: QueuedTask[] = [];
  private running: { queued: QueuedTask; timer: NodeJS.Timeout; onAbort: () => void } | undefined;
  private nextId = 1;

  render(html: string, url: string, format: HtmlFormat, deadline: number, signal: AbortSignal): Promise<RenderedPage> {
    return new Promise<RenderedPage>((resolve, reject) => {
      this.queue.push({ task: { id: this.nextId++, html, url, format }, deadline, signal, resolve, reject });
      this.startNext();
    });
  }

  async close(): Promise<void> {
    const closing = new ToolError('the web server is closing', 'closed');
    for (const queued of this.queue.splice(0)) queued.reject(closing);
    if (this.running !== undefined) this.finish(undefined, closing);
    await this.stopWorker();
  }

  private startNext(): void {
    if (this.running !== undefined) return;
    const queued = this.queue.shift();
    if (queued === undefined) return;
    if (queued.signal.aborted) {
      queued.reject(queued.signal.reason);
      this.startNext();
      return;
    }
    const remaining = queued.deadline - Date.now();
    if (remaining <= 0) {
      queued.reject(timeoutError(queued.task.format));
      this.startNext();
      return;
    }
    const onAbort = () => this.abandon(queued.signal.reason);
    const timer = setTimeout(() => this.abandon(timeoutError(queued.task.format)), remaining);
    queued.signal.addEventListener('abort', onAbort, { once: true });
    this.running = { queued, timer, onAbort };
    this.ensureWorker().postMessage(queued.task);
  }

  private ensureWorker(): Worker {
    if (this.worker !== undefined) return this.worker;
    const worker = new Worker(new URL('./render-worker.js', import.meta.url));
    worker.unref();
    worker.on('message', (reply: RenderReply) => {
      if (this.running?.queued.task.id !== reply.id) return;
      if (reply.ok) this.finish(reply.page);
      else this.finish(undefined, new ToolError(`the page could not be converted: ${reply.error}`, 'render_failed'));
    });
    worker.on('error', (error) => {
      this.worker = undefined;
      this.finish(undefined, new ToolError(`the page could not be converted: ${error.message}`, 'render_failed'));
    });
    worker.on('exit', () => {
      if (this.worker === worker) this.worker = undefined;
    });
    this.worker = worker;
    return worker;
  }

  /** Ends the page in progress by ending its worker: a parse cannot be interrupted any other way. */
  private abandon(reason: unknown): void {
    void this.stopWorker();
    this.finish(undefined, reason);
  }

  private async stopWorker(): Promise<void> {
    const worker = this.worker;
    this.worker = undefined;
    await worker?.terminate();
  }

  private finish(page: RenderedPage | undefined, error?: unknown): void {
    const running = this.running;
    if (running === undefined) return;
    this.running = undefined;
    clearTimeout(running.timer);
    running.queued.signal.removeEventListener('abort', running.onAbort);
    if (page !== undefined) running.queued.resolve(page);
    else running.queued.reject(error);
    this.startNext();
  }
}

function timeoutError(format: HtmlFormat): ToolError {
  const advice = format === 'markdown' ? 'format "text" reads it in a time linear in its size, ' : '';
  return new ToolError(`converting the page to ${format} did not finish within the fetch's timeout_ms; ${advice}format "html" returns the source as served`, 'timeout');
}
