import type { NetworkGuard } from '@bulkhead/core';
import type { Dispatcher } from 'undici';
import type { WebLimits } from './policy.js';

/** What web tools may touch: the network only through this guard and this dispatcher. */
export interface WebCapabilities {
  readonly guard: NetworkGuard;
  /** Opens every connection through the guard's address check. */
  readonly dispatcher: Dispatcher;
  readonly limits: WebLimits;
  readonly userAgent: string;
}
