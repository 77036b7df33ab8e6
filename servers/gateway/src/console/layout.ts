import { html } from 'hono/html';
import type { ActionOutcome, ConsolePage, Html } from './page.js';

/** A page's address under the console's base path: the front page is `<base>/`. */
export function pageHref(base: string, page: Pick<ConsolePage, 'slug'>): string {
  return `${base}/${page.slug}`;
}

/** The front page's actions need a path segment of their own (`<base>/approvals/decide`). */
export const FRONT_PAGE_SEGMENT = 'approvals';

/** Where a page's form posts one of its actions. */
export function actionHref(base: string, page: Pick<ConsolePage, 'slug'>, action: string): string {
  return `${base}/${page.slug || FRONT_PAGE_SEGMENT}/${action}`;
}

export interface LayoutInput {
  readonly base: string;
  readonly pages: readonly ConsolePage[];
  readonly current: ConsolePage;
  readonly outcome?: ActionOutcome;
  /** Said in the footer: what serves this console. */
  readonly servedBy: string;
  readonly content: Html;
}

/** The page around every page: navigation over the pages, the outcome of the last action, and the live-update script. */
export function layout(input: LayoutInput): Html {
  const { base, current } = input;
  return html`<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>${current.title} · Bulkhead console</title>
<link rel="stylesheet" href="${base}/console.css">
<script src="${base}/console.js" defer></script>
</head>
<body data-live="${current.live === true ? 'true' : 'false'}" data-events="${base}/events">
<header>
<strong>Bulkhead console</strong>
<nav>${input.pages.map((page) => html`<a href="${pageHref(base, page)}"${page === current ? html` aria-current="page"` : ''}>${page.title}</a>`)}</nav>
</header>
<main>
${input.outcome ? html`<p class="outcome ${input.outcome.ok ? 'ok' : 'refused'}" role="status">${input.outcome.message}</p>` : ''}
<h1>${current.title}</h1>
${input.content}
</main>
<footer>${input.servedBy}</footer>
</body>
</html>
`;
}

/** A page of its own for a refusal that a person sees in the browser (the 401 that says how to get in). */
export function messagePage(title: string, paragraphs: readonly Html[], base: string): Html {
  return html`<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<title>${title} · Bulkhead console</title>
<link rel="stylesheet" href="${base}/console.css">
</head>
<body>
<main>
<h1>${title}</h1>
${paragraphs.map((paragraph) => html`<p>${paragraph}</p>`)}
</main>
</body>
</html>
`;
}
