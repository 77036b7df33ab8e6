import { STATUS_CODES } from 'node:http';
import type { Dispatcher } from 'undici';
import { NetworkGuard, NetworkRefusal, ToolError } from '@bulkhead/core';
import type { WebSearchPolicy } from '../../policy.js';
import { createGuardedAgent, type Resolver } from '../connector.js';
import { guardedFetch, type FetchedResponse, type ResponseHeaders } from '../fetch.js';

/** The way to the search provider: the web server's own guard and dispatcher, or those of a trusted private endpoint. */
export interface SearchRoute {
  readonly guard: NetworkGuard;
  readonly dispatcher: Dispatcher;
  /** 0 for a trusted private endpoint: no redirect leads away from it. */
  readonly maxRedirects: number | undefined;
  close(): Promise<void>;
}

export interface SearchRouteOptions {
  readonly guard: NetworkGuard;
  readonly dispatcher: Dispatcher;
  readonly connectTimeoutMs: number;
  readonly resolve?: Resolver;
}

/**
 * The route a search takes. Only an endpoint the operator wrote down with allow_private_endpoint
 * is exempted from the private-address rule: its host and its port, and no redirect away from
 * it. Metadata and unspecified addresses stay refused by any guard.
 */
export function searchRoute(policy: WebSearchPolicy, options: SearchRouteOptions): SearchRoute {
  if (!policy.allow_private_endpoint || policy.endpoint === undefined) return { guard: options.guard, dispatcher: options.dispatcher, maxRedirects: undefined, close: () => Promise.resolve() };
  const endpoint = new URL(policy.endpoint);
  const guard = new NetworkGuard({ allowPrivate: ['0.0.0.0/0', '::/0'], allowHosts: [bareHost(endpoint)], extraPorts: [portOf(endpoint)] });
  const dispatcher = createGuardedAgent({ guard, connectTimeoutMs: options.connectTimeoutMs, ...(options.resolve ? { resolve: options.resolve } : {}) });
  return { guard, dispatcher, maxRedirects: 0, close: () => dispatcher.close() };
}

/** What the web server lends a search provider. */
export interface SearchNetwork {
  readonly route: SearchRoute;
  readonly userAgent: string;
  readonly maxResponseBytes: number;
}

/**
 * The HTTP side every provider shares: which guard and dispatcher a request goes through, the
 * timeout, and errors worded for the model with the provider named.
 */
export class ProviderClient {
  constructor(
    readonly label: string,
    private readonly policy: WebSearchPolicy,
    readonly endpoint: URL,
    private readonly network: SearchNetwork,
  ) {}

  /** GETs a URL of the provider; statuses are the caller's to judge (see `refuseStatus`). */
  async get(url: URL, headers: Readonly<Record<string, string>>, signal: AbortSignal): Promise<FetchedResponse> {
    try {
      return await guardedFetch(url.href, {
        guard: this.network.route.guard,
        dispatcher: this.network.route.dispatcher,
        userAgent: this.network.userAgent,
        maxBytes: this.network.maxResponseBytes,
        timeoutMs: this.policy.timeout_ms,
        signal,
        headers,
        ...(this.network.route.maxRedirects !== undefined ? { maxRedirects: this.network.route.maxRedirects } : {}),
      });
    } catch (error) {
      if (error instanceof ToolError && error.code === 'timeout') throw new ToolError(`${this.label} did not answer within ${this.policy.timeout_ms} ms`, 'timeout');
      if (error instanceof ToolError && error.code === 'fetch_failed') throw new ToolError(`${this.label} could not be reached: ${error.message}`, 'fetch_failed');
      if (error instanceof NetworkRefusal && this.policy.endpoint !== undefined && !this.policy.allow_private_endpoint) {
        throw new NetworkRefusal(`${error.message}; a self-hosted search endpoint needs search.allow_private_endpoint: true in web_policy.yaml`);
      }
      throw error;
    }
  }

  /** Throws the generic error for a status of 400 and above (providers word their own cases first). */
  refuseStatus(response: FetchedResponse): void {
    if (response.status === 429) throw new ToolError(`${this.label} rate limited the query (HTTP 429)${retryHint(response.headers)}`, 'rate_limited');
    if (response.status >= 400) throw new ToolError(`${this.label} answered ${statusText(response.status)}`, 'provider_error');
  }

  /** The body parsed as JSON; the provider's text is not repeated when it is not JSON. */
  json(response: FetchedResponse): unknown {
    try {
      return JSON.parse(response.body.toString('utf8'));
    } catch {
      const note = response.truncated ? ` (it was cut at ${this.network.maxResponseBytes} bytes)` : '';
      throw new ToolError(`${this.label} answered ${statusText(response.status)} with a body that is not JSON${note}`, 'provider_error');
    }
  }
}

export function statusText(status: number): string {
  const reason = STATUS_CODES[status];
  return `HTTP ${status}${reason !== undefined ? ` ${reason}` : ''}`;
}

function firstHeader(headers: ResponseHeaders, name: string): string | undefined {
  const value = headers[name];
  return Array.isArray(value) ? value[0] : value;
}

/** When to retry, from Retry-After or Brave's X-RateLimit-Reset; only numbers and dates are repeated. */
export function retryHint(headers: ResponseHeaders): string {
  const retryAfter = firstHeader(headers, 'retry-after')?.trim();
  if (retryAfter !== undefined && /^\d{1,9}$/.test(retryAfter)) return `; retry after ${retryAfter} s (Retry-After)`;
  if (retryAfter !== undefined && !Number.isNaN(Date.parse(retryAfter))) return `; retry after ${new Date(retryAfter).toISOString()} (Retry-After)`;
  // Brave sends one number per window ("1, 1419704": per second, per month); the window with
  // nothing remaining is the one that refused.
  const resets = numberList(firstHeader(headers, 'x-ratelimit-reset'));
  const exhausted = numberList(firstHeader(headers, 'x-ratelimit-remaining')).indexOf(0);
  const reset = resets[Math.max(exhausted, 0)];
  return reset !== undefined ? `; the limit resets in ${reset} s (X-RateLimit-Reset)` : '';
}

function numberList(header: string | undefined): number[] {
  const items = (header ?? '').split(',').map((item) => item.trim());
  return items.every((item) => /^\d{1,10}$/.test(item)) ? items.map(Number) : [];
}

/** The host as a guard glob sees it: lower case, IPv6 without brackets. */
function bareHost(url: URL): string {
  return url.hostname.startsWith('[') ? url.hostname.slice(1, -1) : url.hostname;
}

function portOf(url: URL): number {
  return url.port === '' ? (url.protocol === 'https:' ? 443 : 80) : Number(url.port);
}
