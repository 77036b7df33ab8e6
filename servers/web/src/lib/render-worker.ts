import { parentPort } from 'node:worker_threads';
import { errorMessage } from '@bulkhead/core';
import { htmlTitle, htmlToText } from './content.js';
import { htmlToMarkdown } from './markdown.js';
import { parseDuckDuckGoResults } from './search/duckduckgo.js';
import type { SearchHit } from './search/providers.js';

export type HtmlFormat = 'markdown' | 'text' | 'html';

export interface RenderedHtml {
  readonly content: string;
  readonly title: string | undefined;
}

/** What a worker is asked to read: a fetched page to convert, or a DuckDuckGo results page to list. */
export type RenderJob =
  | { readonly kind: 'page'; readonly html: string; readonly url: string; readonly format: HtmlFormat }
  | { readonly kind: 'duckduckgo'; readonly html: string; readonly url: string };

/** What each kind of job yields. */
export interface JobOutputs {
  readonly page: RenderedHtml;
  readonly duckduckgo: SearchHit[];
}

export type JobKind = RenderJob['kind'];

export interface JobRequest {
  readonly id: number;
  readonly job: RenderJob;
}

/**
 * Why a job failed inside a worker that lives on: `too_deep` is a stack overflow (markup nested
 * past what jsdom's recursive walks can follow), told apart because the model can do nothing
 * about it but should know the page, not the network, was at fault.
 */
export type JobFailure = 'too_deep' | 'error';

export type JobSuccess = { readonly [K in JobKind]: { readonly kind: K; readonly output: JobOutputs[K] } }[JobKind];

export type JobReply = ({ readonly id: number; readonly ok: true } & JobSuccess) | { readonly id: number; readonly ok: false; readonly failure: JobFailure; readonly message: string };

async function perform(job: RenderJob): Promise<JobSuccess> {
  switch (job.kind) {
    case 'page':
      return { kind: 'page', output: await renderPage(job.html, job.url, job.format) };
    case 'duckduckgo':
      return { kind: 'duckduckgo', output: await parseDuckDuckGoResults(job.html, new URL(job.url)) };
  }
}

async function renderPage(html: string, url: string, format: HtmlFormat): Promise<RenderedHtml> {
  if (format === 'markdown') {
    const page = await htmlToMarkdown(html, url);
    return { content: page.markdown, title: page.title };
  }
  return { content: format === 'text' ? htmlToText(html) : html, title: htmlTitle(html) };
}

function failureOf(error: unknown): JobFailure {
  return errorMessage(error).includes('Maximum call stack size exceeded') ? 'too_deep' : 'error';
}

// A worker exists to parse HTML: loading jsdom before the first job arrives lets a replacement
// started after an abandoned job be ready for the next one.
void import('jsdom');

parentPort?.on('message', ({ id, job }: JobRequest) => {
  perform(job).then(
    (success) => parentPort?.postMessage({ id, ok: true, ...success } satisfies JobReply),
    (error: unknown) => parentPort?.postMessage({ id, ok: false, failure: failureOf(error), message: errorMessage(error) } satisfies JobReply),
  );
});
