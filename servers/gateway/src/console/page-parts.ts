import { html } from 'hono/html';
import { actionHref } from './layout.js';
import type { ConsolePage, Html, PageRequest } from './page.js';

/**
 * A form that posts one of a page's actions, with the CSRF field every POST needs. `fields` are
 * the hidden inputs that say exactly what the action is about (a trash id, a definition's hash).
 */
export function actionForm(request: PageRequest, page: Pick<ConsolePage, 'slug'>, action: string, fields: Readonly<Record<string, string>>, body: Html): Html {
  return html`<form method="post" action="${actionHref(request.base, page, action)}">
<input type="hidden" name="csrf" value="${request.csrf}">
${Object.entries(fields).map(([name, value]) => html`<input type="hidden" name="${name}" value="${value}">`)}
${body}
</form>`;
}

/** A time from a record (ISO, UTC) as a person reads it: date and time to the second, in UTC. */
export function timeText(iso: string): string {
  return /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d/.test(iso) ? `${iso.slice(0, 10)} ${iso.slice(11, 19)} UTC` : iso;
}

/** The paragraph a page shows when no gateway serves the console, saying what it cannot know. */
export function noGateway(what: string): Html {
  return html`<p class="muted">No gateway serves this console (it was opened with <code>bulkhead console</code> alone), so ${what}. Start the gateway (<code>bulkhead start</code>) to see it.</p>`;
}
