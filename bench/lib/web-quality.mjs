// Extraction quality of a fetched page against Readability's expected output: is the title there,
// and what share of the expected article's words the reply contains.
import { createRequire } from 'node:module';

/**
 * A word is a run of letters, digits and marks, except that every Chinese or Japanese character is
 * a word of its own: those scripts put no spaces between words, and a run would break wherever
 * Markdown adds emphasis or a link inside a sentence.
 */
const WORD = /[\p{sc=Han}\p{sc=Hiragana}\p{sc=Katakana}]|(?:(?![\p{sc=Han}\p{sc=Hiragana}\p{sc=Katakana}])[\p{L}\p{N}\p{M}])+/gu;

/** Elements whose edges separate words, though textContent joins their text without a space. */
const BLOCK_TAG = /<\/?(?:address|article|aside|blockquote|br|dd|div|dl|dt|figcaption|figure|footer|h[1-6]|header|hr|li|main|nav|ol|p|pre|section|table|tbody|td|tfoot|th|thead|tr|ul)\b[^>]*>/gi;

export function words(text) {
  return text.normalize('NFKC').toLowerCase().match(WORD) ?? [];
}

/**
 * The jsdom bulkhead-web depends on: the bench has no HTML parser of its own, and expected.html's
 * entities and markup should be read as a browser would.
 */
const { JSDOM } = createRequire(new URL('../../servers/web/package.json', import.meta.url))('jsdom');

/** The words of an expected.html. */
export function expectedWords(html) {
  const dom = new JSDOM(html.replace(BLOCK_TAG, (tag) => ` ${tag} `));
  try {
    return words(dom.window.document.body?.textContent ?? '');
  } finally {
    dom.window.close();
  }
}

/**
 * Bag-of-words recall: the share of the expected words (counted with repeats) that the reply has,
 * each reply word matching at most one expected occurrence. Order is ignored, so a reply that
 * moves a paragraph loses nothing and one that repeats a sentence gains nothing.
 */
export function textRecall(expected, got) {
  if (expected.length === 0) return 1;
  const counts = new Map();
  for (const word of got) counts.set(word, (counts.get(word) ?? 0) + 1);
  let found = 0;
  for (const word of expected) {
    const left = counts.get(word) ?? 0;
    if (left > 0) {
      found += 1;
      counts.set(word, left - 1);
    }
  }
  return found / expected.length;
}

/**
 * The title counts as found when its words appear consecutively anywhere in the reply (a
 * `Title:` line, a heading or the text), so case, spacing, punctuation and Markdown escapes
 * do not matter.
 */
export function titleFound(title, got) {
  const want = words(title ?? '');
  if (want.length === 0) return true;
  outer: for (let at = 0; at + want.length <= got.length; at++) {
    for (let i = 0; i < want.length; i++) if (got[at + i] !== want[i]) continue outer;
    return true;
  }
  return false;
}
