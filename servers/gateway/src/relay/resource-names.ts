import type { DownstreamState, FeatureLists } from '../downstream/downstream.js';
import { matchesTemplate } from './uri-template.js';

/**
 * How resources are named through the gateway. A resource or template keeps its server's URI
 * unless another server offers the same URI (or the same template string); then each such one is
 * exposed as `bulkhead://<ns>/<original uri>`, unencoded, so a template stays a valid RFC 6570
 * template. `bulkhead://<ns>/<uri>` always reads from `<ns>`, whatever the lists say.
 */
export const GATEWAY_URI_SCHEME = 'bulkhead://';

/**
 * Whether `uri` is in the gateway's scheme, spelt in any case (RFC 3986: a scheme is
 * case-insensitive, so a client may well take `BULKHEAD://fs/…` for `bulkhead://fs/…`).
 */
export function inGatewayScheme(uri: string): boolean {
  return uri.slice(0, GATEWAY_URI_SCHEME.length).toLowerCase() === GATEWAY_URI_SCHEME;
}

/** What naming needs of a downstream: whether it is up, and what it lists. */
export interface ResourceOwner {
  readonly state: DownstreamState;
  readonly lists: Pick<FeatureLists, 'resources' | 'resourceTemplates'>;
}

export interface ResolvedResource {
  readonly namespace: string;
  /** The URI as the server knows it. */
  readonly uri: string;
}

/** Why a URI names no single server, for a message that says what to write instead. */
export type ResourceResolution =
  | ({ readonly kind: 'found' } & ResolvedResource)
  | { readonly kind: 'ambiguous'; readonly namespaces: readonly string[] }
  /** `bulkhead://<ns>` or `bulkhead://<ns>/` with no URI after it. */
  | { readonly kind: 'no_uri'; readonly namespace: string }
  /** `bulkhead://<name>/…` where no server is called `<name>`. */
  | { readonly kind: 'unknown_namespace'; readonly namespace: string }
  | { readonly kind: 'none' };

/** The namespace and URI of `bulkhead://<ns>/<uri>`, or undefined for another URI. */
export function splitGatewayUri(uri: string): { namespace: string; uri: string | undefined } | undefined {
  if (!inGatewayScheme(uri)) return undefined;
  const rest = uri.slice(GATEWAY_URI_SCHEME.length);
  const slash = rest.indexOf('/');
  if (slash < 0) return { namespace: rest, uri: undefined };
  const inner = rest.slice(slash + 1);
  return { namespace: rest.slice(0, slash), uri: inner === '' ? undefined : inner };
}

/** The one namespace among `matching`, or the ambiguity, or nothing. */
function single(matching: readonly string[], uri: string): ResourceResolution | undefined {
  if (matching.length === 1) return { kind: 'found', namespace: matching[0]!, uri };
  if (matching.length > 1) return { kind: 'ambiguous', namespaces: matching };
  return undefined;
}

/**
 * Which server a URI reads from, among `owners` (the caller passes the servers it may see; a
 * server that is not up offers nothing, but `bulkhead://<ns>/…` names it whatever its state).
 * A URI in the gateway's scheme names its server by the namespace alone, never by what a server
 * lists (a server's own `bulkhead://x@fs/…` is listed as `bulkhead://<its ns>/bulkhead://x@fs/…`).
 * Any other: a listed resource's exact URI first, then a template's exact string (completions
 * name a template), then the templates that match it.
 */
export function resolveResource(owners: ReadonlyMap<string, ResourceOwner>, uri: string): ResourceResolution {
  const prefixed = splitGatewayUri(uri);
  if (prefixed) {
    if (!owners.has(prefixed.namespace)) return { kind: 'unknown_namespace', namespace: prefixed.namespace };
    return prefixed.uri === undefined ? { kind: 'no_uri', namespace: prefixed.namespace } : { kind: 'found', namespace: prefixed.namespace, uri: prefixed.uri };
  }
  const up = [...owners].filter(([, owner]) => owner.state === 'ready');
  const found =
    single(up.filter(([, owner]) => owner.lists.resources.some((resource) => resource.uri === uri)).map(([namespace]) => namespace), uri) ??
    single(up.filter(([, owner]) => owner.lists.resourceTemplates.some((template) => template.uriTemplate === uri)).map(([namespace]) => namespace), uri) ??
    single(up.filter(([, owner]) => owner.lists.resourceTemplates.some((template) => matchesTemplate(template.uriTemplate, uri))).map(([namespace]) => namespace), uri);
  return found ?? { kind: 'none' };
}

/** The server and its URI that `uri` reads from, or undefined when it names none or several. */
export function resolveResourceUri(downstreams: ReadonlyMap<string, ResourceOwner>, uri: string): ResolvedResource | undefined {
  const resolved = resolveResource(downstreams, uri);
  return resolved.kind === 'found' ? { namespace: resolved.namespace, uri: resolved.uri } : undefined;
}

export function gatewayUri(namespace: string, uri: string): string {
  return `${GATEWAY_URI_SCHEME}${namespace}/${uri}`;
}

/**
 * The URI a client uses for `uri` of server `namespace`: the same one when it reads back from that
 * server through the gateway, `bulkhead://<ns>/<uri>` otherwise (another server offers it too).
 * A server's URI in the gateway's own scheme, in any spelling, is always shown under its
 * namespace: `bulkhead://x@fs/…`, `bulkhead://fs:1/…` or `BULKHEAD://fs/…` would otherwise read to
 * a client (and a model) as a resource of fs.
 */
export function exposedResourceUri(downstreams: ReadonlyMap<string, ResourceOwner>, namespace: string, uri: string): string {
  if (inGatewayScheme(uri)) return gatewayUri(namespace, uri);
  const resolved = resolveResourceUri(downstreams, uri);
  return resolved?.namespace === namespace && resolved.uri === uri ? uri : gatewayUri(namespace, uri);
}
