// The retrieval index behind the gateway's `tool_search`.
//
// Ranking, in order of precedence:
//   1. an exact tool name (`ns:tool`, wire form `ns__tool`, or plain `tool`; case-insensitive,
//      surrounding quotes or backticks ignored) ranks first;
//   2. BM25F over the fields of a tool (name, namespace, title, first sentence, description,
//      parameter names, parameter descriptions), each field with its own weight and length
//      normalisation, one saturation per term (Robertson & Zaragoza's BM25F). Every text goes
//      through one analyser (tokenize.ts: identifier splitting, stop words, Porter stemming). Query
//      words expand to their synonyms (synonyms.ts) at a lower weight; a query word the corpus does
//      not know expands to the corpus terms it is a prefix of, to the longest corpus term that is a
//      prefix of it, or to the two corpus words it is glued from ("readfile");
//   3. when no term matches at all, a keyword fallback: substring match of the query's words in
//      names, titles and descriptions;
//   4. that lexical score, divided by its maximum over the tools, is fused with the cosine
//      similarity s ∈ [−1, 1] of averaged word embeddings (embedding.ts):
//      score = (1 − w) · lexical + w · (1 + s). The embedding finds tools that share no word with
//      the query, and reorders close lexical matches by topic; its weight w was chosen on the
//      MetaTool queries (see the bench). A tool that matches a query word is always a hit; one
//      that matches none is a hit when its similarity is above that of the average tool (s > 0).
// Ties are broken by qualified name, so the same index and query always give the same list.
// Everything that does not depend on the query is computed once in `build`.
//
// Discovery never grants permission: the gateway indexes only registered tools and passes a
// `filter` for what the caller may see; a filtered-out tool is never returned, not even for its
// exact name.

import { ToolEmbeddings, type EmbeddingTarget } from './embedding.js';
import { synonymTable, type SynonymTable } from './synonyms.js';
import { STOP_WORDS, term, termsOf, words } from './tokenize.js';
import { wordVectors } from './vectors.js';

export type { EmbeddingTarget } from './embedding.js';
export { FAMILY_WEIGHT, SYNONYM_FAMILIES, WORDNET_WEIGHT } from './synonyms.js';

export interface ToolParam {
  readonly name: string;
  readonly description?: string;
}

export interface ToolDoc {
  /** Qualified `namespace:tool`. */
  readonly name: string;
  readonly namespace: string;
  /** Plain tool name. */
  readonly tool: string;
  readonly title?: string;
  readonly description: string;
  readonly params: readonly ToolParam[];
}

export interface SearchHit {
  readonly doc: ToolDoc;
  /** Relevance, higher is better; comparable only within one result list. */
  readonly score: number;
}

export interface SearchOptions {
  /** Most hits to return; default 5. 0 or less returns nothing. */
  readonly limit?: number;
  /** Only docs for which this returns true can be returned. */
  readonly filter?: (doc: ToolDoc) => boolean;
}

export const DEFAULT_LIMIT = 5;
/** Longer queries are cut here: search work stays bounded whatever a caller sends. */
export const MAX_QUERY_CHARS = 1000;

// ── ranking parameters (textbook BM25 settings, not fitted to any query set) ──────────────────

interface FieldSpec {
  /** How much one occurrence in this field counts against one in the description. */
  readonly weight: number;
  /** Length normalisation (BM25 b) of this field. */
  readonly b: number;
}

export const FIELDS = {
  name: { weight: 3, b: 0.3 },
  namespace: { weight: 1, b: 0.3 },
  title: { weight: 2, b: 0.5 },
  /** The description's first sentence, which usually says what the tool is for (counted again). */
  lead: { weight: 1, b: 0.5 },
  description: { weight: 1, b: 0.75 },
  paramName: { weight: 1.5, b: 0.5 },
  paramDescription: { weight: 0.5, b: 0.75 },
} as const satisfies Record<string, FieldSpec>;
export type Field = keyof typeof FIELDS;
const FIELD_NAMES = Object.keys(FIELDS) as Field[];

/** BM25 term-frequency saturation. */
const K1 = 1.2;
/** Weight of a corpus term found from an unknown query word by prefix, against 1 for a match. */
const PREFIX_WEIGHT = 0.5;
/** Forward prefix expansion only for query words at least this long, and to at most this many terms. */
const PREFIX_MIN_CHARS = 3;
const PREFIX_MAX_TERMS = 10;
/** A corpus term that an unknown query word starts with must be at least this long. */
const BACK_PREFIX_MIN_CHARS = 4;
/** Parts of a glued word ("sequentialthinking") must be at least this long. */
const COMPOUND_PART_MIN_CHARS = 3;
/**
 * Weight of the embedding similarity against the max-normalised lexical score (their sum is 1).
 * Chosen on the 20,614 MetaTool queries (best Recall@5 in steps of 0.05; the bench shows the sweep).
 */
export const EMBEDDING_WEIGHT = 0.5;

/**
 * Switches for measuring the ranking's parts (the bench's ablation table). The defaults are the
 * ranking `tool_search` uses; the gateway passes none.
 */
export interface IndexOptions {
  /** Field weights replacing those of FIELDS; 0 leaves a field out. */
  readonly fieldWeights?: Partial<Record<Field, number>>;
  /** Porter stemming (default on). */
  readonly stemming?: boolean;
  /** Expansion with the hand-written synonym families (default on). */
  readonly families?: boolean;
  /** Expansion with the WordNet thesaurus (default on). */
  readonly wordnet?: boolean;
  /** Splitting glued words into two corpus words (default on). */
  readonly compounds?: boolean;
  /** Prefix expansion of query words the corpus does not know (default on). */
  readonly prefixes?: boolean;
  /** Fusion with word-embedding similarity (default on). */
  readonly embeddings?: boolean;
  /** Weight of the embedding similarity, replacing EMBEDDING_WEIGHT. */
  readonly embeddingWeight?: number;
  /** What the query's embedding is compared with (default 'both': the tool and its server). */
  readonly embeddingTarget?: EmbeddingTarget;
}

interface Settings {
  readonly weights: Readonly<Record<Field, number>>;
  readonly stemming: boolean;
  readonly compounds: boolean;
  readonly prefixes: boolean;
  readonly embeddingWeight: number;
}

// ── helpers for results and for the gateway ─────────────────────────────────────────────────

/** First paragraph of a description, whitespace collapsed, cut at a word boundary past `maxChars`. */
export function firstParagraph(text: string, maxChars = 400): string {
  const paragraph = (text.trim().split(/\n\s*\n/)[0] ?? '').replace(/\s+/g, ' ').trim();
  if (paragraph.length <= maxChars) return paragraph;
  const cut = paragraph.slice(0, maxChars);
  const space = cut.lastIndexOf(' ');
  return `${(space > maxChars / 2 ? cut.slice(0, space) : cut).replace(/[\s,;:.]+$/, '')}…`;
}

/** Parameter names, comma-separated, for a one-line summary; `(none)` for a tool without any. */
export function paramSummary(doc: ToolDoc, maxChars = 200): string {
  if (doc.params.length === 0) return '(none)';
  const text = doc.params.map((param) => param.name).join(', ');
  if (text.length <= maxChars) return text;
  const cut = text.lastIndexOf(', ', maxChars);
  return `${cut > 0 ? text.slice(0, cut) : text.slice(0, maxChars)}, …`;
}

/** `select:a,b` → ['a', 'b'] (trimmed, empty names dropped); undefined when the query is no select. */
export function parseSelect(query: string): string[] | undefined {
  const match = /^\s*select:(.*)$/is.exec(query);
  if (!match) return undefined;
  return (match[1] ?? '')
    .split(',')
    .map((name) => name.trim())
    .filter((name) => name.length > 0);
}

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/**
 * A ToolDoc from an MCP tool: parameters are the top-level `properties` of its input schema, with
 * their `description`s (nested properties are not indexed). An empty namespace gives a plain name.
 */
export function docFromJsonSchema(namespace: string, tool: { name: string; title?: string; description?: string; inputSchema?: unknown }): ToolDoc {
  const properties = isRecord(tool.inputSchema) && isRecord(tool.inputSchema.properties) ? tool.inputSchema.properties : {};
  const params = Object.entries(properties).map(([name, schema]): ToolParam => {
    const description = isRecord(schema) && typeof schema.description === 'string' ? schema.description : undefined;
    return description === undefined ? { name } : { name, description };
  });
  return {
    name: namespace ? `${namespace}:${tool.name}` : tool.name,
    namespace,
    tool: tool.name,
    ...(tool.title ? { title: tool.title } : {}),
    description: tool.description ?? '',
    params,
  };
}

// ── the index ──────────────────────────────────────────────────────────────────────────────

/** The forms of a tool's name that count as an exact match, lower case. */
function nameKeys(doc: ToolDoc): string[] {
  const keys = [doc.name, doc.tool];
  if (doc.namespace) keys.push(`${doc.namespace}:${doc.tool}`, `${doc.namespace}__${doc.tool}`);
  return [...new Set(keys.map((key) => key.toLowerCase()))];
}

/** A query as a name key: trimmed, lower case, one pair of surrounding quotes or backticks removed. */
function asNameKey(query: string): string {
  return query.replace(/^(["'`])(.*)\1$/s, '$2').trim().toLowerCase();
}

/** First sentence of a description: up to the first `. ` (or `。`, or a line break), at most 300 chars. */
function leadSentence(description: string): string {
  const text = description.trim();
  const end = text.search(/[.!?](\s|$)|[。！？]|\n/);
  return (end === -1 ? text : text.slice(0, end)).slice(0, 300);
}

interface Postings {
  readonly docs: Int32Array;
  /** Saturated BM25F term weight per doc, before idf. */
  readonly weights: Float64Array;
  readonly idf: number;
}

type FieldTerms = Record<Field, string[]>;

/** The words of each text of a doc. */
interface DocWords {
  readonly tool: string[];
  readonly namespace: string[];
  readonly title: string[];
  readonly lead: string[];
  readonly description: string[];
  readonly params: readonly { readonly name: string[]; readonly description: string[] }[];
}

function docWordsOf(doc: ToolDoc): DocWords {
  return {
    tool: words(doc.tool),
    namespace: words(doc.namespace),
    title: words(doc.title ?? ''),
    lead: words(leadSentence(doc.description)),
    description: words(doc.description),
    params: doc.params.map((param) => ({ name: words(param.name), description: words(param.description ?? '') })),
  };
}

export class ToolIndex {
  readonly #docs: readonly ToolDoc[];
  readonly #settings: Settings;
  readonly #postings: ReadonlyMap<string, Postings>;
  /** Every term of the corpus, sorted, for prefix expansion (made on first use). */
  #sortedTerms: readonly string[] | undefined;
  /** Raw (unstemmed) corpus words, for splitting glued words. */
  readonly #words: ReadonlySet<string>;
  /** Lower-case name key → docs with that name. */
  readonly #byName: ReadonlyMap<string, readonly number[]>;
  readonly #synonyms: SynonymTable;
  /** Lower-case name, title and description per doc, for the keyword fallback (made on first use). */
  #haystacks: readonly string[] | undefined;
  readonly #embeddings: ToolEmbeddings | undefined;

  private constructor(docs: readonly ToolDoc[], options: IndexOptions) {
    this.#docs = docs;
    const weights = {} as Record<Field, number>;
    for (const field of FIELD_NAMES) weights[field] = options.fieldWeights?.[field] ?? FIELDS[field].weight;
    const stemming = options.stemming ?? true;
    const embeddingWeight = options.embeddings === false ? 0 : (options.embeddingWeight ?? EMBEDDING_WEIGHT);
    this.#settings = { weights, stemming, compounds: options.compounds ?? true, prefixes: options.prefixes ?? true, embeddingWeight };
    this.#synonyms = synonymTable({ stemming, families: options.families ?? true, wordnet: options.wordnet ?? true });

    const byName = new Map<string, number[]>();
    const seen = new Set<string>();
    docs.forEach((doc, index) => {
      if (seen.has(doc.name)) throw new Error(`duplicate tool name in the search index: ${doc.name}`);
      seen.add(doc.name);
      for (const key of nameKeys(doc)) {
        const list = byName.get(key);
        if (list) list.push(index);
        else byName.set(key, [index]);
      }
    });
    this.#byName = byName;

    // Each text is split into words once; the words of the whole corpus are known before glued
    // words are split.
    const docWords = docs.map(docWordsOf);
    const corpusWords = new Set<string>();
    for (const doc of docWords) {
      for (const list of [doc.tool, doc.namespace, doc.title, doc.description, ...doc.params.flatMap((p) => [p.name, p.description])]) {
        for (const word of list) corpusWords.add(word);
      }
    }
    this.#words = corpusWords;
    this.#postings = buildPostings(
      docWords.map((doc) => this.#fieldTerms(doc)),
      weights,
    );
    this.#embeddings =
      embeddingWeight > 0
        ? new ToolEmbeddings(
            docs.map((doc, i) => {
              const w = docWords[i] as DocWords;
              return { name: doc.name, words: [...w.tool, ...w.namespace, ...w.title, ...w.description], group: doc.namespace };
            }),
            wordVectors(),
            options.embeddingTarget ?? 'both',
          )
        : undefined;
  }

  /** An index over `docs`. Qualified names must be unique. */
  static build(docs: readonly ToolDoc[], options: IndexOptions = {}): ToolIndex {
    return new ToolIndex([...docs], options);
  }

  get size(): number {
    return this.#docs.length;
  }

  /**
   * Ranked hits, best first; `limit` default 5. An exact match of a tool name (qualified
   * `ns:tool`, wire form `ns__tool`, or plain `tool`) ranks first. An empty query (nothing but
   * white space) returns no hits: browsing is `list_tools`' job. A query of stop words only, or
   * of words found in no tool and unknown to the word embeddings, returns no hits either.
   */
  search(query: string, options: SearchOptions = {}): SearchHit[] {
    const limit = Math.floor(options.limit ?? DEFAULT_LIMIT);
    const text = query.slice(0, MAX_QUERY_CHARS).trim();
    if (!(limit > 0) || text.length === 0) return [];
    const { filter } = options;
    const allowed = (i: number): boolean => filter === undefined || filter(this.#docs[i] as ToolDoc);

    const queryWords = words(text);
    const scores = this.#score(this.#expand(queryWords));
    if (this.#positive(scores, allowed).length === 0) this.#keywordFallback(queryWords, scores);
    const similarity = this.#embeddings?.similarities(queryWords);
    let candidates = this.#positive(scores, allowed, similarity);
    if (similarity) this.#fuse(scores, similarity);

    const exact = (this.#byName.get(asNameKey(text)) ?? []).filter(allowed);
    if (exact.length > 0) {
      // Above every other hit; among several tools of that plain name, by their own score.
      let top = 0;
      for (const i of candidates) top = Math.max(top, scores[i] as number);
      for (const i of exact) scores[i] = top + 1 + (scores[i] as number) / (top + 1);
      const isExact = new Set(exact);
      candidates = [...exact, ...candidates.filter((i) => !isExact.has(i))];
    }

    return this.#best(candidates, scores, limit).map((i) => ({ doc: this.#docs[i] as ToolDoc, score: scores[i] as number }));
  }

  /**
   * The `limit` best candidates, best first, ties by name. With the embeddings about half the
   * tools are candidates, so for a short list the best are picked out rather than all sorted.
   */
  #best(candidates: readonly number[], scores: Float64Array, limit: number): number[] {
    const better = (a: number, b: number): boolean => {
      const sa = scores[a] as number;
      const sb = scores[b] as number;
      return sa > sb || (sa === sb && compareNames(this.#docs[a] as ToolDoc, this.#docs[b] as ToolDoc) < 0);
    };
    if (limit >= candidates.length) return [...candidates].sort((a, b) => (better(a, b) ? -1 : better(b, a) ? 1 : 0));
    const best: number[] = [];
    for (const i of candidates) {
      if (best.length === limit && !better(i, best[limit - 1] as number)) continue;
      let at = best.length === limit ? limit - 1 : best.length;
      while (at > 0 && better(i, best[at - 1] as number)) {
        best[at] = best[at - 1] as number;
        at--;
      }
      best[at] = i;
    }
    return best;
  }

  /** Lexical scores, divided by their maximum, fused in place with the embedding similarity. */
  #fuse(scores: Float64Array, similarity: Float64Array): void {
    const weight = this.#settings.embeddingWeight;
    let max = 0;
    for (const score of scores) max = Math.max(max, score);
    const lexical = max > 0 ? (1 - weight) / max : 0;
    for (let i = 0; i < scores.length; i++) scores[i] = lexical * (scores[i] as number) + weight * (1 + (similarity[i] as number));
  }

  /** Allowed docs with a positive lexical score, or with an embedding similarity above the average tool's. */
  #positive(scores: Float64Array, allowed: (i: number) => boolean, similarity?: Float64Array): number[] {
    const out: number[] = [];
    for (let i = 0; i < scores.length; i++) {
      if (((scores[i] as number) > 0 || (similarity !== undefined && (similarity[i] as number) > 0)) && allowed(i)) out.push(i);
    }
    return out;
  }

  /** A glued word split in two corpus words ("sequentialthinking" → sequential thinking), if any. */
  #splitCompound(word: string): [string, string] | undefined {
    if (!this.#settings.compounds || word.length < 2 * COMPOUND_PART_MIN_CHARS || !/^[a-z]+$/.test(word)) return undefined;
    // The split with the longest first part: deterministic, and usually the right one.
    for (let cut = word.length - COMPOUND_PART_MIN_CHARS; cut >= COMPOUND_PART_MIN_CHARS; cut--) {
      const head = word.slice(0, cut);
      const tail = word.slice(cut);
      if (this.#words.has(head) && this.#words.has(tail)) return [head, tail];
    }
    return undefined;
  }

  /** Terms of a name's words, glued words also split into their parts. */
  #nameTerms(list: readonly string[]): string[] {
    const { stemming } = this.#settings;
    const out: string[] = [];
    for (const word of list) {
      const t = term(word, stemming);
      if (t !== undefined) out.push(t);
      for (const part of this.#splitCompound(word) ?? []) {
        const p = term(part, stemming);
        if (p !== undefined) out.push(p);
      }
    }
    return out;
  }

  #fieldTerms(doc: DocWords): FieldTerms {
    const { stemming } = this.#settings;
    return {
      name: this.#nameTerms(doc.tool),
      namespace: this.#nameTerms(doc.namespace),
      title: termsOf(doc.title, stemming),
      lead: termsOf(doc.lead, stemming),
      description: termsOf(doc.description, stemming),
      paramName: doc.params.flatMap((param) => this.#nameTerms(param.name)),
      paramDescription: doc.params.flatMap((param) => termsOf(param.description, stemming)),
    };
  }

  /** Query terms with their weights: the words, their synonyms, prefix and compound expansions. */
  #expand(queryWords: readonly string[]): Map<string, number> {
    const weights = new Map<string, number>();
    const add = (t: string, weight: number): void => {
      if (this.#postings.has(t) && (weights.get(t) ?? 0) < weight) weights.set(t, weight);
    };
    const { stemming, prefixes } = this.#settings;
    for (const word of queryWords) {
      const t = term(word, stemming);
      if (t === undefined) continue;
      add(t, 1);
      for (const [synonym, weight] of this.#synonyms.get(t) ?? []) add(synonym, weight);
      if (this.#postings.has(t)) continue;
      // A word the corpus does not know: a glued compound, or another form of a known root.
      const parts = this.#splitCompound(word);
      if (parts) {
        for (const part of parts) {
          const p = term(part, stemming);
          if (p !== undefined) add(p, 1);
        }
        continue;
      }
      if (!prefixes) continue;
      if (word.length >= PREFIX_MIN_CHARS) for (const longer of this.#termsWithPrefix(t)) add(longer, PREFIX_WEIGHT);
      // The longest corpus term the word starts with (relationship → relat[ion], timestamps → time).
      for (let end = t.length - 1; end >= BACK_PREFIX_MIN_CHARS; end--) {
        const shorter = t.slice(0, end);
        if (this.#postings.has(shorter)) {
          add(shorter, PREFIX_WEIGHT);
          break;
        }
      }
    }
    return weights;
  }

  #termsWithPrefix(prefix: string): string[] {
    this.#sortedTerms ??= [...this.#postings.keys()].sort();
    const sorted = this.#sortedTerms;
    let lo = 0;
    let hi = sorted.length;
    while (lo < hi) {
      const mid = (lo + hi) >>> 1;
      if ((sorted[mid] as string) < prefix) lo = mid + 1;
      else hi = mid;
    }
    const out: string[] = [];
    for (let i = lo; i < sorted.length && out.length < PREFIX_MAX_TERMS; i++) {
      const candidate = sorted[i] as string;
      if (!candidate.startsWith(prefix)) break;
      if (candidate !== prefix) out.push(candidate);
    }
    return out;
  }

  #score(query: ReadonlyMap<string, number>): Float64Array {
    const scores = new Float64Array(this.#docs.length);
    for (const [t, weight] of query) {
      const postings = this.#postings.get(t);
      if (!postings) continue;
      const factor = weight * postings.idf;
      const { docs, weights } = postings;
      for (let j = 0; j < docs.length; j++) {
        const doc = docs[j] as number;
        scores[doc] = (scores[doc] as number) + factor * (weights[j] as number);
      }
    }
    return scores;
  }

  /** Share of the query's words (stop words and single letters aside) found as substrings of name, title or description. */
  #keywordFallback(queryWords: readonly string[], scores: Float64Array): void {
    const needles = [...new Set(queryWords.filter((word) => word.length >= 2 && !STOP_WORDS.has(word)))];
    if (needles.length === 0) return;
    this.#haystacks ??= this.#docs.map((doc) => `${doc.name} ${doc.title ?? ''} ${doc.description}`.toLowerCase());
    this.#haystacks.forEach((haystack, i) => {
      let hits = 0;
      for (const needle of needles) if (haystack.includes(needle)) hits++;
      scores[i] = hits / needles.length;
    });
  }
}

function compareNames(a: ToolDoc, b: ToolDoc): number {
  return a.name < b.name ? -1 : a.name > b.name ? 1 : 0;
}

/** BM25F: per-field length-normalised frequencies, weighted and summed, then saturated once. */
function buildPostings(fieldTerms: readonly FieldTerms[], fieldWeights: Readonly<Record<Field, number>>): Map<string, Postings> {
  const n = fieldTerms.length;
  const avgLength = {} as Record<Field, number>;
  for (const field of FIELD_NAMES) {
    const total = fieldTerms.reduce((sum, doc) => sum + doc[field].length, 0);
    avgLength[field] = total > 0 ? total / n : 1;
  }
  const perTerm = new Map<string, { docs: number[]; weights: number[] }>();
  fieldTerms.forEach((doc, index) => {
    const pseudoFrequency = new Map<string, number>();
    for (const field of FIELD_NAMES) {
      const weight = fieldWeights[field];
      const list = doc[field];
      if (list.length === 0 || weight === 0) continue;
      const { b } = FIELDS[field];
      const increment = weight / (1 - b + (b * list.length) / avgLength[field]);
      for (const t of list) pseudoFrequency.set(t, (pseudoFrequency.get(t) ?? 0) + increment);
    }
    for (const [t, tf] of pseudoFrequency) {
      let entry = perTerm.get(t);
      if (!entry) perTerm.set(t, (entry = { docs: [], weights: [] }));
      entry.docs.push(index);
      entry.weights.push((tf * (K1 + 1)) / (K1 + tf));
    }
  });
  const postings = new Map<string, Postings>();
  for (const [t, { docs, weights }] of perTerm) {
    const df = docs.length;
    postings.set(t, { docs: Int32Array.from(docs), weights: Float64Array.from(weights), idf: Math.log(1 + (n - df + 0.5) / (df + 0.5)) });
  }
  return postings;
}
