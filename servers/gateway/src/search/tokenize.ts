// Text → index terms. One analyser for tool names, descriptions and queries, so both sides meet:
//   1. words are runs of letters and digits (anything else separates: `_`, `-`, `.`, `:`, `/`, spaces);
//   2. identifiers split further at case changes and letter–digit boundaries
//      (`readFile` → read file, `HTMLParser` → html parser, `utf8` → utf 8);
//   3. lower case; English stop words and one-letter words dropped; the rest Porter-stemmed;
//   4. scripts written without spaces (Han, kana, Hangul) become overlapping character pairs, a
//      common dictionary-free way to index them.

import { stem } from './stemmer.js';

/**
 * Function words that say nothing about what a tool does, plus the politeness and request
 * framing of a question to an assistant ("can you please show me…"). Small on purpose: a word
 * that could name an operation (get, show, find, make, set, run) stays.
 */
export const STOP_WORDS: ReadonlySet<string> = new Set(
  (
    'a an and any are as at be been being but by can could did do does doing for from had has have having he her here hers him his how i ' +
    'if in into is it its itself just me might my myself no nor not of on or our ours ourselves please shall she should so some such ' +
    'than that the their theirs them themselves then there these they this those through to too us very was we were what when where ' +
    'which while who whom whose why will with would you your yours yourself yourselves want need like let lets also etc via'
  ).split(' '),
);

const WORD = /[\p{L}\p{N}]+/gu;
/** Scripts without spaces between words. */
const UNSPACED = /[\p{Script=Han}\p{Script=Hiragana}\p{Script=Katakana}\p{Script=Hangul}]/u;
const UNSPACED_RUN = /[\p{Script=Han}\p{Script=Hiragana}\p{Script=Katakana}\p{Script=Hangul}]+|[^\p{Script=Han}\p{Script=Hiragana}\p{Script=Katakana}\p{Script=Hangul}]+/gu;
/** Case and digit boundaries inside an identifier: fooBar, HTMLParser, utf8, v2beta. */
const IDENTIFIER_PART = /\p{Lu}+(?=\p{Lu}\p{Ll})|\p{Lu}?\p{Ll}+|\p{Lu}+|\p{N}+|[\p{L}\p{M}]+/gu;

/**
 * IDENTIFIER_PART for ASCII, run over a whole text at once: its parts never span a character
 * that is not a letter or digit (the lookahead only looks at letters), so splitting into words
 * first would give the same parts.
 */
const ASCII_IDENTIFIER_PART = /[A-Z]+(?=[A-Z][a-z])|[A-Z]?[a-z]+|[A-Z]+|[0-9]+/g;
const NON_ASCII = /[^\x00-\x7f]/;

/** Lower-case words of `text` before stop words and stemming, identifiers split. */
export function words(text: string): string[] {
  const out: string[] = [];
  if (!NON_ASCII.test(text)) {
    // The common case, with a cheaper pattern than the Unicode ones below (same result on ASCII).
    for (const part of text.match(ASCII_IDENTIFIER_PART) ?? []) out.push(part.toLowerCase());
    return out;
  }
  for (const match of text.matchAll(WORD)) {
    const word = match[0];
    if (UNSPACED.test(word)) {
      for (const run of word.match(UNSPACED_RUN) ?? []) {
        if (UNSPACED.test(run)) pushCharacterPairs(run, out);
        else pushIdentifierParts(run, out);
      }
    } else {
      pushIdentifierParts(word, out);
    }
  }
  return out;
}

function pushIdentifierParts(word: string, out: string[]): void {
  for (const part of word.match(IDENTIFIER_PART) ?? [word]) out.push(part.toLowerCase());
}

function pushCharacterPairs(run: string, out: string[]): void {
  const chars = Array.from(run);
  if (chars.length === 1) {
    out.push(run);
    return;
  }
  for (let i = 0; i + 1 < chars.length; i++) out.push(`${chars[i]}${chars[i + 1]}`);
}

/** Stems already computed: tool vocabularies repeat, and a lookup is cheaper than the stemmer. */
const stems = new Map<string, string>();
const STEM_CACHE_MAX = 100_000;

function cachedStem(word: string): string {
  let result = stems.get(word);
  if (result === undefined) {
    result = stem(word);
    if (stems.size < STEM_CACHE_MAX) stems.set(word, result);
  }
  return result;
}

/** A word as an index term, or undefined for a stop word or a lone Latin letter. */
export function term(word: string, stemming = true): string | undefined {
  if (STOP_WORDS.has(word)) return undefined;
  if (word.length === 1 && /[a-z]/.test(word)) return undefined;
  return stemming ? cachedStem(word) : word;
}

/** Index terms of `text`, in order, repeats kept (term frequency matters). */
export function terms(text: string, stemming = true): string[] {
  return termsOf(words(text), stemming);
}

/** Index terms of words from `words()`. */
export function termsOf(list: readonly string[], stemming = true): string[] {
  const out: string[] = [];
  for (const word of list) {
    const t = term(word, stemming);
    if (t !== undefined) out.push(t);
  }
  return out;
}
