import type { Server } from '@modelcontextprotocol/sdk/server/index.js';
import { ErrorCode, GetPromptRequestSchema, GetPromptResultSchema, ListPromptsRequestSchema, type GetPromptResult } from '@modelcontextprotocol/sdk/types.js';
import type { Downstream } from '../downstream/downstream.js';
import type { RelayContext, RelayFactory, UpstreamExtra } from './context.js';
import { firstStarts } from './first-starts.js';
import { gated } from './gated.js';
import { passedOn, ProtocolError, relayedServerError } from './protocol-error.js';
import { promptCatalogOf, quarantinedPromptRefusal, type PromptCatalog, type PromptEntry } from './prompt-catalog.js';
import { pageOf } from './list-pages.js';
import { boundPromptResult, exposePromptLinks, untrustedPromptResult } from './prompt-results.js';

/** Whether the caller's profile sees a server at all (its prompts and completions with it). */
function seesServer(context: RelayContext, extra: UpstreamExtra, namespace: string): boolean {
  const { namespaceVisible } = context.accessOf(extra);
  return !namespaceVisible || namespaceVisible(namespace);
}

/**
 * Whether a caller may see a prompt: its profile sees the server, and its permission gate does not
 * deny getting it outright (discovery never grants permission, as with tools).
 */
export function promptVisible(context: RelayContext, extra: UpstreamExtra, entry: PromptEntry): boolean {
  return seesServer(context, extra, entry.namespace) && promptDenial(context, extra, entry) === undefined;
}

/** The permission gate's refusal of getting this prompt outright, if it refuses it (ask is decided when it is got). */
export function promptDenial(context: RelayContext, extra: UpstreamExtra, entry: PromptEntry): string | undefined {
  const gate = context.accessOf(extra).gate;
  if (gate.kind !== 'self') return undefined;
  const decided = gate.permissions.decide({ qualifiedName: `${entry.namespace}:prompts/get`, risk: 'low', args: { name: entry.name, arguments: {} }, subjectArg: 'name' });
  return decided.verdict === 'deny' ? `Permission denied: ${decided.reason}.${decided.remedy ? ` To allow it: ${decided.remedy}.` : ''}` : undefined;
}

/** The server an exposed prompt name (`<ns>__<name>`) would belong to, if the gateway runs it. */
function ownerOf(context: RelayContext, name: string): Downstream | undefined {
  const separator = name.indexOf('__');
  return separator > 0 ? context.downstreams.get(name.slice(0, separator)) : undefined;
}

/** A prompt of a server on its first start is waited for, as a tool is: its first attempt is bounded by start_timeout_ms. */
export async function awaitPromptOwner(context: RelayContext, name: string): Promise<void> {
  const owner = ownerOf(context, name);
  if (owner?.firstStarting) await owner.firstAttempt;
}

/** The owner's reason a prompt name is not known: the server is still starting or down, when it is. */
function unknownPrompt(context: RelayContext, name: string): string {
  const unavailable = ownerOf(context, name)?.unavailableReason;
  return `Unknown prompt ${name}; ${unavailable ? `${unavailable}; ` : ''}prompts/list lists the prompts there are`;
}

/**
 * The prompt a caller named, if it may see it and it is not quarantined; otherwise the JSON-RPC
 * error that says why (unknown to this caller, or quarantined and how to approve it).
 */
export function promptFor(context: RelayContext, catalog: PromptCatalog, extra: UpstreamExtra, name: string): PromptEntry | ProtocolError {
  const held = catalog.quarantined(name);
  if (held && seesServer(context, extra, held.entry.namespace)) return new ProtocolError(ErrorCode.InvalidRequest, quarantinedPromptRefusal(held));
  const entry = catalog.get(name);
  if (!entry || !seesServer(context, extra, entry.namespace)) return new ProtocolError(ErrorCode.InvalidParams, unknownPrompt(context, name));
  return entry;
}

/**
 * prompts/list and prompts/get across every server that is up, each prompt named `<ns>__<name>`
 * as tools are on the wire; a get goes to its owner with the original name through the
 * permission gate (`<ns>:prompts/get`, subject `name`) and is audited. A third-party server's
 * messages come back wrapped as untrusted content unless bulkhead.yaml trusts its results.
 */
export const promptsRelay: RelayFactory = (context) => {
  const catalog = promptCatalogOf(context);
  const reported = new Set<string>();
  // What was listed last, by server, as JSON: nothing before any server is up.
  let listed = new Map<string, string>();
  /** Rebuilds, reports what is new to report, and tells every client when what is listed changed. */
  const changed = () => {
    catalog.invalidate();
    for (const note of catalog.problems().filter((line) => !reported.has(line))) {
      reported.add(note);
      context.report(note);
    }
    const now = new Map<string, string>();
    for (const namespace of new Set(catalog.entries().map((entry) => entry.namespace))) {
      now.set(namespace, JSON.stringify(catalog.entries().filter((entry) => entry.namespace === namespace).map((entry) => entry.shown)));
    }
    const changedServers = [...new Set([...now.keys(), ...listed.keys()])].filter((namespace) => now.get(namespace) !== listed.get(namespace));
    listed = now;
    // A client that is gone, or not initialized yet, has no use for it; one whose profile sees
    // none of the servers that changed is told nothing.
    for (const server of context.sessions) {
      const access = context.accessOfConnection(server);
      if (changedServers.some((namespace) => access.namespaceVisible?.(namespace) ?? true)) server.sendPromptListChanged().catch(() => undefined);
    }
  };
  for (const downstream of context.downstreams.values()) {
    downstream.listeners.list.add((list) => {
      if (list === 'prompts') changed();
    });
    downstream.listeners.ready.add(changed);
    downstream.listeners.down.add(changed);
  }

  const get = async (server: Server, extra: UpstreamExtra, name: string, args: Record<string, string> | undefined): Promise<GetPromptResult> => {
    await awaitPromptOwner(context, name);
    const found = promptFor(context, catalog, extra, name);
    if (found instanceof ProtocolError) {
      context.auditor.recordRejected(name, context.callerOf(server, extra), { name, arguments: args ?? {} }, found.message);
      throw found;
    }
    const downstream = context.downstreams.get(found.namespace)!;
    const operation = { namespace: found.namespace, method: 'prompts/get', risk: 'low', args: { name: found.name, arguments: args ?? {} }, subjectArg: 'name' } as const;
    return gated(context, { server, extra }, operation, async () => {
      // Used now, so the pins of first sight are kept for the next run to be checked against.
      context.pins.commit();
      const trusted = !found.thirdParty || downstream.spec.trust.has('results');
      const source = `${found.namespace} (third-party MCP server)`;
      try {
        const result = await downstream.request(
          { method: 'prompts/get', params: { name: found.name, ...(args !== undefined ? { arguments: args } : {}) } },
          GetPromptResultSchema,
          { signal: extra.signal, timeoutMs: context.config.call_timeout_ms },
          `prompts/get ${found.name}`,
        );
        const linked = exposePromptLinks(result, found.namespace, context.downstreams);
        return boundPromptResult(trusted ? linked : untrustedPromptResult(source, linked), context.limits);
      } catch (error) {
        throw relayedServerError(error, { trusted, namespace: found.namespace, what: `prompts/get ${found.exposed}`, signal: extra.signal });
      }
    });
  };

  return {
    capabilities: { prompts: { listChanged: true } },
    install(server) {
      server.setRequestHandler(ListPromptsRequestSchema, async (request, extra) => {
        await firstStarts(context);
        const visible = catalog.entries().filter((entry) => promptVisible(context, extra, entry));
        let page: ReturnType<typeof pageOf<PromptEntry>>;
        try {
          page = pageOf('prompts/list', visible, request.params?.cursor);
        } catch (error) {
          throw passedOn(error);
        }
        return { prompts: page.items.map((entry) => entry.shown), ...(page.nextCursor !== undefined ? { nextCursor: page.nextCursor } : {}) };
      });
      server.setRequestHandler(GetPromptRequestSchema, (request, extra) => get(server, extra, request.params.name, request.params.arguments));
    },
  };
};
