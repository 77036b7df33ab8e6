import { createServer, type IncomingMessage, type Server as HttpServer, type ServerResponse } from 'node:http';
import { randomUUID, timingSafeEqual } from 'node:crypto';
import { isIP } from 'node:net';
import { hostname, networkInterfaces } from 'node:os';
import { StreamableHTTPServerTransport } from '@modelcontextprotocol/sdk/server/streamableHttp.js';
import { isInitializeRequest } from '@modelcontextprotocol/sdk/types.js';
import type { AuthInfo } from '@modelcontextprotocol/sdk/server/auth/types.js';
import type { ToolServer } from '../kit/server.js';
import { authInfoFor } from '../kit/principal.js';
import { errorReply, INVALID_REQUEST, PARSE_ERROR, readJsonRpcMessage } from './json-rpc.js';

export const MCP_PATH = '/mcp';
export const DEFAULT_SESSION_IDLE_MS = 30 * 60 * 1000;

export interface HttpOptions {
  readonly host: string;
  readonly port: number;
  /** The bearer token every request must carry; one of `token`, `tokens`, the server's own `verifyToken` or `noAuth` is required. */
  readonly token?: string;
  /** More accepted tokens, each with a label the server sees as `authInfo.clientId` (a gateway maps it to a profile). */
  readonly tokens?: readonly { readonly token: string; readonly label: string }[];
  /** Serve without any bearer token: only on loopback, and only when asked for (`--no-auth`). */
  readonly noAuth?: boolean;
  readonly allowedOrigins?: readonly string[];
  readonly allowedHosts?: readonly string[];
  readonly maxBodyBytes?: number;
  /** A session with no request for this long is closed (default 30 minutes). */
  readonly sessionIdleMs?: number;
  /**
   * `--stateless`: no MCP sessions. Every POST is answered by a connection of its own, closed with
   * its answer, so any of several servers behind one address may take any request; GET and DELETE
   * are refused (there is no session stream to open or session to end).
   */
  readonly stateless?: boolean;
}

export interface RunningHttp {
  readonly url: string;
  readonly port: number;
  close(): Promise<void>;
}

/** 0.0.0.0 or ::, which listen on every interface of the machine. */
export function isWildcard(host: string): boolean {
  const bare = host.replace(/^\[|\]$/g, '');
  return bare === '0.0.0.0' || bare === '::';
}

export function isLoopback(host: string): boolean {
  const bare = host.replace(/^\[|\]$/g, '');
  return bare === 'localhost' || bare === '::1' || (isIP(bare) === 4 && bare.startsWith('127.'));
}

/** A JSON-RPC error body (JSON text) with an HTTP status. */
function sendReply(res: ServerResponse, status: number, reply: string, headers: Record<string, string> = {}): void {
  if (res.headersSent) return;
  res.writeHead(status, { 'content-type': 'application/json', ...headers });
  res.end(reply);
}

/** A refusal of the request as a whole, before any message was read from it: JSON-RPC code -32000, id null. */
function jsonError(res: ServerResponse, status: number, message: string, headers: Record<string, string> = {}): void {
  sendReply(res, status, errorReply({ kind: 'none' }, -32000, message), headers);
}

const UTF8_BOM = Buffer.from([0xef, 0xbb, 0xbf]);
const strictUtf8 = new TextDecoder('utf-8', { fatal: true, ignoreBOM: true });

/**
 * The one JSON-RPC message of a POST body, or the error that refuses it (HTTP 400). Batches were
 * removed from MCP in revision 2025-06-18 (the SDK speaks 2025-11-25), so an array is refused as
 * readJsonRpcMessage refuses it on stdio; so is a body that is not strict UTF-8 or starts with a
 * byte order mark, which RFC 8259 forbids a sender to add.
 */
function messageOfBody(raw: Buffer): { message: unknown } | { problem: string; reply: string } {
  const refuse = (code: number, problem: string) => ({ problem, reply: errorReply({ kind: 'none' }, code, problem) });
  if (raw.subarray(0, 3).equals(UTF8_BOM)) return refuse(PARSE_ERROR, 'Parse error: the body starts with a UTF-8 byte order mark, which JSON text must not');
  let text: string;
  try {
    text = strictUtf8.decode(raw);
  } catch {
    return refuse(PARSE_ERROR, 'Parse error: the body is not valid UTF-8');
  }
  const inbound = readJsonRpcMessage(text);
  if (inbound.kind === 'message') return { message: inbound.message };
  return { problem: inbound.problem, reply: inbound.reply ?? errorReply({ kind: 'none' }, INVALID_REQUEST, inbound.problem) };
}

class BodyTooLarge extends Error {}

function readBody(req: IncomingMessage, limit: number): Promise<Buffer> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    let size = 0;
    req.on('data', (chunk: Buffer) => {
      size += chunk.length;
      if (size > limit) {
        reject(new BodyTooLarge());
        req.resume();
        return;
      }
      chunks.push(chunk);
    });
    req.on('end', () => resolve(Buffer.concat(chunks)));
    req.on('error', reject);
  });
}

function sameToken(expected: string, given: Buffer): boolean {
  const wanted = Buffer.from(expected);
  return given.length === wanted.length && timingSafeEqual(given, wanted);
}

/** The token of an `Authorization: Bearer …` header: the rest of the line, trimmed (a token file may hold spaces). */
function bearerToken(header: string | undefined): string | undefined {
  const token = /^Bearer\s+(.+)$/i.exec(header ?? '')?.[1]?.trim();
  return token === '' ? undefined : token;
}

/** Why a stateless server refuses GET and DELETE /mcp (HTTP 405): a client reads it and keeps to POST. */
export const STATELESS_REFUSAL = 'this server is stateless (--stateless): it keeps no MCP sessions, so there is no session stream to GET and no session to DELETE; send every message as its own POST';

/** The start banner's line for a stateless server. */
export const STATELESS_BANNER = 'stateless: no MCP sessions, every POST /mcp answered on its own (servers on one database may share an address); calls that need confirming wait as pending approvals';

/** Paths the server keeps for itself: a route cannot take them. */
function isReservedPath(prefix: string): boolean {
  return MCP_PATH.startsWith(prefix) || '/healthz'.startsWith(prefix) || prefix.startsWith(MCP_PATH);
}

/**
 * Serves a ToolServer over Streamable HTTP at `/mcp`, one MCP session per client, or with
 * `stateless` one connection per POST. Requests are checked before the SDK sees them: Host and
 * Origin against DNS rebinding, the bearer token, and the body size.
 */
export async function serveHttp(toolServer: ToolServer, options: HttpOptions): Promise<RunningHttp> {
  const accepted = [...(options.token ? [{ token: options.token, label: 'default' }] : []), ...(options.tokens ?? [])];
  const { routes = [], verifyToken } = toolServer.http ?? {};
  const authRequired = accepted.length > 0 || verifyToken !== undefined;
  if (!isLoopback(options.host) && !authRequired) {
    throw new Error(`binding to ${options.host} exposes the server beyond this machine; give --token-file FILE so clients must present a bearer token`);
  }
  // Secure by default for every caller of serveHttp, not only the CLI: no token is a choice.
  if (!authRequired && options.noAuth !== true) throw new Error('serving HTTP needs a bearer token (token or tokens), or noAuth: true (--no-auth) to serve loopback without one');
  const reserved = routes.find((route) => isReservedPath(route.pathPrefix));
  if (reserved) throw new Error(`an HTTP route cannot take ${reserved.pathPrefix}: ${MCP_PATH} and /healthz are the server's own`);

  /** The AuthInfo of a request's bearer token; undefined when it carries none that is accepted. */
  const authenticate = async (header: string | undefined): Promise<AuthInfo | undefined> => {
    const token = bearerToken(header);
    if (token === undefined) return undefined;
    const given = Buffer.from(token);
    const label = accepted.find((entry) => sameToken(entry.token, given))?.label;
    if (label !== undefined) return authInfoFor(label, undefined);
    const principal = await verifyToken?.(token);
    return principal === undefined ? undefined : authInfoFor(`principal:${principal}`, principal);
  };
  const maxBody = options.maxBodyBytes ?? toolServer.maxRequestBytes;
  const sessions = new Map<string, StreamableHTTPServerTransport>();
  const lastSeen = new Map<string, number>();
  /** The token label each session was opened with; a session cannot change hands. */
  const sessionLabels = new Map<string, string | undefined>();
  const idleMs = options.sessionIdleMs ?? DEFAULT_SESSION_IDLE_MS;
  let port = options.port;
  const sweeper = setInterval(() => {
    const now = Date.now();
    for (const [id, seen] of lastSeen) {
      if (now - seen > idleMs) {
        lastSeen.delete(id);
        void sessions.get(id)?.close();
      }
    }
  }, Math.min(idleMs, 60_000));
  sweeper.unref();

  /** Host header values this server answers to; filled in once the port is known. */
  let hostAllowList = new Set<string>();
  const computeHostAllowList = (): Set<string> => {
    const names = new Set<string>([options.host, ...(options.allowedHosts ?? [])]);
    if (isLoopback(options.host) || isWildcard(options.host)) ['localhost', '127.0.0.1', '::1'].forEach((n) => names.add(n));
    if (isWildcard(options.host)) {
      names.add(hostname());
      for (const addresses of Object.values(networkInterfaces())) for (const address of addresses ?? []) names.add(address.address);
    }
    const withPorts = new Set<string>();
    for (const name of names) {
      const bracketed = isIP(name) === 6 ? `[${name}]` : name;
      withPorts.add(`${bracketed}:${port}`.toLowerCase());
      if (port === 80) withPorts.add(bracketed.toLowerCase());
    }
    return withPorts;
  };

  const originAllowed = (origin: string): boolean => {
    if ((options.allowedOrigins ?? []).includes(origin)) return true;
    try {
      const url = new URL(origin);
      return (url.protocol === 'http:' || url.protocol === 'https:') && hostAllowList.has(url.host.toLowerCase());
    } catch {
      return false;
    }
  };

  const authenticated = async (req: IncomingMessage): Promise<{ auth?: AuthInfo }> => {
    const auth = await authenticate(req.headers.authorization);
    return auth ? { auth } : {};
  };

  /** The one JSON-RPC message of a POST, or undefined once the request was refused (too large, not one valid message). */
  async function postedMessage(req: IncomingMessage, res: ServerResponse): Promise<{ message: unknown } | undefined> {
    let raw: Buffer;
    try {
      raw = await readBody(req, maxBody);
    } catch (error) {
      if (error instanceof BodyTooLarge) {
        jsonError(res, 413, `request body exceeds the limit of ${maxBody} bytes`);
        return undefined;
      }
      throw error;
    }
    const read = messageOfBody(raw);
    if ('reply' in read) {
      process.stderr.write(`bulkhead-${toolServer.namespace}: refused an HTTP message: ${read.problem}\n`);
      sendReply(res, 400, read.reply);
      return undefined;
    }
    return read;
  }

  /** Connections of a stateless server that are answering their one request, to close them all at shutdown. */
  const oneRequestConnections = new Set<StreamableHTTPServerTransport>();

  /**
   * A stateless server's request: a transport with no session (the SDK's `sessionIdGenerator:
   * undefined`, so no `Mcp-Session-Id` is issued or asked for) and a connection of the tool server
   * that knows it lives for this one message, both closed once the answer is sent or the client
   * went away. Whatever a connection would remember between requests is gone with it, which is
   * what lets another server take the next request.
   */
  async function serveOneRequest(req: IncomingMessage, res: ServerResponse, auth: AuthInfo | undefined): Promise<void> {
    if (req.method !== 'POST') return jsonError(res, 405, STATELESS_REFUSAL, { allow: 'POST' });
    const posted = await postedMessage(req, res);
    if (!posted) return;
    // A client that left while its body was read has nobody to answer, and its 'close' has fired already.
    if (res.destroyed) return;
    const transport = new StreamableHTTPServerTransport({ sessionIdGenerator: undefined });
    oneRequestConnections.add(transport);
    res.once('close', () => {
      oneRequestConnections.delete(transport);
      void transport.close();
    });
    await toolServer.connect(transport, auth, { oneRequest: true });
    await transport.handleRequest(req, res, posted.message);
  }

  async function handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const url = new URL(req.url ?? '/', 'http://placeholder');
    const host = (req.headers.host ?? '').toLowerCase();
    if (!hostAllowList.has(host)) return jsonError(res, 403, `Host header ${JSON.stringify(req.headers.host ?? '')} is not allowed (DNS-rebinding protection)`);
    const origin = req.headers.origin;
    if (origin !== undefined && !originAllowed(origin)) return jsonError(res, 403, `Origin ${origin} is not allowed (DNS-rebinding protection); add it with --allow-origin`);
    if (url.pathname === '/healthz' && req.method === 'GET') {
      res.writeHead(200, { 'content-type': 'text/plain' }).end('ok\n');
      return;
    }
    const route = routes.find((candidate) => url.pathname.startsWith(candidate.pathPrefix));
    if (route) return route.handle(req, res, { ...(await authenticated(req)), presentedCredentials: req.headers.authorization !== undefined });
    if (url.pathname !== MCP_PATH) return jsonError(res, 404, `not found; the MCP endpoint is ${MCP_PATH}`);
    const auth = authRequired ? await authenticate(req.headers.authorization) : undefined;
    if (authRequired && auth === undefined) {
      return jsonError(res, 401, 'missing, wrong or revoked bearer token', { 'www-authenticate': 'Bearer' });
    }
    const label = auth?.token;
    if (auth !== undefined) (req as IncomingMessage & { auth?: AuthInfo }).auth = auth;
    const declared = Number(req.headers['content-length'] ?? '0');
    if (declared > maxBody) return jsonError(res, 413, `request body is ${declared} bytes; the limit is ${maxBody}`);

    if (options.stateless) return serveOneRequest(req, res, auth);

    const sessionId = req.headers['mcp-session-id'];
    const existing = typeof sessionId === 'string' ? sessions.get(sessionId) : undefined;
    if (existing && typeof sessionId === 'string') {
      if (sessionLabels.get(sessionId) !== label) return jsonError(res, 403, 'this session was opened with another bearer token');
      lastSeen.set(sessionId, Date.now());
    }

    if (req.method === 'POST') {
      const posted = await postedMessage(req, res);
      if (!posted) return;
      const body = posted.message;
      if (existing) return existing.handleRequest(req, res, body);
      if (sessionId !== undefined) return jsonError(res, 404, 'unknown or expired session; start a new one with initialize');
      if (!isInitializeRequest(body)) return jsonError(res, 400, 'no session: the first request must be initialize');
      const transport: StreamableHTTPServerTransport = new StreamableHTTPServerTransport({
        sessionIdGenerator: () => randomUUID(),
        onsessioninitialized: (id) => {
          sessions.set(id, transport);
          sessionLabels.set(id, label);
          lastSeen.set(id, Date.now());
        },
      });
      transport.onclose = () => {
        if (!transport.sessionId) return;
        sessions.delete(transport.sessionId);
        sessionLabels.delete(transport.sessionId);
        lastSeen.delete(transport.sessionId);
      };
      await toolServer.connect(transport, auth);
      await transport.handleRequest(req, res, body);
      if (transport.sessionId === undefined) await transport.close();
      return;
    }
    if (req.method === 'GET' || req.method === 'DELETE') {
      if (!existing) return jsonError(res, sessionId === undefined ? 400 : 404, 'unknown or missing mcp-session-id');
      return existing.handleRequest(req, res);
    }
    res.writeHead(405, { allow: 'GET, POST, DELETE' }).end();
  }

  const server: HttpServer = createServer((req, res) => {
    handle(req, res).catch((error: unknown) => jsonError(res, 500, `internal error: ${error instanceof Error ? error.message : String(error)}`));
  });
  server.headersTimeout = 30_000;
  server.requestTimeout = 0;
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(options.port, options.host, () => resolve());
  });
  const address = server.address();
  port = typeof address === 'object' && address ? address.port : options.port;
  hostAllowList = computeHostAllowList();
  const shownHost = isIP(options.host) === 6 ? `[${options.host}]` : options.host;
  return {
    url: `http://${shownHost}:${port}${MCP_PATH}`,
    port,
    close: async () => {
      clearInterval(sweeper);
      await Promise.allSettled([...sessions.values(), ...oneRequestConnections].map((t) => t.close()));
      sessions.clear();
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}
