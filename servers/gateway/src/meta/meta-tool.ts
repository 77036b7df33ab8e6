import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import type { z } from 'zod';
import type { CallState, ToolAnnotations } from '@bulkhead/core';
import type { Catalog, CatalogEntry } from '../catalog.js';
import type { LoadedTools } from '../session.js';

/** What a meta tool may use: the catalog as this caller may see it, and the session's loaded set. */
export interface MetaContext {
  readonly catalog: Catalog;
  readonly session: LoadedTools;
  readonly mode: 'dynamic' | 'stable';
  readonly visible: (entry: CatalogEntry) => boolean;
  /** Runs a downstream tool through the full chain (validation, permission gate, audit). */
  readonly callDownstream: (entry: CatalogEntry, args: unknown, state: Pick<CallState, 'extra' | 'signal' | 'caller' | 'clientCanElicit'>) => Promise<CallToolResult>;
  readonly listChanged: () => Promise<void>;
  /** Waits, a bounded time, for downstreams on their first start, so an early search sees them. */
  readonly firstStarts: () => Promise<void>;
  /** Downstreams whose tools are missing or incomplete, in words. */
  readonly downstreamNotes: () => string[];
  /** Waits until the server a tool name belongs to has finished its first start, if it is on it. */
  readonly awaitTool: (name: string) => Promise<void>;
  /** Why the server a tool name belongs to cannot serve it now, if it cannot. */
  readonly unavailableFor: (name: string) => string | undefined;
  /** Puts a quarantined tool's new definition to the human; the entry when approved. */
  readonly reviewQuarantined: (name: string) => Promise<CatalogEntry | undefined>;
  readonly state: Pick<CallState, 'extra' | 'signal' | 'caller' | 'clientCanElicit'>;
}

export interface MetaTool<I extends z.ZodObject = z.ZodObject> {
  readonly name: string;
  readonly title: string;
  readonly description: string;
  readonly input: I;
  readonly annotations: ToolAnnotations;
  /** Shown in stable mode, where the tool list never changes. */
  readonly stable: boolean;
  readonly run: (args: z.output<I>, ctx: MetaContext) => Promise<CallToolResult>;
}

export function defineMetaTool<I extends z.ZodObject>(tool: MetaTool<I>): MetaTool {
  return tool as unknown as MetaTool;
}

/** The downstream notes as a paragraph to append to an answer, or nothing. */
export function notesParagraph(ctx: MetaContext): string {
  const notes = ctx.downstreamNotes();
  return notes.length ? `\n\nNot every server is available: ${notes.join('; ')}.` : '';
}

/** The downstream notes for structured content, present only when there are any. */
export function unavailableField(ctx: MetaContext): { unavailable?: string[] } {
  const notes = ctx.downstreamNotes();
  return notes.length ? { unavailable: notes } : {};
}

/** Finds a tool the caller may see, by either name form; one it may not see reads as unknown. */
export function lookup(ctx: MetaContext, name: string): CatalogEntry | string {
  const entry = ctx.catalog.get(name);
  if (entry && ctx.visible(entry)) return entry;
  const changed = ctx.catalog.quarantinedEntry(name);
  if (changed && ctx.visible(changed)) {
    return `${changed.wire} changed its definition since it was approved and is quarantined; a human must review it and run \`bulkhead approve ${changed.qualified}\``;
  }
  const unavailable = ctx.unavailableFor(name);
  return `Unknown tool ${name}; ${unavailable ? `${unavailable}; ` : ''}use tool_search to find tools (names look like fs__read_file or fs:read_file)`;
}
