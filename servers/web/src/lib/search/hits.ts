import { z } from 'zod';
import { htmlToText } from '../content.js';
import type { SearchHit } from './providers.js';

const MAX_TITLE_CHARS = 300;
const MAX_SNIPPET_CHARS = 1000;

/** A result as a provider gave it: any field may be missing, titles and snippets may carry markup. */
export interface RawHit {
  readonly title?: string | undefined;
  readonly url?: string | undefined;
  readonly snippet?: string | undefined;
}

/**
 * A hit with plain-text title and snippet, both capped, or undefined when its URL is not an
 * absolute http(s) URL (a provider's own links, javascript: and the like are dropped).
 */
export function cleanHit(raw: RawHit, markup: 'html' | 'text'): SearchHit | undefined {
  const url = httpUrl(raw.url);
  if (url === undefined) return undefined;
  const plain = (text: string | undefined) => oneLine(markup === 'html' ? htmlToText(text ?? '') : (text ?? ''));
  return { title: cap(plain(raw.title) || url, MAX_TITLE_CHARS), url, snippet: cap(plain(raw.snippet), MAX_SNIPPET_CHARS) };
}

function httpUrl(text: string | undefined): string | undefined {
  if (text === undefined) return undefined;
  try {
    const url = new URL(text.trim());
    return url.protocol === 'http:' || url.protocol === 'https:' ? url.href : undefined;
  } catch {
    return undefined;
  }
}

function oneLine(text: string): string {
  return text.replace(/\s+/g, ' ').trim();
}

function cap(text: string, max: number): string {
  return text.length <= max ? text : `${text.slice(0, max - 1).trimEnd()}…`;
}

const jsonObject = z.record(z.string(), z.unknown());

/**
 * Hits from a JSON API's result objects (title, url and a snippet field that may hold markup); an
 * item that is not an object or lacks a usable URL is skipped, not fatal.
 */
export function hitsFromJson(items: readonly unknown[], snippetField: string): SearchHit[] {
  return items.flatMap((item): SearchHit[] => {
    const parsed = jsonObject.safeParse(item);
    if (!parsed.success) return [];
    const text = (name: string) => {
      const value = parsed.data[name];
      return typeof value === 'string' ? value : undefined;
    };
    const hit = cleanHit({ title: text('title'), url: text('url'), snippet: text(snippetField) }, 'html');
    return hit !== undefined ? [hit] : [];
  });
}
