/**
 * The calls a server is running, each with its own abort signal tied to the client's request.
 * Shutdown aborts them all. (AbortSignal.any over a server-lifetime signal would keep every call's
 * signal alive until shutdown: memory that grows with the number of calls served.)
 */
export class InFlightCalls {
  private readonly controllers = new Set<AbortController>();

  /** Runs `work` with a signal aborted by the request's own signal or by `abortAll`. */
  async run<T>(requestSignal: AbortSignal, work: (signal: AbortSignal) => Promise<T>): Promise<T> {
    const controller = new AbortController();
    const onAbort = () => controller.abort(requestSignal.reason);
    if (requestSignal.aborted) onAbort();
    else requestSignal.addEventListener('abort', onAbort, { once: true });
    this.controllers.add(controller);
    try {
      return await work(controller.signal);
    } finally {
      this.controllers.delete(controller);
      requestSignal.removeEventListener('abort', onAbort);
    }
  }

  abortAll(reason: Error): void {
    for (const controller of this.controllers) controller.abort(reason);
  }
}
