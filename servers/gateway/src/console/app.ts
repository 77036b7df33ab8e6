import { randomBytes } from 'node:crypto';
import type { HttpBindings } from '@hono/node-server';
import { Hono, type Context } from 'hono';
import { html } from 'hono/html';
import { streamSSE } from 'hono/streaming';
import { CONSOLE_SCRIPT, CONSOLE_STYLES } from './assets.js';
import { redeemLoginTicket, sameSecret, SESSION_MS, type ConsoleSession, type ConsoleSessions } from './auth.js';
import type { ConsoleChanges } from './events.js';
import { FRONT_PAGE_SEGMENT, layout, messagePage, pageHref } from './layout.js';
import type { ActionOutcome, ConsolePage, ConsoleSources, PageRequest } from './page.js';

/** Every console path starts with it, on the gateway's HTTP port and on a port of its own alike. */
export const CONSOLE_BASE = '/console';

/**
 * A console's own base path, `/console/<22 random characters>`: its session cookie is scoped to
 * it. A browser sends a cookie to every port of 127.0.0.1, so with `Path=/console` any local
 * listener a page of 127.0.0.1 points the browser at (a model's preview server, say) would get the
 * session; it cannot get one scoped to a path it does not know. The path is kept in `keys/consoles/`
 * and reaches only the browser `bulkhead console` logs in; banners and replies show `/console/`.
 */
export function privateConsoleBase(): string {
  return `${CONSOLE_BASE}/${randomBytes(16).toString('base64url')}`;
}
/** A form of the console is a few fields; anything bigger is not one of ours. */
export const MAX_FORM_BYTES = 64 * 1024;
/** Browsers listening for live updates at once; more are refused, so each open tab costs bounded memory. */
const MAX_EVENT_STREAMS = 32;
/** An action's outcome is kept this long for the page the browser is sent back to (and its live reloads). */
const OUTCOME_MS = 10 * 60 * 1000;
const MAX_OUTCOMES = 200;

/** Sent with every answer, refusals included: no inline script or style, no framing, no referrer, no caching. */
export const SECURITY_HEADERS: Readonly<Record<string, string>> = {
  'content-security-policy': "default-src 'none'; script-src 'self'; style-src 'self'; connect-src 'self'; img-src 'self'; form-action 'self'; frame-ancestors 'none'; base-uri 'none'",
  'x-frame-options': 'DENY',
  'referrer-policy': 'no-referrer',
  'cache-control': 'no-store',
  'x-content-type-options': 'nosniff',
  'cross-origin-opener-policy': 'same-origin',
  'cross-origin-resource-policy': 'same-origin',
};

/** The exact texts of the refusals (the tests assert them). */
export const REFUSALS = {
  host: 'Refused: this console answers only at its own address (the Host header names another).\n',
  origin: 'Refused: the request comes from another origin than this console.\n',
  crossSite: 'Refused: a form of another site cannot post to this console (Sec-Fetch-Site).\n',
  csrf: "Refused: the form's csrf field is missing or wrong; reload the page and try again.\n",
  tooLarge: `Refused: a console form is at most ${MAX_FORM_BYTES} bytes.\n`,
  formType: 'Refused: console forms are sent as application/x-www-form-urlencoded.\n',
  method: 'Refused: the console answers GET and POST only.\n',
  tooManyStreams: 'Refused: too many live-update streams are open; close some console tabs.\n',
} as const;

export interface ConsoleAppOptions {
  readonly sources: ConsoleSources;
  /** The console's own base path (privateConsoleBase): browser sessions live under it only. */
  readonly base: string;
  readonly pages: readonly ConsolePage[];
  /** The console's own `host:port` as browsers write it in Host (`127.0.0.1:43123`), once it listens. */
  readonly address: () => string | undefined;
  /** The console secret a script sends, read (and made, the first time) when asked for; undefined when its file is unusable. */
  readonly secret: () => string | undefined;
  readonly sessions: ConsoleSessions;
  readonly changes: ConsoleChanges;
  /** The footer's words on what serves this console. */
  readonly servedBy: string;
}

/** Who is asking, once the secret or the session cookie was checked: a script with the secret has no session (and needs no csrf field). */
type Caller = { readonly kind: 'session'; readonly session: ConsoleSession } | { readonly kind: 'secret' };

type Env = { Bindings: HttpBindings; Variables: { caller: Caller } };

interface KeptOutcome {
  readonly outcome: ActionOutcome;
  /** The session it belongs to, so a link cannot show one browser's outcome in another. */
  readonly owner: string;
  readonly at: number;
}

function text(c: Context, status: 400 | 401 | 403 | 404 | 405 | 413 | 415 | 421 | 503, body: string): Response {
  return c.body(body, status, { 'content-type': 'text/plain; charset=utf-8' });
}

/** The body of a request, refused past `limit` bytes whatever Content-Length says. */
async function boundedBody(request: Request, limit: number): Promise<string | undefined> {
  const declared = Number(request.headers.get('content-length') ?? '0');
  if (declared > limit) return undefined;
  if (!request.body) return '';
  const chunks: Uint8Array[] = [];
  let size = 0;
  for await (const chunk of request.body as unknown as AsyncIterable<Uint8Array>) {
    size += chunk.byteLength;
    if (size > limit) return undefined;
    chunks.push(chunk);
  }
  return Buffer.concat(chunks).toString('utf8');
}

/**
 * The console as a Hono app: every request is checked (Host, Origin, then the secret or the
 * session cookie, then for a POST its site and csrf field) before a page or action sees it.
 */
export function createConsoleApp(options: ConsoleAppOptions): Hono<Env> {
  const { sources, pages, sessions } = options;
  const { base } = options;
  const outcomes = new Map<string, KeptOutcome>();
  const cookieName = () => `bulkhead_console_${(options.address() ?? '').replace(/^.*:/, '')}`;
  const app = new Hono<Env>();

  const keepOutcome = (outcome: ActionOutcome, owner: string): string => {
    const now = Date.now();
    for (const [id, kept] of outcomes) if (kept.at < now - OUTCOME_MS || outcomes.size >= MAX_OUTCOMES) outcomes.delete(id);
    const id = randomBytes(9).toString('base64url');
    outcomes.set(id, { outcome, owner, at: now });
    return id;
  };
  const ownerOf = (caller: Caller) => (caller.kind === 'session' ? caller.session.id : 'secret');

  app.use('*', async (c, next) => {
    await next();
    for (const [name, value] of Object.entries(SECURITY_HEADERS)) c.res.headers.set(name, value);
  });

  // DNS rebinding: a page of evil.example resolved to 127.0.0.1 sends its own name as Host.
  app.use('*', async (c, next) => {
    const own = options.address();
    if (own === undefined || (c.req.header('host') ?? '').toLowerCase() !== own.toLowerCase()) return text(c, 421, REFUSALS.host);
    // With Referrer-Policy no-referrer a browser sends `Origin: null` even on its own forms; its
    // Sec-Fetch-Site, which no page can set, then says whether the form was the console's.
    const origin = c.req.header('origin');
    const ownNull = origin === 'null' && c.req.header('sec-fetch-site') === 'same-origin';
    if (origin !== undefined && origin !== `http://${own}` && !ownNull) return text(c, 403, REFUSALS.origin);
    if (c.req.method !== 'GET' && c.req.method !== 'HEAD' && c.req.method !== 'POST') return text(c, 405, REFUSALS.method);
    return next();
  });

  app.get('/', (c) => c.redirect(`${CONSOLE_BASE}/`, 303));
  app.get(CONSOLE_BASE, (c) => c.redirect(`${CONSOLE_BASE}/`, 303));
  app.get(base, (c) => c.redirect(`${base}/`, 303));
  for (const assets of [CONSOLE_BASE, base]) {
    app.get(`${assets}/console.js`, (c) => c.body(CONSOLE_SCRIPT, 200, { 'content-type': 'text/javascript; charset=utf-8' }));
    app.get(`${assets}/console.css`, (c) => c.body(CONSOLE_STYLES, 200, { 'content-type': 'text/css; charset=utf-8' }));
  }

  const unauthorized = async (c: Context, title: string, why: string) =>
    c.html(
      await messagePage(
        title,
        [
          html`${why}`,
          html`Open the console with <code>bulkhead console</code> in a terminal on this machine (with <code>--config DIR</code> if the gateway uses another control-plane folder): it logs this browser in with a link that works once, for a minute.`,
          html`A script sends <code>Authorization: Bearer</code> with the console secret, kept in <code>keys/console.secret</code> of the control-plane folder.`,
        ],
        CONSOLE_BASE,
      ),
      401,
      { 'www-authenticate': 'Bearer realm="bulkhead console"' },
    );

  app.get(`${base}/login`, (c) => {
    const ticket = c.req.query('ticket') ?? '';
    if (!redeemLoginTicket(sources.controlDir, ticket)) {
      return unauthorized(c, 'This login link does not work', 'This login link was used already, has expired (a link works once, within a minute) or was not made by bulkhead console.');
    }
    const session = sessions.open();
    c.header('set-cookie', `${cookieName()}=${session.id}; Path=${base}; HttpOnly; SameSite=Strict; Max-Age=${Math.floor(SESSION_MS / 1000)}`);
    return c.redirect(`${base}/`, 303);
  });

  /**
   * The secret in the Authorization header (anywhere under /console), or the session cookie (under
   * the console's own base only); a wrong Authorization header is refused even beside a good cookie.
   */
  const callerOf = (c: Context): Caller | undefined => {
    const authorization = c.req.header('authorization');
    if (authorization !== undefined) {
      const given = /^Bearer\s+(\S+)\s*$/i.exec(authorization)?.[1];
      const secret = given === undefined ? undefined : options.secret();
      return given !== undefined && secret !== undefined && sameSecret(secret, given) ? { kind: 'secret' } : undefined;
    }
    const path = new URL(c.req.url).pathname;
    if (path !== base && !path.startsWith(`${base}/`)) return undefined;
    const cookie = c.req.header('cookie') ?? '';
    const name = cookieName();
    for (const part of cookie.split(';')) {
      const [key, ...value] = part.trim().split('=');
      if (key !== name) continue;
      const session = sessions.find(value.join('='));
      if (session) return { kind: 'session', session };
    }
    return undefined;
  };

  app.use(`${CONSOLE_BASE}/*`, async (c, next) => {
    const caller = callerOf(c);
    if (!caller) return unauthorized(c, 'Log in to the Bulkhead console', 'This browser is not logged in to the console (or its session ended when the console restarted).');
    c.set('caller', caller);
    return next();
  });

  /** The base a request came under: a script with the secret may use /console itself. */
  const baseOf = (c: Context): string => (new URL(c.req.url).pathname.startsWith(`${base}/`) ? base : CONSOLE_BASE);
  const pageRequest = (c: Context<Env>, caller: Caller): PageRequest => ({
    query: new URLSearchParams(new URL(c.req.url).search),
    csrf: caller.kind === 'session' ? caller.session.csrf : '',
    base: baseOf(c),
    actor: `the Bulkhead console (${c.env.incoming.socket.remoteAddress ?? 'unknown address'})`,
  });

  let streams = 0;
  const events = (c: Context<Env>) => {
    if (streams >= MAX_EVENT_STREAMS) return text(c, 503, REFUSALS.tooManyStreams);
    streams++;
    return streamSSE(c, async (stream) => {
      let changed = 0;
      const stop = options.changes.subscribe(() => {
        changed++;
        void stream.writeSSE({ event: 'changed', data: String(changed) }).catch(() => undefined);
      });
      stream.onAbort(stop);
      try {
        await stream.writeSSE({ event: 'ready', data: '0', retry: 3000 });
        while (!stream.aborted && !stream.closed) {
          await stream.sleep(15_000);
          await stream.write(': keep-alive\n\n');
        }
      } finally {
        stop();
        streams--;
      }
    });
  };

  const pageFor = (segment: string): ConsolePage | undefined => pages.find((page) => page.slug === segment && page.slug !== '');
  const frontPage = pages.find((page) => page.slug === '');

  const renderPage = async (c: Context<Env>, page: ConsolePage) => {
    const caller = c.get('caller');
    const request = pageRequest(c, caller);
    const kept = outcomes.get(request.query.get('outcome') ?? '');
    const outcome = kept && kept.owner === ownerOf(caller) ? kept.outcome : undefined;
    const content = await page.render(sources, request);
    return c.html(await layout({ base: request.base, pages, current: page, content, servedBy: options.servedBy, ...(outcome ? { outcome } : {}) }));
  };

  for (const under of [base, CONSOLE_BASE]) {
    app.get(`${under}/events`, events);
    app.get(`${under}/`, (c) => (frontPage ? renderPage(c, frontPage) : text(c, 404, 'No front page.\n')));
    app.get(`${under}/:slug`, (c) => {
      const page = pageFor(c.req.param('slug'));
      return page ? renderPage(c, page) : text(c, 404, 'No such console page.\n');
    });

    app.post(`${under}/:segment/:action`, async (c) => {
      const caller = c.get('caller');
      const site = c.req.header('sec-fetch-site');
      if (site !== undefined && site !== 'same-origin') return text(c, 403, REFUSALS.crossSite);
      const type = (c.req.header('content-type') ?? '').split(';')[0]!.trim().toLowerCase();
      if (type !== 'application/x-www-form-urlencoded') return text(c, 415, REFUSALS.formType);
      const body = await boundedBody(c.req.raw, MAX_FORM_BYTES);
      if (body === undefined) return text(c, 413, REFUSALS.tooLarge);
      const form = new URLSearchParams(body);
      // Header credentials are never sent by a browser on its own, so only a cookie session needs the form's proof.
      if (caller.kind === 'session' && !sameSecret(caller.session.csrf, form.get('csrf') ?? '')) return text(c, 403, REFUSALS.csrf);
      const segment = c.req.param('segment');
      const page = segment === FRONT_PAGE_SEGMENT ? frontPage : pageFor(segment);
      const action = page?.actions?.[c.req.param('action')];
      if (!page || !action) return text(c, 404, 'No such console action.\n');
      const outcome = await action(sources, form, pageRequest(c, caller));
      return c.redirect(`${pageHref(under, page)}?outcome=${keepOutcome(outcome, ownerOf(caller))}`, 303);
    });
  }

  app.notFound((c) => text(c, 404, 'Not found.\n'));
  app.onError((error, c) => c.body(`The console failed: ${error.message}\n`, 500, { 'content-type': 'text/plain; charset=utf-8' }));
  return app;
}
