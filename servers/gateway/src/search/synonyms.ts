// Synonyms for query expansion, from two sources:
//   - SYNONYM_FAMILIES below: a small hand-written table of interchangeable words of tool vocabulary;
//   - wordnet.ts: a general English thesaurus generated mechanically from WordNet.
// A query word also looks for its synonyms, at a lower weight than the word itself, so "remove a
// folder" reaches a tool described as "delete a directory".
//
// The rule for an entry of SYNONYM_FAMILIES: words that people and tool authors commonly use for the
// same operation or object across software of every kind (CRUD verbs, files, processes, the web,
// common abbreviations). Nothing here names a product, a server or a domain of its own, and no entry
// exists to make a particular query of an evaluation set succeed. A word may sit in several families.

import { term } from './tokenize.js';
import { WORDNET_SYNONYMS } from './wordnet.js';

export const SYNONYM_FAMILIES: readonly (readonly string[])[] = [
  // operations
  ['read', 'view', 'show', 'display', 'open', 'print'],
  ['get', 'fetch', 'retrieve', 'obtain', 'load'],
  ['fetch', 'download'],
  ['write', 'save', 'store', 'persist'],
  ['create', 'make', 'new', 'add'],
  ['update', 'modify', 'change', 'edit', 'alter', 'amend'],
  ['delete', 'remove', 'erase', 'drop', 'destroy', 'purge', 'unlink', 'rm', 'del'],
  ['list', 'enumerate', 'ls', 'browse'],
  ['search', 'find', 'query', 'lookup', 'locate', 'seek'],
  ['move', 'rename', 'mv'],
  ['copy', 'duplicate', 'cp'],
  ['run', 'execute', 'exec', 'invoke', 'launch'],
  ['stop', 'kill', 'terminate', 'halt', 'abort', 'cancel'],
  ['start', 'begin', 'initiate'],
  ['compare', 'diff', 'difference', 'differ'],
  ['convert', 'translate', 'transform'],
  ['summary', 'summarize', 'overview'],
  ['send', 'post', 'submit'],
  // objects
  ['file', 'document', 'doc'],
  ['directory', 'folder', 'dir'],
  ['repository', 'repo'],
  ['database', 'db'],
  ['record', 'row', 'entry'],
  ['column', 'field'],
  ['url', 'link', 'uri'],
  ['web', 'internet', 'online', 'website', 'webpage'],
  ['image', 'picture', 'photo', 'img'],
  ['information', 'info', 'metadata', 'details'],
  ['configuration', 'config', 'settings', 'preferences'],
  ['message', 'msg'],
  ['email', 'mail'],
  ['error', 'failure', 'exception'],
];

/** Weight of a word of the same family (table above), against 1 for the query word itself. */
export const FAMILY_WEIGHT = 0.5;
/**
 * Weight of a WordNet synonym (first sense, common words only: see wordnet.ts). Half the
 * family weight: the thesaurus is general English, not tool vocabulary.
 */
export const WORDNET_WEIGHT = 0.25;

export interface SynonymSources {
  readonly stemming: boolean;
  readonly families: boolean;
  readonly wordnet: boolean;
}

/** Term → its synonym terms with their weights. */
export type SynonymTable = ReadonlyMap<string, ReadonlyMap<string, number>>;

const tables = new Map<string, SynonymTable>();

/** The synonym table for one analyser setting, built once per process. */
export function synonymTable(sources: SynonymSources): SynonymTable {
  const key = `${sources.stemming}/${sources.families}/${sources.wordnet}`;
  let table = tables.get(key);
  if (!table) {
    table = buildTable(sources);
    tables.set(key, table);
  }
  return table;
}

function buildTable({ stemming, families, wordnet }: SynonymSources): SynonymTable {
  const table = new Map<string, Map<string, number>>();
  const link = (from: string, to: string, weight: number): void => {
    const a = term(from, stemming);
    const b = term(to, stemming);
    if (a === undefined || b === undefined || a === b) return;
    let entry = table.get(a);
    if (!entry) table.set(a, (entry = new Map()));
    if ((entry.get(b) ?? 0) < weight) entry.set(b, weight);
  };
  if (wordnet) {
    for (const line of WORDNET_SYNONYMS.split('\n')) {
      const [lemma, ...others] = line.split(' ');
      if (lemma) for (const other of others) link(lemma, other, WORDNET_WEIGHT);
    }
  }
  if (families) {
    for (const family of SYNONYM_FAMILIES) for (const a of family) for (const b of family) link(a, b, FAMILY_WEIGHT);
  }
  return table;
}
