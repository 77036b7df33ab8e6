import type { AuthInfo } from '@modelcontextprotocol/sdk/server/auth/types.js';

/** Where the HTTP transport puts the principal a bearer token belongs to, in the SDK's AuthInfo. */
const PRINCIPAL_KEY = 'bulkhead/principal';

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
