import { afterEach, describe, expect, it } from 'vitest';
// The renderer starts its workers from render-worker.js beside it, so it is tested as built.
import { HtmlRenderer, type HtmlRendererOptions } from '../dist/lib/renderer.js';

/** Readability takes seconds over this page. */
const SLOW_PAGE = `<!doctype html><title>Slow</title><body>${'<p>word <b>bold</b> <a href="/x">link</a></p>'.repeat(3000)}</body>`;
const SMALL_PAGE = '<!doctype html><title>Small</title><body><p>hello</p></body>';
const PAGE_URL = 'http://127.0.0.1/page';
const CLOSED = 'the web server is closing: no more pages are converted';
const MARKDOWN_TIMEOUT = 'converting the page to markdown did not finish within the fetch\'s timeout_ms; format "text" reads it in a time linear in its size, format "html" returns the source as served';

const never = new AbortController().signal;
const inSeconds = (seconds: number) => Date.now() + seconds * 1000;

let renderer: HtmlRenderer | undefined;

afterEach(async () => {
  await renderer?.close();
  renderer = undefined;
});

/** A renderer whose workers have loaded jsdom, so that timings below are the pages' own. */
async function warmRenderer(options: HtmlRendererOptions = {}): Promise<HtmlRenderer> {
  const started = new HtmlRenderer(options);
  renderer = started;
  await Promise.all(Array.from({ length: options.workers ?? 2 }, () => started.render(SMALL_PAGE, PAGE_URL, 'markdown', inSeconds(30), never)));
  return started;
}

/** The promise's outcome, and whether it has settled yet (read synchronously). */
function track<T>(promise: Promise<T>): { readonly done: () => boolean; readonly outcome: Promise<T> } {
  let settled = false;
  const outcome = promise.finally(() => {
    settled = true;
  });
  // The outcome is awaited later or not at all (close() in afterEach rejects it): an early
  // rejection must not count as unhandled.
  outcome.catch(() => {});
  return { done: () => settled, outcome };
}

describe('HtmlRenderer', () => {
  it('converts a page to markdown, text and html with its title', async () => {
    const pages = await warmRenderer({ workers: 1 });
    expect(await pages.render(SMALL_PAGE, PAGE_URL, 'markdown', inSeconds(30), never)).toEqual({ content: 'hello', title: 'Small' });
    expect(await pages.render(SMALL_PAGE, PAGE_URL, 'text', inSeconds(30), never)).toEqual({ content: 'hello', title: 'Small' });
    expect(await pages.render(SMALL_PAGE, PAGE_URL, 'html', inSeconds(30), never)).toEqual({ content: SMALL_PAGE, title: 'Small' });
  });

  it('fails a queued page at its own deadline while a slow page holds the only worker', async () => {
    const pages = await warmRenderer({ workers: 1 });
    const slow = track(pages.render(SLOW_PAGE, PAGE_URL, 'markdown', inSeconds(60), never));
    await expect(pages.render(SMALL_PAGE, PAGE_URL, 'markdown', Date.now() + 300, never)).rejects.toThrow(MARKDOWN_TIMEOUT);
    expect(slow.done()).toBe(false);
    await expect(slow.outcome).resolves.toMatchObject({ title: 'Slow' });
  });

  it('rejects a queued page as soon as its call is cancelled', async () => {
    const pages = await warmRenderer({ workers: 1 });
    const slow = track(pages.render(SLOW_PAGE, PAGE_URL, 'markdown', inSeconds(60), never));
    const cancel = new AbortController();
    const queued = pages.render(SMALL_PAGE, PAGE_URL, 'markdown', inSeconds(60), cancel.signal);
    setTimeout(() => cancel.abort(new Error('cancelled by the client')), 100);
    await expect(queued).rejects.toThrow('cancelled by the client');
    expect(slow.done()).toBe(false);
  });

  it('converts a small page in the second worker while a slow page runs in the first', async () => {
    const pages = await warmRenderer();
    const slow = track(pages.render(SLOW_PAGE, PAGE_URL, 'markdown', inSeconds(60), never));
    expect(await pages.render(SMALL_PAGE, PAGE_URL, 'markdown', inSeconds(60), never)).toEqual({ content: 'hello', title: 'Small' });
    expect(slow.done()).toBe(false);
  });

  it('ends a running page at its deadline and converts the next one in a fresh worker', async () => {
    const pages = await warmRenderer({ workers: 1 });
    await expect(pages.render(SLOW_PAGE, PAGE_URL, 'markdown', Date.now() + 300, never)).rejects.toThrow(MARKDOWN_TIMEOUT);
    expect(await pages.render(SMALL_PAGE, PAGE_URL, 'markdown', inSeconds(30), never)).toEqual({ content: 'hello', title: 'Small' });
  });

  it('rejects the running and queued pages on close, and every page after it', async () => {
    const pages = await warmRenderer({ workers: 1 });
    const running = track(pages.render(SLOW_PAGE, PAGE_URL, 'markdown', inSeconds(60), never));
    const queued = track(pages.render(SMALL_PAGE, PAGE_URL, 'markdown', inSeconds(60), never));
    await pages.close();
    await expect(running.outcome).rejects.toThrow(CLOSED);
    await expect(queued.outcome).rejects.toThrow(CLOSED);
    await expect(pages.render(SMALL_PAGE, PAGE_URL, 'text', inSeconds(60), never)).rejects.toThrow(CLOSED);
  });

  it('fails a page that needs more heap than a worker may use, and converts the next page', async () => {
    const pages = await warmRenderer({ workers: 1, maxHeapMb: 64 });
    const huge = `<body>${'<p>word <b>bold</b> <a href="/x">link</a></p>'.repeat(60_000)}</body>`;
    await expect(pages.render(huge, PAGE_URL, 'markdown', inSeconds(60), never)).rejects.toThrow(
      'the page could not be converted: it needed more memory than the converter may use (64 MB)',
    );
    expect(await pages.render(SMALL_PAGE, PAGE_URL, 'markdown', inSeconds(30), never)).toEqual({ content: 'hello', title: 'Small' });
  });
});
