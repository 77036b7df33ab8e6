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
/** What MCP clients accept as a tool name; anything else (a `/`, say) would slip past policy globs. */
const VALID_TOOL_NAME = /^[A-Za-z0-9_-]{1,64}$/;

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

function entryFor(namespace: string, tool: Tool, builtin: boolean): CatalogEntry {
  const subject = builtin ? tool._meta?.[SUBJECT_META] : undefined;
  return {
    qualified: qualify(namespace, tool.name),
    wire: toWireName(namespace, tool.name),
    namespace,
    tool,
    risk: riskOf(tool, builtin),
    ...(typeof subject === 'string' ? { subjectArg: subject } : {}),
    doc: docFromJsonSchema(namespace, tool),
  };
}

interface NamespaceTools {
  readonly tools: readonly Tool[];
  readonly builtin: boolean;
}

/** Every tool of every downstream under its namespaced name, with quarantine and a search index. */
export class Catalog {
  private readonly sources = new Map<string, NamespaceTools>();
  private byName = new Map<string, CatalogEntry>();
  private quarantine = new Map<string, CatalogEntry>();
  private rejected: string[] = [];
  private pinsVersion = -1;
  /** Built on the first search after a change, so a burst of updates costs one build. */
  private index: ToolIndex | undefined;

  /**
   * `namespaces` fixes the order tools are listed in (the configuration's), whichever server
   * answers first at start-up: a listing that changed order from one start to the next would look
   * like a new tool list to clients and to prompt caches.
   */
  constructor(
    private readonly pins: PinStore,
    namespaces: readonly string[] = [],
  ) {
    for (const namespace of namespaces) this.sources.set(namespace, { tools: [], builtin: false });
  }

  /** Replaces one namespace's tools; changed definitions are quarantined, not listed. */
  update(namespace: string, tools: readonly Tool[], builtin: boolean): void {
    this.sources.set(namespace, { tools, builtin });
    this.rebuild();
  }

  /** Applies pins again when `bulkhead approve` (another process) changed them. */
  private current(): void {
    if (this.pins.version !== this.pinsVersion) this.rebuild();
  }

  private rebuild(): void {
    const usable = new Map<string, CatalogEntry>();
    const quarantine = new Map<string, CatalogEntry>();
    const rejected: string[] = [];
    for (const [namespace, { tools, builtin }] of this.sources) {
      const valid = tools.filter((tool) => VALID_TOOL_NAME.test(tool.name));
      rejected.push(...tools.filter((tool) => !VALID_TOOL_NAME.test(tool.name)).map((tool) => `${namespace}:${tool.name}`));
      const changed = this.pins.check(valid.map((tool) => [qualify(namespace, tool.name), tool] as const));
      for (const tool of valid) {
        const entry = entryFor(namespace, tool, builtin);
        (changed.has(entry.qualified) ? quarantine : usable).set(entry.qualified, entry);
      }
    }
    this.byName = usable;
    this.quarantine = quarantine;
    this.rejected = rejected;
    this.pinsVersion = this.pins.version;
    this.index = undefined;
  }

  entries(): CatalogEntry[] {
    this.current();
    return [...this.byName.values()];
  }

  quarantined(): string[] {
    this.current();
    return [...this.quarantine.keys()];
  }

  /** Tools left out because their names are not valid MCP tool names. */
  invalidNames(): readonly string[] {
    return this.rejected;
  }

  /**
   * Writes the pins of first sight, as a tool is about to be called: listing, searching and
   * selecting write nothing, while every session that called a tool leaves the pins the next one
   * is checked against.
   */
  commitPins(): void {
    this.current();
    this.pins.commit();
  }

  /** Looks a tool up by `ns:tool` or `ns__tool`. */
  get(name: string): CatalogEntry | undefined {
    this.current();
    const parsed = parseToolName(name);
    return parsed ? this.byName.get(qualify(parsed.namespace, parsed.tool)) : undefined;
  }

  /** A quarantined tool as its server now lists it, for a human to review. */
  quarantinedEntry(name: string): CatalogEntry | undefined {
    this.current();
    const parsed = parseToolName(name);
    return parsed ? this.quarantine.get(qualify(parsed.namespace, parsed.tool)) : undefined;
  }

  search(query: string, limit: number, visible: (entry: CatalogEntry) => boolean): { entry: CatalogEntry; score: number }[] {
    this.current();
    this.index ??= ToolIndex.build([...this.byName.values()].map((entry) => entry.doc));
    const hits: SearchHit[] = this.index.search(query, { limit, filter: (doc) => visible(this.byName.get(doc.name)!) });
    return hits.map((hit) => ({ entry: this.byName.get(hit.doc.name)!, score: hit.score }));
  }
}
