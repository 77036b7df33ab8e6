import type { IncomingMessage, ServerResponse } from 'node:http';
import { DEFAULT_MAX_REQUEST_BYTES, errorMessage, principalOf, type DirectCall, type DirectCallOutcome, type HttpRoute, type RouteCaller } from '@bulkhead/core';
import type { LadderPolicy } from '../policy.js';
import { ANONYMOUS } from '../store/tokens.js';

/** zz's tool endpoint: `POST /api/repos/<owner>/<repo>/tools/<tool>`. */
const ROUTE_PREFIX = '/api/';
const TOOL_PATH = /^\/api\/repos\/([^/]+)\/([^/]+)\/tools\/([^/]+)$/;

/** HTTP statuses of the refusal codes a call can end with; any other is a bad request. */
const STATUS_OF_CODE: Readonly<Record<string, number>> = {
  denied: 403,
  forbidden: 403,
  not_found: 404,
  conflict: 409,
  claimed: 409,
  waiting: 409,
  blocked: 409,
  stale_fence: 409,
  revision_conflict: 409,
  expired: 409,
  too_large: 413,
  internal: 500,
  tool_error: 500,
  git_failed: 502,
  git_missing: 502,
  audit_unavailable: 503,
  cancelled: 503,
  timeout: 504,
};

class HttpError extends Error {
  constructor(
    readonly status: number,
    message: string,
    readonly headers: Readonly<Record<string, string>> = {},
  ) {
    super(message);
  }
}

function send(response: ServerResponse, status: number, body: { result: unknown } | { error: string }, headers: Readonly<Record<string, string>> = {}): void {
  if (response.headersSent) return;
  const text = JSON.stringify(body);
  response.writeHead(status, { 'content-type': 'application/json; charset=utf-8', 'content-length': Buffer.byteLength(text), ...headers });
  response.end(text);
}

/** What a remote caller is told of a failure the server did not word for it; the detail goes to the server's log. */
function internalError(detail: string): string {
  process.stderr.write(`bulkhead-ladder tool endpoint: ${detail}\n`);
  return 'internal error; the server log has the details';
}

async function readJsonObject(request: IncomingMessage, maxBytes: number, uploadMs: number | undefined): Promise<Record<string, unknown>> {
  const chunks: Buffer[] = [];
  let size = 0;
  const slow = uploadMs === undefined ? undefined : setTimeout(() => request.destroy(new Error('upload too slow')), uploadMs);
  try {
    for await (const chunk of request as AsyncIterable<Buffer>) {
      size += chunk.length;
      if (size > maxBytes) throw new HttpError(413, `the body is over ${maxBytes} bytes`);
      chunks.push(chunk);
    }
  } finally {
    clearTimeout(slow);
  }
  const text = Buffer.concat(chunks).toString('utf8').trim();
  if (text === '') return {};
  let body: unknown;
  try {
    body = JSON.parse(text);
  } catch {
    throw new HttpError(400, 'the body is not JSON; send the tool arguments as a JSON object');
  }
  if (typeof body !== 'object' || body === null || Array.isArray(body)) throw new HttpError(400, 'the body must be a JSON object of tool arguments');
  return body as Record<string, unknown>;
}

function decodedSegment(segment: string): string {
  try {
    return decodeURIComponent(segment);
  } catch {
    throw new HttpError(400, `${segment} in the URL is not well-formed percent-encoding`);
  }
}

/** `{"result": …}` is the structured result; an error is the refusal's words with the status of its code. */
function answer(response: ServerResponse, outcome: DirectCallOutcome): void {
  const text = outcome.result.content.map((block) => (block.type === 'text' ? block.text : '')).join('\n');
  if (outcome.errorCode === undefined) send(response, 200, { result: outcome.result.structuredContent ?? text });
  else if (outcome.errorCode === 'internal') send(response, 500, { error: internalError(text) });
  else send(response, STATUS_OF_CODE[outcome.errorCode] ?? 400, { error: text });
}

/**
 * zz's tool endpoint as a route of the ladder's HTTP server, beside `/mcp`. The caller is the
 * ladder token's actor, or anonymous for a public repository's reading tool called without a token;
 * the URL's repository scopes the call (see scopedArguments), and the call runs through the
 * server's audit log and permission gate like an MCP call.
 */
export function toolEndpointRoute(call: DirectCall, publicRead: LadderPolicy['public_read']): HttpRoute {
  const publicRepos = new Set(publicRead.repos);
  const publicTools = new Set<string>(publicRead.tools);
  // An anonymous reader sends a few arguments: it gets a small body, a short upload and a few calls at once.
  let anonymousCalls = 0;

  const actorOf = (caller: RouteCaller, repo: string, tool: string): string => {
    const principal = principalOf(caller.auth);
    if (principal !== undefined) return principal;
    if (caller.auth !== undefined) throw new HttpError(401, 'the --token-file token opens /mcp only; this endpoint takes ladder tokens (bulkhead-ladder token create --actor NAME)');
    if (caller.presentedCredentials) throw new HttpError(401, 'the token is not a ladder token, or it was revoked (bulkhead-ladder token list)');
    if (publicRepos.has(repo) && publicTools.has(tool)) return ANONYMOUS;
    throw new HttpError(401, 'send Authorization: Bearer <token> (bulkhead-ladder token create --actor NAME makes one)');
  };

  const serve = async (request: IncomingMessage, response: ServerResponse, caller: RouteCaller): Promise<void> => {
    const match = TOOL_PATH.exec(new URL(request.url ?? '/', 'http://localhost').pathname);
    if (!match) throw new HttpError(404, 'not found; tools are at POST /api/repos/<owner>/<repo>/tools/<tool>');
    if (request.method !== 'POST') throw new HttpError(405, 'tools are called with POST', { allow: 'POST' });
    const repo = `${decodedSegment(match[1]!)}/${decodedSegment(match[2]!)}`;
    const tool = decodedSegment(match[3]!);
    const actor = actorOf(caller, repo, tool);
    const anonymous = actor === ANONYMOUS;
    if (anonymous && anonymousCalls >= publicRead.max_concurrent_calls) throw new HttpError(503, 'too many calls without a token at once; retry shortly', { 'retry-after': '1' });
    if (anonymous) anonymousCalls++;
    try {
      const body = await readJsonObject(request, anonymous ? publicRead.max_body_bytes : DEFAULT_MAX_REQUEST_BYTES, anonymous ? publicRead.upload_timeout_ms : undefined);
      const cancelled = new AbortController();
      response.on('close', () => {
        if (!response.writableFinished) cancelled.abort(new Error('the client closed the connection'));
      });
      answer(response, await call(tool, body, { caller: `tool-endpoint@${actor}`, principal: actor, signal: cancelled.signal, routeParams: { repo } }));
    } finally {
      if (anonymous) anonymousCalls--;
    }
  };

  return {
    pathPrefix: ROUTE_PREFIX,
    describe: (baseUrl) => `zz tool endpoint: POST ${baseUrl}/api/repos/<owner>/<repo>/tools/<tool> with Authorization: Bearer <token> (bulkhead-ladder token create --actor NAME)`,
    async handle(request, response, caller) {
      try {
        await serve(request, response, caller);
      } catch (error) {
        if (error instanceof HttpError) send(response, error.status, { error: error.message }, error.headers);
        else send(response, 500, { error: internalError(errorMessage(error)) });
      }
    },
  };
}
