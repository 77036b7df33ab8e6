import type { AuthInfo } from '@modelcontextprotocol/sdk/server/auth/types.js';
import { ErrorCode } from '@modelcontextprotocol/sdk/types.js';
import { z } from 'zod';

/**
 * Where the HTTP transport puts the principal a bearer token belongs to, in the SDK's AuthInfo, and
 * where a gateway puts the caller's principal in the `_meta` of a call it relays to a compartment
 * it started.
 */
export const PRINCIPAL_KEY = 'bulkhead/principal';

/** Who a call is made by (a person or an agent): a name of 1 to 200 characters on one line, as the ladder's principals are. */
export const principalSchema = z
  .string()
  .min(1, 'a principal has at least 1 character')
  .max(200, 'a principal has at most 200 characters')
  .regex(/^[^\u0000-\u001f\u007f-\u009f]*$/, 'a principal holds no control characters (a newline?)');

/**
 * The AuthInfo of an authenticated HTTP request: `label` names the token (a gateway maps it to a
 * profile), `principal` the person or agent the token was issued to, when the server knows one.
 */
export function authInfoFor(label: string, principal: string | undefined): AuthInfo {
  return { token: label, clientId: principal ?? label, scopes: [], ...(principal !== undefined ? { extra: { [PRINCIPAL_KEY]: principal } } : {}) };
}

export function principalOf(authInfo: AuthInfo | undefined): string | undefined {
  const principal = authInfo?.extra?.[PRINCIPAL_KEY];
  return typeof principal === 'string' ? principal : undefined;
}

/**
 * The principal a gateway named in a call's `_meta`: absent when it named none, refused when what
 * it sent is not a principal (acting as the compartment's own identity instead would hand the
 * caller the operator's roles).
 */
export function parentPrincipalOf(meta: Readonly<Record<string, unknown>> | undefined): { readonly principal?: string } | { readonly problem: string } {
  if (meta === undefined || !Object.hasOwn(meta, PRINCIPAL_KEY)) return {};
  const parsed = principalSchema.safeParse(meta[PRINCIPAL_KEY]);
  if (parsed.success) return { principal: parsed.data };
  return { problem: `the gateway's _meta["${PRINCIPAL_KEY}"] is not a principal (${parsed.error.issues[0]?.message ?? 'invalid'}); nothing was run` };
}

/**
 * The refusal of a `_meta` principal, as an invalid-params JSON-RPC error. Not an McpError: the SDK
 * sends a thrown error's message as it is, and an McpError's already starts with the
 * `MCP error -32602: ` that the client adds again.
 */
export class PrincipalRefused extends Error {
  readonly code = ErrorCode.InvalidParams;
}
