import { createHash } from 'node:crypto';

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
