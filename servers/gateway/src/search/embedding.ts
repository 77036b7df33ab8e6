// Dense side of the tool search: each tool and each query as a weighted average of GloVe word
// vectors (vectors.ts), compared by cosine. It finds tools that share no word with the query
// ("untracked" → "working tree status") where BM25 sees nothing; index.ts fuses both scores.
//
//   - weights: SIF, a / (a + p(w)) with p(w) from the word's frequency rank (Arora, Liang & Ma
//     2017), times the word's idf over the tools, so words every description uses count little;
//   - the mean tool vector is subtracted from tool and query vectors (SIF's common-component
//     removal): what all tools share says nothing about which one fits;
//   - a tool is judged half by its own vector and half by its server's (the normalised sum of the
//     server's tool vectors). Averaged word vectors tell topics apart well (files, git, time) and
//     operations badly (read, write and delete are near neighbours), so the server vector brings
//     the topic and the lexical ranking keeps choosing among a server's tools.

import { STOP_WORDS } from './tokenize.js';
import type { WordVectors } from './vectors.js';

/** SIF smoothing `a`: the usual 1e-4; a word about as frequent as 1 in 10,000 gets half weight. */
const SIF_A = 1e-4;
/** Parts of a glued word the table lacks ("airqualityforecast") must be at least this long. */
const GLUED_PART_MIN_CHARS = 3;

const NO_ROWS: readonly number[] = [];

/** What a tool's score compares the query with (the bench measures the parts apart). */
export type EmbeddingTarget = 'both' | 'tool' | 'server';

export interface EmbeddingInput {
  /** Unique name: sums over tools run in name order, so the same tools in any order give the same numbers. */
  readonly name: string;
  /** Words of the tool's name, namespace, title and description (tokenize.ts `words`). */
  readonly words: readonly string[];
  /** Tools with the same group (their server) share a group vector; '' for a tool of its own. */
  readonly group: string;
}

export class ToolEmbeddings {
  readonly #table: WordVectors;
  readonly #target: EmbeddingTarget;
  readonly #docCount: number;
  /** Number of tools whose words include each table row. */
  readonly #docFrequency: Int32Array;
  /** Mean of the tool vectors, subtracted from every vector. */
  readonly #mean: Float64Array;
  /** Centred unit vector per tool, row by row (all zeros for a tool with no known word). */
  readonly #tools: Float64Array;
  /** Unit vector per group, row by row, and each tool's group. */
  readonly #groups: Float64Array;
  readonly #groupOf: Int32Array;

  // The build runs once per catalog change, often in a process that has just started: its hot
  // loops each run over all tools at once, in small functions of their own, which the JIT compiles
  // early (500 short loops, or one big function with several phases, run unoptimised for longer).
  constructor(inputs: readonly EmbeddingInput[], table: WordVectors, target: EmbeddingTarget) {
    this.#table = table;
    this.#target = target;
    const n = inputs.length;
    const dims = table.dimensions;
    this.#docCount = n;

    // Each tool's distinct table rows, counted, as (tool, row, count) triples; tools per row.
    // Tool texts repeat their words: each distinct word is looked up (and unglued) once.
    const known = new Map<string, readonly number[]>();
    const pairTool: number[] = [];
    const pairRow: number[] = [];
    const pairCount: number[] = [];
    this.#docFrequency = new Int32Array(table.size);
    const lastTool = new Int32Array(table.size).fill(-1);
    const pairOf = new Int32Array(table.size);
    const docFrequency = this.#docFrequency;
    for (let i = 0; i < n; i++) {
      const rows = this.#rows((inputs[i] as EmbeddingInput).words, known);
      for (let k = 0; k < rows.length; k++) {
        const row = rows[k] as number;
        if (lastTool[row] === i) {
          const pair = pairOf[row] as number;
          pairCount[pair] = (pairCount[pair] as number) + 1;
          continue;
        }
        lastTool[row] = i;
        pairOf[row] = pairTool.length;
        pairTool.push(i);
        pairRow.push(row);
        pairCount.push(1);
        docFrequency[row] = (docFrequency[row] as number) + 1;
      }
    }

    const pairWeight = pairRow.map((row, k) => (pairCount[k] as number) * this.#weight(row));
    const tools = new Float64Array(n * dims);
    addRows(tools, pairTool, pairRow, pairWeight, table);
    normaliseRows(tools, dims);

    // The mean over tools with a known word, summed in name order: the same tools in any order
    // give the same numbers.
    const hasWords = new Uint8Array(n);
    for (const i of pairTool) hasWords[i] = 1;
    // Names are unique; the default sort compares them natively (cheaper than a comparator).
    const indexOf = new Map(inputs.map((input, i) => [input.name, i]));
    const byName = inputs
      .map((input) => input.name)
      .sort()
      .map((name) => indexOf.get(name) as number);
    this.#mean = new Float64Array(dims);
    let withWords = 0;
    for (const i of byName) {
      if (!hasWords[i]) continue;
      withWords++;
      for (let d = 0; d < dims; d++) this.#mean[d] = (this.#mean[d] as number) + (tools[i * dims + d] as number);
    }
    for (let d = 0; d < dims; d++) this.#mean[d] = (this.#mean[d] as number) / Math.max(1, withWords);
    subtractFromRows(tools, this.#mean, hasWords);
    normaliseRows(tools, dims);
    this.#tools = tools;

    const groupIndex = new Map<string, number>();
    this.#groupOf = new Int32Array(n);
    let groupCount = 0;
    for (const i of byName) {
      const group = (inputs[i] as EmbeddingInput).group;
      let g = group === '' ? undefined : groupIndex.get(group);
      if (g === undefined) {
        g = groupCount++;
        if (group !== '') groupIndex.set(group, g);
      }
      this.#groupOf[i] = g;
    }
    this.#groups = new Float64Array(groupCount * dims);
    for (const i of byName) {
      const at = (this.#groupOf[i] as number) * dims;
      for (let d = 0; d < dims; d++) this.#groups[at + d] = (this.#groups[at + d] as number) + (tools[i * dims + d] as number);
    }
    normaliseRows(this.#groups, dims);
  }

  /**
   * Cosine-based similarity of the query (its `words`) to each tool, in [-1, 1]; undefined when
   * no word of the query is in the table (then there is nothing to compare).
   */
  similarities(queryWords: readonly string[]): Float64Array | undefined {
    const rows = this.#rows(queryWords);
    if (rows.length === 0) return undefined;
    const dims = this.#table.dimensions;
    const q = new Float64Array(dims);
    addRows(q, new Array<number>(rows.length).fill(0), rows, rows.map((row) => this.#weight(row)), this.#table);
    normaliseRows(q, dims);
    subtractFromRows(q, this.#mean, [1]);
    normaliseRows(q, dims);

    const groupScores = new Float64Array(this.#groups.length / dims);
    for (let g = 0; g < groupScores.length; g++) groupScores[g] = dotAt(this.#groups, g * dims, q);
    const out = new Float64Array(this.#docCount);
    for (let i = 0; i < out.length; i++) {
      const tool = dotAt(this.#tools, i * dims, q);
      const group = groupScores[this.#groupOf[i] as number] as number;
      out[i] = this.#target === 'tool' ? tool : this.#target === 'server' ? group : (tool + group) / 2;
    }
    return out;
  }

  /** SIF weight of a row's word times its idf over the tools. */
  #weight(row: number): number {
    // Zipf: the word of rank r has frequency about 1 / (r · H), H the harmonic number of the table.
    const p = 1 / ((row + 1) * (Math.log(this.#table.size) + 0.5772));
    return (SIF_A / (SIF_A + p)) * Math.log(1 + this.#docCount / ((this.#docFrequency[row] as number) + 1));
  }

  /**
   * Table rows of the words that count: no stop words or single characters; glued words split.
   * `known` remembers each word's rows across calls.
   */
  #rows(list: readonly string[], known?: Map<string, readonly number[]>): number[] {
    const out: number[] = [];
    for (let w = 0; w < list.length; w++) {
      const word = list[w] as string;
      let rows = known?.get(word);
      if (rows === undefined) {
        if (word.length < 2 || STOP_WORDS.has(word)) rows = NO_ROWS;
        else {
          const row = this.#table.row(word);
          rows = row >= 0 ? [row] : this.#unglue(word);
        }
        known?.set(word, rows);
      }
      for (let k = 0; k < rows.length; k++) out.push(rows[k] as number);
    }
    return out;
  }

  /** A word the table lacks, as the rows of the two table words it is glued from (longest first part). */
  #unglue(word: string): number[] {
    if (word.length < 2 * GLUED_PART_MIN_CHARS || !/^[a-z]+$/.test(word)) return [];
    for (let cut = word.length - GLUED_PART_MIN_CHARS; cut >= GLUED_PART_MIN_CHARS; cut--) {
      const head = word.slice(0, cut);
      const tail = word.slice(cut);
      if (STOP_WORDS.has(head) || STOP_WORDS.has(tail)) continue;
      const a = this.#table.row(head);
      const b = this.#table.row(tail);
      if (a >= 0 && b >= 0) return [a, b];
    }
    return [];
  }
}

/** Dot product of `b` with the vector of `b`'s length that starts at `start` in `matrix`. */
function dotAt(matrix: Float64Array, start: number, b: Float64Array): number {
  let sum = 0;
  for (let d = 0; d < b.length; d++) sum += (matrix[start + d] as number) * (b[d] as number);
  return sum;
}

/**
 * Adds weight[k] × the table's vector of tableRow[k] to row target[k] of `matrix`, for every k,
 * in real coordinates (the table's int8 values times their dimension's scale).
 */
function addRows(matrix: Float64Array, target: readonly number[], tableRow: readonly number[], weight: readonly number[], table: WordVectors): void {
  const { dimensions: dims, values, scales } = table;
  for (let k = 0; k < target.length; k++) {
    const at = (target[k] as number) * dims;
    const start = (tableRow[k] as number) * dims;
    const w = weight[k] as number;
    for (let d = 0; d < dims; d++) matrix[at + d] = (matrix[at + d] as number) + w * (values[start + d] as number) * (scales[d] as number);
  }
}

/** Subtracts `vector` from each row i of `matrix` with `which[i]` set. */
function subtractFromRows(matrix: Float64Array, vector: Float64Array, which: ArrayLike<number>): void {
  const dims = vector.length;
  for (let start = 0, i = 0; start < matrix.length; start += dims, i++) {
    if (!which[i]) continue;
    for (let d = 0; d < dims; d++) matrix[start + d] = (matrix[start + d] as number) - (vector[d] as number);
  }
}

/** Scales each `dims`-long row of `matrix` to length 1 in place (a zero row stays zero). */
function normaliseRows(matrix: Float64Array, dims: number): void {
  for (let start = 0; start < matrix.length; start += dims) {
    let squares = 0;
    for (let d = 0; d < dims; d++) squares += (matrix[start + d] as number) ** 2;
    const length = Math.sqrt(squares);
    if (length > 0) for (let d = 0; d < dims; d++) matrix[start + d] = (matrix[start + d] as number) / length;
  }
}
