/** More terms than this add nothing to a search but time. */
const MAX_TERMS = 32;
const WORD_CHARACTER = /[\p{L}\p{N}]/u;

/**
 * Turns free text into an FTS5 query that cannot be a syntax error: every whitespace-separated
 * term becomes a quoted phrase (so `"`, `-`, `NEAR(`, `OR`, `:` and `^` are plain text), terms
 * are ANDed, and a trailing `*` keeps its meaning as a prefix search. Terms with no letter or
 * digit are dropped, since the tokenizer would make an empty phrase of them. Undefined when
 * nothing searchable is left.
 */
export function ftsQuery(text: string): string | undefined {
  const phrases = text
    .split(/\s+/u)
    .filter((term) => WORD_CHARACTER.test(term))
    .slice(0, MAX_TERMS)
    .map((term) => {
      const prefix = /\*+$/u.test(term) && WORD_CHARACTER.test(term.replace(/\*+$/u, ''));
      const word = prefix ? term.replace(/\*+$/u, '') : term;
      return `"${word.replaceAll('"', '""')}"${prefix ? '*' : ''}`;
    });
  return phrases.length === 0 ? undefined : phrases.join(' ');
}
