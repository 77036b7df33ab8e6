import { realpathSync } from 'node:fs';
import { basename, isAbsolute, relative, sep } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import type { Server } from '@modelcontextprotocol/sdk/server/index.js';
import { ErrorCode, RootsListChangedNotificationSchema, type Root } from '@modelcontextprotocol/sdk/types.js';
import { z } from 'zod';
import { errorMessage } from '@bulkhead/core';
import type { Downstream } from '../downstream/downstream.js';
import type { RelayContext } from './context.js';
import { clientName, routeOf } from './server-requests.js';
import { ProtocolError } from './protocol-error.js';

/**
 * A client's roots/list answer, read leniently: a root that is not `file:` (which the SDK's own
 * schema rejects, failing the whole list) is dropped by the narrowing instead.
 */
const ClientRootsSchema = z.object({ roots: z.array(z.object({ uri: z.string(), name: z.string().optional() })) });

/** `folder` is `root` or inside it. */
function within(folder: string, root: string): boolean {
  const path = relative(root, folder);
  // `..` as a whole first segment, not a prefix: a folder named `..notes` inside the root is inside.
  return path === '' || (path !== '..' && !path.startsWith(`..${sep}`) && !isAbsolute(path));
}

/** The real path of a folder a root names, or undefined when it names none (not `file:`, not a path, gone). */
function realFolderOf(uri: string): string | undefined {
  try {
    const url = new URL(uri);
    if (url.protocol !== 'file:') return undefined;
    return realpathSync.native(fileURLToPath(url));
  } catch {
    return undefined;
  }
}

function rootOf(folder: string, name = basename(folder) || folder): Root {
  return { uri: pathToFileURL(folder).href, name };
}

/** The gateway's --root folders as MCP roots, by their real paths. */
function gatewayRoots(context: RelayContext): { folder: string; root: Root }[] {
  return context.roots.map((folder) => {
    const real = realFolderOf(pathToFileURL(folder).href) ?? folder;
    return { folder: real, root: rootOf(real) };
  });
}

/**
 * A client's roots narrowed to the gateway's, never wider: a client root inside a gateway root is
 * kept, a gateway root inside a client root is kept instead of it, anything else is dropped (also
 * roots that are not `file:` folders). Paths are compared by their real paths, so a client root
 * that is a symlink out of the gateway's roots is dropped, and the real path is passed on.
 */
export function narrowRoots(clientRoots: readonly { uri: string; name?: string | undefined }[], gateway: readonly { folder: string; root: Root }[]): Root[] {
  const narrowed = new Map<string, Root>();
  for (const clientRoot of clientRoots) {
    const folder = realFolderOf(clientRoot.uri);
    if (folder === undefined) continue;
    if (gateway.some((own) => within(folder, own.folder))) {
      const root = rootOf(folder, clientRoot.name ?? basename(folder));
      narrowed.set(root.uri, root);
      continue;
    }
    for (const own of gateway.filter((own) => within(own.folder, folder))) narrowed.set(own.root.uri, own.root);
  }
  return [...narrowed.values()];
}

/**
 * A server's roots/list: the gateway's --root folders, narrowed to the roots of the client the
 * request is routed to when that client declared roots.
 */
export async function answerRoots(context: RelayContext, downstream: Downstream): Promise<{ roots: Root[] }> {
  const own = gatewayRoots(context);
  const signal = AbortSignal.timeout(context.config.call_timeout_ms);
  const route = routeOf(context, downstream, 'roots/list', signal);
  if (!route || !route.server.getClientCapabilities()?.roots) return { roots: own.map((entry) => entry.root) };
  try {
    const listed = await route.extra.sendRequest({ method: 'roots/list' }, ClientRootsSchema, { signal, timeout: context.config.call_timeout_ms });
    return { roots: narrowRoots(listed.roots, own) };
  } catch (error) {
    throw new ProtocolError(ErrorCode.InternalError, `roots/list from ${downstream.namespace} failed: ${clientName(route.server)} declared roots but did not list them (${errorMessage(error)})`);
  }
}

/** Tells every server that is up that the roots may have changed, so that it lists them again. */
function rootsChanged(context: RelayContext): void {
  for (const downstream of context.downstreams.values()) void downstream.notify('notifications/roots/list_changed');
}

/**
 * A client's roots/list_changed reaches every server. A connection that opens changes the answer
 * too (while it is the only one, a server asking outside a call gets its roots), so servers are
 * told then as well.
 */
export function installRoots(context: RelayContext, server: Server): void {
  server.setNotificationHandler(RootsListChangedNotificationSchema, async () => rootsChanged(context));
  const previous = server.oninitialized;
  server.oninitialized = () => {
    previous?.();
    rootsChanged(context);
  };
}
