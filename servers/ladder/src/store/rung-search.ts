import { createHash } from 'node:crypto';

/** More terms than this add nothing to a search but time. */
const MAX_TERMS = 32;
const WORD_CHARACTER = /[\p{L}\p{N}]/u;

/**
 * Relevance weight of each place a word can be found: a word in the summary counts most, then the
 * path, then the body. SQLite gives them to bm25 as column weights, PostgreSQL to ts_rank as the
 * weights of the tsvector's classes A, B and C, in the same proportions.
 */
export const SEARCH_WEIGHTS = { summary: 8, body: 1, path: 4, repoToken: 0 } as const;

/**
 * Most matches one search ranks. A query matching more rungs than this is broad: only its most
 * recently created matches, this many, are ranked (a rewrite keeps a rung's row, so its place), so
 * a search stays within a few milliseconds and a broad one is still ordered by relevance. SQLite
 * computes bm25 for every match before sorting, and PostgreSQL reads every match's tsvector to
 * rank it, so either would take tens of milliseconds for a word in most of 100,000 rungs.
 */
export const RANK_WINDOW = 2_000;

/** Words around the matches in a snippet: enough to read a match in its sentence. */
export const SNIPPET_TOKENS = 16;

/** One whitespace-separated term of a query: its text, and whether a trailing `*` made it a prefix. */
export interface SearchTerm {
  /** The term without its trailing `*`s; it holds a letter or a digit. */
  readonly text: string;
  readonly prefix: boolean;
}

/**
 * The terms of free text, the same on both backends: split at whitespace, terms with no letter or
 * digit dropped (a tokenizer would make nothing of them), at most MAX_TERMS, and a trailing `*`
 * kept as a prefix search. Each backend quotes the terms into its own query syntax, so no user
 * text is ever read as syntax.
 */
export function searchTerms(text: string): SearchTerm[] {
  return text
    .split(/\s+/u)
    .filter((term) => WORD_CHARACTER.test(term))
    .slice(0, MAX_TERMS)
    .map((term) => {
      const prefix = /\*+$/u.test(term) && WORD_CHARACTER.test(term.replace(/\*+$/u, ''));
      return { text: prefix ? term.replace(/\*+$/u, '') : term, prefix };
    });
}

/**
 * Turns free text into an FTS5 query that cannot be a syntax error: every term becomes a quoted
 * phrase (so `"`, `-`, `NEAR(`, `OR`, `:` and `^` are plain text), terms are ANDed, and a trailing
 * `*` keeps its meaning as a prefix search. Undefined when nothing searchable is left.
 */
export function ftsQuery(text: string): string | undefined {
  const phrases = searchTerms(text).map((term) => `"${term.text.replaceAll('"', '""')}"${term.prefix ? '*' : ''}`);
  return phrases.length === 0 ? undefined : phrases.join(' ');
}

/**
 * The characters between words, as code point ranges: what SQLite's unicode61 tokenizer treats as
 * separators (everything but letters, digits and private use), for the characters text is likely
 * to hold: ASCII and Latin-1 punctuation and symbols, general punctuation, currency, arrows, math
 * and technical symbols, box drawing, shapes, dingbats, CJK and fullwidth punctuation, emoji.
 * PostgreSQL splits words with these too (the search schema's ladder_search_words, made from this
 * list), so a path's `src/parser/lexer.ts` is the four words SQLite sees, whatever the database's
 * locale. Changing the list needs a new migration of the PostgreSQL schema.
 */
export const WORD_SEPARATORS: readonly (readonly [number, number])[] = [
  [0x00, 0x2f],
  [0x3a, 0x40],
  [0x5b, 0x60],
  [0x7b, 0xa9],
  [0xab, 0xb1],
  [0xb4, 0xb4],
  [0xb6, 0xb8],
  [0xbb, 0xbb],
  [0xbf, 0xbf],
  [0xd7, 0xd7],
  [0xf7, 0xf7],
  [0x2000, 0x206f],
  [0x20a0, 0x20cf],
  [0x2190, 0x245f],
  [0x2500, 0x2775],
  [0x2794, 0x2bff],
  [0x3000, 0x3004],
  [0x3008, 0x3020],
  [0x3030, 0x3030],
  [0xff01, 0xff0f],
  [0xff1a, 0xff20],
  [0xff3b, 0xff40],
  [0xff5b, 0xff65],
  [0x1f000, 0x1f0ff],
  [0x1f10d, 0x1faff],
];

const SEPARATOR_RUN = new RegExp(`[${WORD_SEPARATORS.map(([from, to]) => `\\u{${from.toString(16)}}-\\u{${to.toString(16)}}`).join('')}]+`, 'gu');

/** The words of a term, split where SQLite's tokenizer splits it (`util.js`: `util`, `js`). */
export function termWords(term: string): string[] {
  return term.split(SEPARATOR_RUN).filter((word) => word !== '');
}

/**
 * The word rung_search indexes for a repository: letters and digits only, so the tokenizer keeps
 * it whole, and a hash, so no name can make it collide with another repository's.
 */
export function repoToken(repo: string): string {
  return `repo${createHash('sha256').update(repo).digest('hex').slice(0, 32)}`;
}

/** `match` narrowed to one repository's rungs, when one is given. */
export function inRepository(match: string, repo: string | undefined): string {
  return repo === undefined ? match : `(${match}) AND repo_token : "${repoToken(repo)}"`;
}
