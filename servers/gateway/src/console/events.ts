import { readdirSync, statSync } from 'node:fs';
import { join } from 'node:path';
import type { ConsoleSources } from './page.js';

/** How often the live state the console shows is compared with the last look, while a browser listens. */
const POLL_MS = 1000;

/**
 * A summary of what live pages show besides approvals: each downstream's state, restarts and tool
 * count, the catalog and its quarantine, and the size of every audit log (a new call appends a
 * line). Comparing two is cheaper than hooking every place that changes them.
 */
export function liveFingerprint(sources: ConsoleSources): string {
  const parts: string[] = [];
  const gateway = sources.gateway;
  if (gateway) {
    for (const downstream of gateway.downstreams.values()) parts.push(`${downstream.namespace}:${downstream.state}:${downstream.timesReady}:${downstream.tools.length}`);
    parts.push(`catalog:${gateway.catalog.entries().length}:${gateway.catalog.quarantinedTools().length}`);
  }
  const auditFolder = join(sources.controlDir, 'audit');
  try {
    for (const name of readdirSync(auditFolder).sort()) parts.push(`${name}:${statSync(join(auditFolder, name)).size}`);
  } catch {
    // No audit log yet.
  }
  return parts.join('|');
}

/**
 * Tells listeners (the browsers' event streams) that something the console shows changed: the
 * approval store's own watch, and the fingerprint above. Watches only while someone listens.
 */
export class ConsoleChanges {
  private readonly listeners = new Set<() => void>();
  private stopWatching: (() => void) | undefined;
  private timer: NodeJS.Timeout | undefined;
  private last = '';

  constructor(private readonly sources: ConsoleSources) {}

  subscribe(listener: () => void): () => void {
    this.listeners.add(listener);
    if (this.listeners.size === 1) this.begin();
    return () => {
      this.listeners.delete(listener);
      if (this.listeners.size === 0) this.end();
    };
  }

  private notify(): void {
    for (const listener of this.listeners) listener();
  }

  private begin(): void {
    this.stopWatching = this.sources.approvals.watch(() => this.notify());
    this.last = liveFingerprint(this.sources);
    this.timer = setInterval(() => {
      const now = liveFingerprint(this.sources);
      if (now === this.last) return;
      this.last = now;
      this.notify();
    }, POLL_MS);
    this.timer.unref();
  }

  private end(): void {
    this.stopWatching?.();
    this.stopWatching = undefined;
    clearInterval(this.timer);
    this.timer = undefined;
  }

  close(): void {
    this.listeners.clear();
    this.end();
  }
}
