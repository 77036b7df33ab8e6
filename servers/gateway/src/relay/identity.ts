import { PRINCIPAL_KEY } from '@bulkhead/core';
import type { DownstreamSpec } from '../downstream/downstream.js';

/**
 * The `_meta` of a tools/call the gateway relays, made here from nothing: no key a client sent (a
 * `bulkhead/principal` in its request's `_meta`, a `_meta` inside call_tool's arguments) is ever
 * copied into it, so a client cannot name itself someone else. The caller's principal goes only to
 * a compartment the gateway started itself (`--gated-by-gateway` over stdio, the one kind that
 * believes it); a third-party server is told nothing about who calls, whether it runs as a child
 * or over HTTP: identity stays inside the trust boundary.
 */
export function relayedCallMeta(spec: DownstreamSpec, principal: string | undefined): Readonly<Record<string, unknown>> | undefined {
  if (principal === undefined || spec.kind !== 'stdio' || spec.builtin !== true) return undefined;
  return { [PRINCIPAL_KEY]: principal };
}
