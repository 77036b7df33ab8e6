import type { NetworkGuard } from '@bulkhead/core';
import type { Dispatcher } from 'undici';
import type { MemoryResponseCache } from './lib/cache.js';
import type { HtmlRenderer } from './lib/renderer.js';
import type { RobotsRules } from './lib/robots.js';
import type { SearchRoute } from './lib/search/client.js';
import type { WebLimits, WebSearchPolicy } from './policy.js';

/** What web tools may touch: the network only through this guard and this dispatcher. */
export interface WebCapabilities {
  readonly guard: NetworkGuard;
  /** Opens every connection through the guard's address check. */
  readonly dispatcher: Dispatcher;
  readonly limits: WebLimits;
  readonly userAgent: string;
  /** Absent when robots.respect is false. */
  readonly robots: RobotsRules | undefined;
  /** Absent when cache.max_bytes is 0. */
  readonly cache: MemoryResponseCache | undefined;
  /** Converts HTML off the server's thread, within the fetch's deadline. */
  readonly renderer: HtmlRenderer;
  readonly search: WebSearchPolicy;
  readonly searchRoute: SearchRoute;
  /** The control-plane folder: a relative search.api_key_file is read from here. */
  readonly controlDir: string;
}
