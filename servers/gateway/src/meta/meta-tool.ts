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

/** Finds a tool the caller may see, by either name form; one it may not see reads as unknown. */
export function lookup(ctx: MetaContext, name: string): CatalogEntry | string {
  const entry = ctx.catalog.get(name);
  if (entry && ctx.visible(entry)) return entry;
  const changed = ctx.catalog.quarantinedEntry(name);
  if (changed && ctx.visible(changed)) {
    return `${changed.wire} changed its definition since it was approved and is quarantined; a human must review it and run \`bulkhead approve ${changed.qualified}\``;
  }
  return `Unknown tool ${name}; use tool_search to find tools (names look like fs__read_file or fs:read_file)`;
}
