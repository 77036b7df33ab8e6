import { searchTerms, termWords, WORD_SEPARATORS, type SearchTerm } from '../rung-search.js';

/**
 * Longest word PostgreSQL indexes, in bytes: to_tsvector leaves a longer one out of every rung, so
 * a query holding one can match nothing.
 */
const MAX_WORD_BYTES = 2_047;

/** A query for PostgreSQL's to_tsquery: every term (`all`), and any one of them (`any`, for choosing where to cut a snippet). */
export interface PgSearchQuery {
  readonly all: string;
  readonly any: string;
}

/** A word as a quoted to_tsquery operand: quotes doubled and backslashes escaped, though termWords leaves neither. */
function operand(word: string): string {
  return `'${word.replaceAll('\\', '\\\\').replaceAll("'", "''")}'`;
}

/** A term as to_tsquery text: its words as a phrase (`util.js`: `'util' <-> 'js'`), the last one a prefix when the term is. */
function termQuery(term: SearchTerm): string {
  const words = termWords(term.text);
  return `(${words.map((word, i) => `${operand(word)}${term.prefix && i === words.length - 1 ? ':*' : ''}`).join(' <-> ')})`;
}

/**
 * Free text as to_tsquery text that cannot be a syntax error nor mean more than its words: the
 * terms of searchTerms (shared with SQLite) are split into words where the index splits text
 * (termWords: every character of to_tsquery's syntax, `&|!():*'\<>` and quotes, is a separator),
 * each word is quoted, the words of a term are a phrase, terms are ANDed and a trailing `*` is a
 * prefix search. Undefined when nothing searchable is left, or when a word is too long for any
 * rung to hold it.
 */
export function pgSearchQuery(text: string): PgSearchQuery | undefined {
  const terms = searchTerms(text);
  if (terms.length === 0) return undefined;
  if (terms.some((term) => termWords(term.text).some((word) => Buffer.byteLength(word) > MAX_WORD_BYTES))) return undefined;
  const queries = terms.map(termQuery);
  return { all: queries.join(' & '), any: queries.join(' | ') };
}

/**
 * WORD_SEPARATORS as a PostgreSQL regular expression bracket, for ladder_search_words. NUL is left
 * out: PostgreSQL text cannot hold it.
 */
export function separatorBracket(): string {
  const escape = (codePoint: number) => `\\U${codePoint.toString(16).padStart(8, '0')}`;
  return `[${WORD_SEPARATORS.map(([from, to]) => `${escape(Math.max(from, 1))}-${escape(to)}`).join('')}]`;
}

/** Characters that mark matches in ladder_search_snippet's output (see rungs-schema.ts). */
const MATCH_MARK = /[\x02\x03]/gu;

/**
 * A snippet as SQLite's snippet() shows one: matches in [brackets], `…` where the text goes on
 * before or after. `headline` is ladder_search_snippet's cut of `content`, its matches between
 * \x02 and \x03; ts_headline leaves a text's last numbers out of a cut that reaches them, so
 * whatever follows the cut without a letter in it is put back.
 */
export function snippetOf(content: string, headline: string): string {
  const text = content.replace(/[\x01-\x03]/gu, ' ');
  const plain = headline.replace(MATCH_MARK, '');
  const start = text.indexOf(plain);
  let marked = headline;
  let end = start + plain.length;
  if (start >= 0 && !/\p{L}/u.test(text.slice(end))) {
    marked += text.slice(end);
    end = text.length;
  }
  const before = start > 0 && text.slice(0, start).trim() !== '' ? '…' : '';
  const after = start >= 0 && text.slice(end).trim() !== '' ? '…' : '';
  return `${before}${marked.replaceAll('\x02', '[').replaceAll('\x03', ']')}${after}`;
}

/** How many matches a headline marks: the snippet of the text that matches most is shown. */
export function matchesIn(headline: string): number {
  return headline.split('\x02').length - 1;
}
