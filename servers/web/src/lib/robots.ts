import { errorMessage, NetworkRefusal, ToolError } from '@bulkhead/core';
import { RedirectRefusal, type FetchedResponse } from './fetch.js';

/** RFC 9309 asks crawlers to read at least 500 KiB of a robots.txt; more than that is not read. */
export const MAX_ROBOTS_BYTES = 512 * 1024;

/** A robots.txt that could not be read disallows its host only this long, so a brief outage passes. */
const UNREACHABLE_TTL_MS = 60_000;

const MAX_HOSTS = 512;

interface RobotsRule {
  readonly allow: boolean;
  readonly pattern: string;
}

/** What a host's robots.txt says for this user agent. */
type HostRules = { readonly kind: 'rules'; readonly rules: readonly RobotsRule[] } | { readonly kind: 'disallow_all'; readonly reason: string };

interface HeldRules {
  readonly rules: HostRules;
  readonly until: number;
}

export interface RobotsOptions {
  /** GETs a robots.txt URL (through the same guard and connector as every other fetch). */
  readonly fetchRobots: (url: URL) => Promise<FetchedResponse>;
  /** The user agent's product token, matched against User-agent lines. */
  readonly productToken: string;
  readonly ttlMs: number;
  readonly now?: () => number;
}

/**
 * Checks URLs against their host's robots.txt (RFC 9309): the groups naming this user agent, or
 * the `*` groups when none does; the longest matching rule wins and Allow wins a tie. A 4xx answer
 * allows everything, a 5xx answer or an unreachable file disallows everything. Each host's answer
 * is held for `ttlMs` (an unreachable one for at most a minute).
 */
export class RobotsRules {
  private readonly held = new Map<string, HeldRules>();
  private readonly pending = new Map<string, Promise<HostRules>>();
  private readonly now: () => number;

  constructor(private readonly options: RobotsOptions) {
    this.now = options.now ?? Date.now;
  }

  /** Throws a ToolError naming the rule when robots.txt disallows `url`. */
  async check(url: URL, signal: AbortSignal): Promise<void> {
    if (url.pathname === '/robots.txt') return;
    const rules = await abortable(this.rulesFor(url.origin), signal);
    const path = url.pathname + url.search;
    if (rules.kind === 'disallow_all') throw new ToolError(`${url.href} is not fetched: ${rules.reason} (robots.respect: false in web_policy.yaml ignores robots.txt)`, 'robots_disallowed');
    const rule = decidingRule(rules.rules, normalisePath(path));
    // The rule's own text is the site's words: it is not repeated outside the untrusted wrapper.
    if (rule !== undefined && !rule.allow) {
      throw new ToolError(
        `${url.href} is disallowed by ${url.origin}/robots.txt for ${this.options.productToken} (a Disallow rule matches it; robots.respect: false in web_policy.yaml ignores robots.txt)`,
        'robots_disallowed',
      );
    }
  }

  private rulesFor(origin: string): Promise<HostRules> {
    const held = this.held.get(origin);
    if (held !== undefined && held.until > this.now()) return Promise.resolve(held.rules);
    const inFlight = this.pending.get(origin);
    if (inFlight !== undefined) return inFlight;
    const loading = this.load(origin).finally(() => this.pending.delete(origin));
    this.pending.set(origin, loading);
    return loading;
  }

  private async load(origin: string): Promise<HostRules> {
    const robotsUrl = new URL('/robots.txt', origin);
    let rules: HostRules;
    let ttl = this.options.ttlMs;
    try {
      const response = await this.options.fetchRobots(robotsUrl);
      if (response.status >= 500) {
        rules = { kind: 'disallow_all', reason: `${robotsUrl.href} answered HTTP ${response.status}, which disallows the whole host until it answers again` };
        ttl = Math.min(ttl, UNREACHABLE_TTL_MS);
      } else if (response.status >= 400) {
        rules = { kind: 'rules', rules: [] };
      } else {
        rules = { kind: 'rules', rules: parseRobots(response.body.toString('utf8'), this.options.productToken) };
      }
    } catch (error) {
      // The guard refusing the host refuses the page the same way: that refusal is the answer, not robots.txt.
      if (error instanceof NetworkRefusal && !(error instanceof RedirectRefusal)) throw error;
      // A robots.txt that redirects too often or somewhere refused is unavailable, like a 4xx (RFC 9309 2.3.1.2).
      if (error instanceof RedirectRefusal || (error instanceof ToolError && error.code === 'too_many_redirects')) {
        rules = { kind: 'rules', rules: [] };
      } else {
        rules = { kind: 'disallow_all', reason: `${robotsUrl.href} could not be read (${errorMessage(error)}), which disallows the whole host until it can` };
        ttl = Math.min(ttl, UNREACHABLE_TTL_MS);
      }
    }
    this.held.delete(origin);
    this.held.set(origin, { rules, until: this.now() + ttl });
    if (this.held.size > MAX_HOSTS) this.held.delete(this.held.keys().next().value!);
    return rules;
  }
}

/**
 * The rules of a robots.txt that apply to `productToken`: every group whose User-agent line names
 * it (case-insensitively), else every `*` group. Lines are `key: value`, `#` starts a comment,
 * consecutive User-agent lines open one group.
 */
export function parseRobots(text: string, productToken: string): RobotsRule[] {
  const token = productToken.toLowerCase();
  const named: RobotsRule[] = [];
  const anyAgent: RobotsRule[] = [];
  let namesToken = false;
  let namesAny = false;
  let inRules = false;
  let namedFound = false;
  for (const rawLine of text.split(/\r\n|\r|\n/)) {
    const line = rawLine.replace(/#.*$/, '').trim();
    const colon = line.indexOf(':');
    if (colon === -1) continue;
    const key = line.slice(0, colon).trim().toLowerCase();
    const value = line.slice(colon + 1).trim();
    if (key === 'user-agent') {
      if (inRules) namesToken = namesAny = false;
      inRules = false;
      const agent = value.toLowerCase();
      namesToken ||= agent === token;
      namesAny ||= agent === '*';
      namedFound ||= agent === token;
      continue;
    }
    if (key !== 'allow' && key !== 'disallow') continue;
    inRules = true;
    if (value === '' || (!namesToken && !namesAny)) continue;
    const rule = { allow: key === 'allow', pattern: normalisePath(value) };
    if (namesToken) named.push(rule);
    if (namesAny) anyAgent.push(rule);
  }
  return namedFound ? named : anyAgent;
}

/** The longest rule matching `path`; of equally long ones, an Allow. */
function decidingRule(rules: readonly RobotsRule[], path: string): RobotsRule | undefined {
  let best: RobotsRule | undefined;
  for (const rule of rules) {
    if (!patternMatches(rule.pattern, path)) continue;
    if (best === undefined || rule.pattern.length > best.pattern.length || (rule.pattern.length === best.pattern.length && rule.allow && !best.allow)) best = rule;
  }
  return best;
}

const UNRESERVED = /[A-Za-z0-9\-._~]/;

/**
 * A path or pattern in the one form both are compared in (RFC 9309 2.2.2): non-ASCII characters
 * and spaces percent-encoded, escapes of unreserved characters decoded (`%70rivate` is `private`),
 * other escapes in upper case.
 */
function normalisePath(text: string): string {
  return text
    .replace(/[^\x21-\x7e]/gu, (character) => encodeURIComponent(character))
    .replace(/%([0-9a-fA-F]{2})/g, (escape, hex: string) => {
      const character = String.fromCharCode(Number.parseInt(hex, 16));
      return UNRESERVED.test(character) ? character : escape.toUpperCase();
    });
}

/**
 * Whether a robots pattern (`*` any characters, a final `$` the end of the path) matches the start
 * of `path`. The literal pieces between the `*`s are found leftmost-first with indexOf, which is
 * exact for `*`-only wildcards and costs about one pass over the path per rule, so a hostile
 * robots.txt cannot make a check slow.
 */
export function patternMatches(pattern: string, path: string): boolean {
  const anchored = pattern.endsWith('$');
  const pieces = (anchored ? pattern.slice(0, -1) : pattern).split('*');
  const first = pieces[0]!;
  if (!path.startsWith(first)) return false;
  if (pieces.length === 1) return !anchored || path.length === first.length;
  let position = first.length;
  const last = pieces.length - 1;
  for (let index = 1; index < last; index += 1) {
    const found = path.indexOf(pieces[index]!, position);
    if (found === -1) return false;
    position = found + pieces[index]!.length;
  }
  const tail = pieces[last]!;
  if (anchored) return path.length - tail.length >= position && path.endsWith(tail);
  return path.indexOf(tail, position) !== -1;
}

function abortable<T>(promise: Promise<T>, signal: AbortSignal): Promise<T> {
  if (signal.aborted) return Promise.reject(signal.reason);
  return new Promise<T>((resolve, reject) => {
    const onAbort = () => reject(signal.reason);
    signal.addEventListener('abort', onAbort, { once: true });
    promise.then(
      (value) => {
        signal.removeEventListener('abort', onAbort);
        resolve(value);
      },
      (error: unknown) => {
        signal.removeEventListener('abort', onAbort);
        reject(error);
      },
    );
  });
}
