import type { Tool } from '@modelcontextprotocol/sdk/types.js';
import { hasInvisible, neutralizeInvisible, parseToolName, scanText } from '@bulkhead/core';
import { definitionHash } from './pins.js';

/** One string of a definition a model reads, and where in the definition it stands. */
interface DefinitionText {
  readonly where: string;
  readonly text: string;
}

/** What the scanner makes of one definition, kept by its hash: the same definition is scanned once. */
interface Scanned {
  readonly texts: readonly DefinitionText[];
  /** Findings that depend on the definition alone (references to other tools depend on the catalog). */
  readonly own: readonly string[];
  /** The definition with every invisible character written out, as clients are shown it. */
  readonly shown: Tool;
}

/** The tools a definition might point the model at: every other server's, by each name form. */
export interface ScanContext {
  /** The namespace of the tool being scanned. */
  readonly namespace: string;
  /** Its own server's tool names: a description naming its siblings is ordinary. */
  readonly ownTools: ReadonlySet<string>;
  /** Every namespace the gateway serves, the gateway's own included. */
  readonly namespaces: ReadonlySet<string>;
  /**
   * Bare tool names of other servers by the namespace that has them. Only names built of several
   * words (`read_file`, `send-email`) are taken: a bare `search` is an ordinary word.
   */
  readonly bareNames: ReadonlyMap<string, string>;
}

/** Strings inside a JSON Schema (or annotations), keys included, each with its path. */
function collect(value: unknown, where: string, out: DefinitionText[]): void {
  if (typeof value === 'string') out.push({ where, text: value });
  else if (Array.isArray(value)) value.forEach((item, index) => collect(item, `${where}[${index}]`, out));
  else if (value !== null && typeof value === 'object') {
    for (const [key, inner] of Object.entries(value)) {
      const path = `${where}.${key}`;
      out.push({ where: `${path} (a key)`, text: key });
      collect(inner, path, out);
    }
  }
}

function textsOf(tool: Tool): DefinitionText[] {
  // A name cannot hold spaces, so it is read a second time with its separators as spaces: `ignore_previous_instructions`.
  const texts: DefinitionText[] = [
    { where: 'name', text: tool.name },
    { where: 'name', text: tool.name.replace(/[_-]+/g, ' ') },
  ];
  if (typeof tool.title === 'string') texts.push({ where: 'title', text: tool.title });
  if (typeof tool.description === 'string') texts.push({ where: 'description', text: tool.description });
  if (typeof tool.annotations?.title === 'string') texts.push({ where: 'annotations.title', text: tool.annotations.title });
  collect(tool.inputSchema, 'inputSchema', texts);
  if (tool.outputSchema) collect(tool.outputSchema, 'outputSchema', texts);
  return texts;
}

/** A copy of `value` with every string (and key) neutralised; the same object when nothing changes. */
function neutralized<T>(value: T): T {
  if (typeof value === 'string') return (hasInvisible(value) ? neutralizeInvisible(value) : value) as T;
  if (Array.isArray(value)) {
    const items = value.map((item: unknown) => neutralized(item));
    return (items.some((item, index) => item !== value[index]) ? items : value) as T;
  }
  if (value !== null && typeof value === 'object') {
    let changed = false;
    const entries = Object.entries(value).map(([key, inner]) => {
      const next = [neutralized(key), neutralized(inner)] as const;
      if (next[0] !== key || next[1] !== inner) changed = true;
      return next;
    });
    return (changed ? Object.fromEntries(entries) : value) as T;
  }
  return value;
}

/** "its description", "inputSchema.properties.path.description": where a finding is, for a human. */
function place(where: string): string {
  return where === 'name' || where === 'title' || where === 'description' ? `its ${where}` : where;
}

/** The definition hash leaves the name out (it is the pin's key); the scan and the shown copy need it. */
function cacheKey(tool: Tool): string {
  return `${tool.name}\0${definitionHash(tool)}`;
}

/** Tool-like words in a text: `read_file`, `fs__read_file`, `fs:read_file`. */
const TOOL_WORD = /[A-Za-z0-9][A-Za-z0-9_:-]*/g;

/**
 * Reads third-party tool definitions as data: scans every string a model reads (name, title,
 * description, schema strings and keys, annotations' title) for what looks aimed at the model, and
 * gives the definition to show clients with invisible characters written out. Results are kept by
 * definition hash, so a catalog rebuild scans only what changed.
 */
export class DefinitionScanner {
  private readonly cache = new Map<string, Scanned>();

  private scanned(tool: Tool): Scanned {
    const key = cacheKey(tool);
    let result = this.cache.get(key);
    if (!result) {
      const texts = textsOf(tool);
      const own = [...new Set(texts.flatMap(({ where, text }) => scanText(text, { long: where === 'description' }).map((finding) => `${finding.reason} in ${place(where)}`)))];
      result = { texts, own, shown: neutralized(tool) };
      this.cache.set(key, result);
    }
    return result;
  }

  /** The definition as clients are shown it: every invisible character written out as `\u{…}`. */
  shown(tool: Tool): Tool {
    return this.scanned(tool).shown;
  }

  /** Why the definition looks aimed at the model, one reason each; empty when nothing does. */
  findings(tool: Tool, context: ScanContext): string[] {
    const { texts, own } = this.scanned(tool);
    const references: string[] = [];
    const named = new Set<string>();
    for (const { where, text } of texts) {
      for (const [word] of text.matchAll(TOOL_WORD)) {
        if (named.has(word)) continue;
        const owner = this.otherServer(word, context);
        if (!owner) continue;
        named.add(word);
        references.push(`names ${owner === 'gateway' ? 'the gateway' : `another server's (${owner})`} tool \`${word}\` in ${place(where)}`);
      }
    }
    return [...own, ...references];
  }

  private otherServer(word: string, context: ScanContext): string | undefined {
    const parsed = parseToolName(word);
    if (parsed && parsed.tool !== '' && parsed.namespace !== context.namespace && context.namespaces.has(parsed.namespace)) return parsed.namespace;
    if (parsed || context.ownTools.has(word)) return undefined;
    return context.bareNames.get(word);
  }

  /** Drops what no current definition uses, so a server that keeps changing cannot grow the cache. */
  retain(tools: Iterable<Tool>): void {
    const keep = new Set<string>();
    for (const tool of tools) keep.add(cacheKey(tool));
    for (const key of this.cache.keys()) if (!keep.has(key)) this.cache.delete(key);
  }
}
