import { parentPort } from 'node:worker_threads';
import { errorMessage } from '@bulkhead/core';
import { htmlTitle, htmlToText } from './content.js';
import { htmlToMarkdown } from './markdown.js';

export type HtmlFormat = 'markdown' | 'text' | 'html';

export interface RenderTask {
  readonly id: number;
  readonly html: string;
  readonly url: string;
  readonly format: HtmlFormat;
}

export interface RenderedHtml {
  readonly content: string;
  readonly title: string | undefined;
}

export type RenderReply = { readonly id: number; readonly ok: true; readonly page: RenderedHtml } | { readonly id: number; readonly ok: false; readonly error: string };

async function render(task: RenderTask): Promise<RenderedHtml> {
  if (task.format === 'markdown') {
    const page = await htmlToMarkdown(task.html, task.url);
    return { content: page.markdown, title: page.title };
  }
  return { content: task.format === 'text' ? htmlToText(task.html) : task.html, title: htmlTitle(task.html) };
}

parentPort?.on('message', (task: RenderTask) => {
  render(task).then(
    (page) => parentPort?.postMessage({ id: task.id, ok: true, page } satisfies RenderReply),
    (error: unknown) => parentPort?.postMessage({ id: task.id, ok: false, error: errorMessage(error) } satisfies RenderReply),
  );
});
