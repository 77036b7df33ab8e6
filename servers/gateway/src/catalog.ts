import type { Tool } from '@modelcontextprotocol/sdk/types.js';
import { parseToolName, qualify, RISK_META, SUBJECT_META, toWireName, type Risk } from '@bulkhead/core';
import { docFromJsonSchema, ToolIndex, type SearchHit, type ToolDoc } from './search/index.js';
import { TRUST_GRANTS, type TrustGrant } from './config/schema.js';
import type { PinStore, QuarantineReason } from './pins.js';
import { DefinitionScanner, type ScanContext } from './scan.js';

/** Where the gateway's own tools (the meta tools) live, for the scanner: a third-party description has no reason to name them. */
const GATEWAY_TOOLS_NAMESPACE = 'gateway';
const ALL_GRANTS: ReadonlySet<TrustGrant> = new Set(TRUST_GRANTS);
const NO_GRANTS: ReadonlySet<TrustGrant> = new Set();

export interface CatalogEntry {
  readonly qualified: string;
  readonly wire: string;
  readonly namespace: string;
  /** The definition as clients are shown it: a third-party one with invisible characters written out. */
  readonly tool: Tool;
  /** The definition as its server listed it: what pins hash and a human approves. */
  readonly definition: Tool;
  /** A tool of a server Bulkhead does not ship, treated by what bulkhead.yaml trusts it with. */
  readonly thirdParty: boolean;
  /** Its server's annotations set its risk tier (a built-in, or `trust: annotations`). */
  readonly annotationsTrusted: boolean;
  readonly risk: Risk;
  readonly subjectArg?: string;
  readonly doc: ToolDoc;
  /** What the scanner found in a third-party definition, one reason each. */
  readonly findings: readonly string[];
}

/** A tool held back for a human, with why. */
export interface QuarantinedTool {
  readonly entry: CatalogEntry;
  readonly reason: QuarantineReason;
}

/** A downstream as the catalog needs it: its namespace and what it is trusted with. */
export interface CatalogSource {
  readonly namespace: string;
  readonly builtin?: boolean;
  readonly trust: ReadonlySet<TrustGrant>;
}

export interface CatalogOptions {
  /** A third-party tool the scanner flags waits for `bulkhead approve` (quarantine_suspicious). */
  readonly quarantineSuspicious: boolean;
  /** Every new third-party tool waits for `bulkhead approve` on first sight (approve_new_tools). */
  readonly approveNewTools: boolean;
  /** The gateway's own tool names (the meta tools). */
  readonly gatewayTools: readonly string[];
}

const DEFAULT_OPTIONS: CatalogOptions = { quarantineSuspicious: true, approveNewTools: false, gatewayTools: [] };
const RISKS: readonly Risk[] = ['low', 'medium', 'high'];
/** What MCP clients accept as a tool name; anything else (a `/`, say) would slip past policy globs. */
export const VALID_TOOL_NAME = /^[A-Za-z0-9_-]{1,64}$/;
/** A bare name built of several words, specific enough to count as naming that tool. */
const COMPOUND_NAME = /[_-]/;

/**
 * A built-in states its risk tier in `_meta`. A third-party tool is medium whatever it claims: the
 * MCP specification has clients treat annotations of untrusted servers as untrusted, so a
 * destructive tool calling itself read-only gains nothing. Only when bulkhead.yaml trusts the
 * server's annotations do they set the tier (read-only is low, destructive is high).
 */
function riskOf(tool: Tool, builtin: boolean, annotationsTrusted: boolean): Risk {
  const declared = tool._meta?.[RISK_META];
  if (builtin && typeof declared === 'string' && (RISKS as readonly string[]).includes(declared)) return declared as Risk;
  if (!annotationsTrusted) return 'medium';
  if (tool.annotations?.readOnlyHint === true) return 'low';
  if (tool.annotations?.destructiveHint === true) return 'high';
  return 'medium';
}

interface NamespaceTools {
  readonly tools: readonly Tool[];
  readonly builtin: boolean;
}

/** The other servers' tools a definition might point the model at, for the scanner. */
function scanContexts(sources: ReadonlyMap<string, NamespaceTools>, gatewayTools: readonly string[]): (namespace: string) => ScanContext {
  const namespaces = new Set([...sources.keys(), GATEWAY_TOOLS_NAMESPACE]);
  const owners = new Map<string, string[]>();
  const add = (name: string, namespace: string) => {
    if (COMPOUND_NAME.test(name)) owners.set(name, [...(owners.get(name) ?? []), namespace]);
  };
  for (const name of gatewayTools) add(name, GATEWAY_TOOLS_NAMESPACE);
  for (const [namespace, { tools }] of sources) for (const tool of tools) add(tool.name, namespace);
  return (namespace) => {
    const ownTools = new Set(sources.get(namespace)?.tools.map((tool) => tool.name));
    const bareNames = new Map<string, string>();
    for (const [name, where] of owners) {
      const other = where.find((owner) => owner !== namespace);
      if (other && !ownTools.has(name)) bareNames.set(name, other);
    }
    return { namespace, ownTools, namespaces, bareNames };
  };
}

/** Every tool of every downstream under its namespaced name, with quarantine and a search index. */
export class Catalog {
  private readonly sources = new Map<string, NamespaceTools>();
  private readonly trust = new Map<string, ReadonlySet<TrustGrant>>();
  private readonly scanner = new DefinitionScanner();
  private readonly options: CatalogOptions;
  private byName = new Map<string, CatalogEntry>();
  private quarantine = new Map<string, QuarantinedTool>();
  private rejected: string[] = [];
  private collided: string[] = [];
  private pinsVersion = -1;
  /** Built on the first search after a change, so a burst of updates costs one build. */
  private index: ToolIndex | undefined;

  /**
   * `sources` fixes the order tools are listed in (the configuration's), whichever server
   * answers first at start-up: a listing that changed order from one start to the next would look
   * like a new tool list to clients and to prompt caches.
   */
  constructor(
    private readonly pins: PinStore,
    sources: readonly CatalogSource[] = [],
    options: Partial<CatalogOptions> = {},
  ) {
    this.options = { ...DEFAULT_OPTIONS, ...options };
    for (const source of sources) {
      this.sources.set(source.namespace, { tools: [], builtin: source.builtin === true });
      this.trust.set(source.namespace, source.trust);
    }
  }

  /** Replaces one namespace's tools; changed and suspicious definitions are quarantined, not listed. */
  update(namespace: string, tools: readonly Tool[], builtin: boolean): void {
    this.sources.set(namespace, { tools, builtin });
    this.rebuild();
  }

  /** Applies pins again when `bulkhead approve` (another process) changed them. */
  private current(): void {
    if (this.pins.version !== this.pinsVersion) this.rebuild();
  }

  private entryFor(namespace: string, definition: Tool, builtin: boolean, contextOf: (namespace: string) => ScanContext): CatalogEntry {
    const grants = builtin ? ALL_GRANTS : (this.trust.get(namespace) ?? NO_GRANTS);
    const annotationsTrusted = builtin || grants.has('annotations');
    const tool = builtin ? definition : this.scanner.shown(definition);
    const subject = builtin ? definition._meta?.[SUBJECT_META] : undefined;
    return {
      qualified: qualify(namespace, definition.name),
      wire: toWireName(namespace, definition.name),
      namespace,
      tool,
      definition,
      thirdParty: !builtin,
      annotationsTrusted,
      risk: riskOf(definition, builtin, annotationsTrusted),
      ...(typeof subject === 'string' ? { subjectArg: subject } : {}),
      doc: docFromJsonSchema(namespace, tool),
      findings: builtin || grants.has('descriptions') ? [] : this.scanner.findings(definition, contextOf(namespace)),
    };
  }

  private rebuild(): void {
    const contextOf = scanContexts(this.sources, this.options.gatewayTools);
    const candidates: CatalogEntry[] = [];
    const rejected: string[] = [];
    for (const [namespace, { tools, builtin }] of this.sources) {
      for (const tool of tools) {
        if (VALID_TOOL_NAME.test(tool.name)) candidates.push(this.entryFor(namespace, tool, builtin, contextOf));
        else rejected.push(`${namespace}:${tool.name}`);
      }
    }
    // Two tools that would share a wire name would share its calls too: neither is listed.
    const byWire = new Map<string, CatalogEntry[]>();
    for (const entry of candidates) byWire.set(entry.wire, [...(byWire.get(entry.wire) ?? []), entry]);
    const collided = [...byWire.entries()].filter(([, group]) => group.length > 1);
    const entries = candidates.filter((entry) => byWire.get(entry.wire)!.length === 1);
    const held = this.pins.check(
      entries.map((entry) => ({
        qualified: entry.qualified,
        tool: entry.definition,
        suspicious: this.options.quarantineSuspicious && entry.findings.length > 0,
        approveWhenNew: this.options.approveNewTools && entry.thirdParty,
      })),
    );
    const usable = new Map<string, CatalogEntry>();
    const quarantine = new Map<string, QuarantinedTool>();
    for (const entry of entries) {
      const reason = held.get(entry.qualified);
      if (reason) quarantine.set(entry.qualified, { entry, reason });
      else usable.set(entry.qualified, entry);
    }
    this.scanner.retain([...this.sources.values()].flatMap((source) => source.tools));
    this.byName = usable;
    this.quarantine = quarantine;
    this.rejected = rejected;
    this.collided = collided.map(([wire, group]) => `${group.map((entry) => entry.qualified).join(' and ')}: ${group.length === 2 ? 'both' : `all ${group.length}`} would be ${wire} on the wire; ${group.length === 2 ? 'neither is' : 'none is'} listed`);
    this.pinsVersion = this.pins.version;
    this.index = undefined;
  }

  entries(): CatalogEntry[] {
    this.current();
    return [...this.byName.values()];
  }

  /** Every tool held back for a human, with why. */
  quarantinedTools(): QuarantinedTool[] {
    this.current();
    return [...this.quarantine.values()];
  }

  /** Tools left out because their names are not valid MCP tool names. */
  invalidNames(): readonly string[] {
    return this.rejected;
  }

  /** Tools left out because another tool would have the same wire name, one line per name. */
  collisions(): readonly string[] {
    return this.collided;
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
    return this.quarantinedTool(name)?.entry;
  }

  /** A quarantined tool with why it waits. */
  quarantinedTool(name: string): QuarantinedTool | undefined {
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
