import type { HtmlEscapedString } from 'hono/utils/html';
import type { ApprovalStoreApi, PermissionGate } from '@bulkhead/core';
import type { Gateway } from '../gateway.js';

/** What a page renders: Hono's `html` tagged template (which escapes every interpolated value). */
export type Html = HtmlEscapedString | Promise<HtmlEscapedString>;

/** What the console shows: views over what already exists, never a copy of it. */
export interface ConsoleSources {
  readonly controlDir: string;
  readonly roots: readonly string[];
  readonly approvals: ApprovalStoreApi;
  /** The gateway's permissions.yaml, as loaded (the Policy page explains it). */
  readonly permissions: PermissionGate;
  /** The live gateway when one serves the console; absent when `bulkhead console` serves it alone. */
  readonly gateway?: Gateway;
}

export interface PageRequest {
  readonly query: URLSearchParams;
  /** Every form carries it as the hidden field `csrf`; a POST without it is refused. */
  readonly csrf: string;
  /** The console's path prefix, `/console`: every link and form action starts with it. */
  readonly base: string;
  /** Who acts, in words for the store and the audit log: `the Bulkhead console (127.0.0.1)`. */
  readonly actor: string;
}

/** What a POST did, shown at the top of the page it redirects back to. */
export interface ActionOutcome {
  readonly ok: boolean;
  readonly message: string;
}

export type PageAction = (sources: ConsoleSources, form: URLSearchParams, request: PageRequest) => Promise<ActionOutcome>;

/**
 * One page of the console: `GET <base>/<slug>` renders it inside the layout; `POST
 * <base>/<slug>/<action>` runs one of its actions after the secret, Host, Origin and CSRF checks,
 * then redirects back (303) to the page with the outcome. Every decision is a plain form, so the
 * pages work without JavaScript.
 */
export interface ConsolePage {
  /** `''` for the front page (Approvals), else `activity`, `quarantine`, `servers`, `trash`, `policy`. */
  readonly slug: string;
  /** The navigation label and the page's heading. */
  readonly title: string;
  render(sources: ConsoleSources, request: PageRequest): Html;
  readonly actions?: Readonly<Record<string, PageAction>>;
  /** Reloaded when the console's live events say something changed (approvals, activity, servers). */
  readonly live?: boolean;
}
