import type { Tool } from '@modelcontextprotocol/sdk/types.js';
import { parseToolName, qualify, RISK_META, SUBJECT_META, toWireName, type Risk } from '@bulkhead/core';
import { docFromJsonSchema, ToolIndex, type SearchHit, type ToolDoc } from './search/index.js';
import type { PinStore } from './pins.js';

export interface CatalogEntry {
  readonly qualified: string;
  readonly wire: string;
  readonly namespace: string;
  readonly tool: Tool;
  readonly risk: Risk;
  readonly subjectArg?: string;
  readonly doc: ToolDoc;
}

const RISKS: readonly Risk[] = ['low', 'medium', 'high'];

/**
 * A built-in states its risk tier in `_meta`; a third-party tool's tier comes from its annotations
 * (read-only is low, destructive is high, anything else medium), since its own claims are all
 * there is.
 */
function riskOf(tool: Tool, builtin: boolean): Risk {
  const declared = tool._meta?.[RISK_META];
  if (builtin && typeof declared === 'string' && (RISKS as readonly string[]).includes(declared)) return declared as Risk;
  if (tool.annotations?.readOnlyHint === true) return 'low';
  if (tool.annotations?.destructiveHint === true) return 'high';
  return 'medium';
}

/** Every tool of every downstream under its namespaced name, with quarantine and a search index. */
export class Catalog {
  private readonly byNamespace = new Map<string, CatalogEntry[]>();
  private readonly quarantinedByNamespace = new Map<string, string[]>();
  /** Every tool as its server last listed it, quarantined or not. */
  private readonly latest = new Map<string, Tool>();
  private byName = new Map<string, CatalogEntry>();
  /** Built on the first search after a change, so a burst of updates costs one build. */
  private index: ToolIndex | undefined;

  constructor(private readonly pins: PinStore) {}

  /** Replaces one namespace's tools; changed definitions are quarantined, not listed. */
  update(namespace: string, tools: readonly Tool[], builtin: boolean): void {
    const entries: CatalogEntry[] = [];
    const quarantined: string[] = [];
    const named = tools.map((tool) => [qualify(namespace, tool.name), tool] as const);
    const changed = this.pins.check(named);
    for (const [qualified, tool] of named) {
      this.latest.set(qualified, tool);
      if (changed.has(qualified)) {
        quarantined.push(qualified);
        continue;
      }
      const subject = builtin ? tool._meta?.[SUBJECT_META] : undefined;
      entries.push({
        qualified,
        wire: toWireName(namespace, tool.name),
        namespace,
        tool,
        risk: riskOf(tool, builtin),
        ...(typeof subject === 'string' ? { subjectArg: subject } : {}),
        doc: docFromJsonSchema(namespace, tool),
      });
    }
    this.byNamespace.set(namespace, entries);
    this.quarantinedByNamespace.set(namespace, quarantined);
    this.rebuild();
  }

  remove(namespace: string): void {
    this.byNamespace.delete(namespace);
    this.quarantinedByNamespace.delete(namespace);
    this.rebuild();
  }

  private rebuild(): void {
    const all = [...this.byNamespace.values()].flat();
    this.byName = new Map(all.map((entry) => [entry.qualified, entry]));
    this.index = undefined;
  }

  entries(): CatalogEntry[] {
    return [...this.byName.values()];
  }

  quarantined(): string[] {
    return [...this.quarantinedByNamespace.values()].flat();
  }

  /** Looks a tool up by `ns:tool` or `ns__tool`. */
  get(name: string): CatalogEntry | undefined {
    const parsed = parseToolName(name);
    return parsed ? this.byName.get(qualify(parsed.namespace, parsed.tool)) : undefined;
  }

  /** The current (changed) definition of a quarantined tool, for a human to review. */
  quarantinedTool(name: string): Tool | undefined {
    const parsed = parseToolName(name);
    if (!parsed) return undefined;
    return this.latest.get(qualify(parsed.namespace, parsed.tool));
  }

  isQuarantined(name: string): boolean {
    const parsed = parseToolName(name);
    return parsed !== undefined && this.quarantined().includes(qualify(parsed.namespace, parsed.tool));
  }

  search(query: string, limit: number, visible: (entry: CatalogEntry) => boolean): { entry: CatalogEntry; score: number }[] {
    this.index ??= ToolIndex.build([...this.byName.values()].map((entry) => entry.doc));
    const hits: SearchHit[] = this.index.search(query, { limit, filter: (doc) => visible(this.byName.get(doc.name)!) });
    return hits.map((hit) => ({ entry: this.byName.get(hit.doc.name)!, score: hit.score }));
  }
}
