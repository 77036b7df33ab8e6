import type { IncomingMessage, ServerResponse } from 'node:http';
import { bearerToken, errorMessage, ToolError, type DirectCall, type DirectCallOutcome, type HttpRoute } from '@bulkhead/core';
import { LANE_ARGUMENTS, resolveRepoLane, type LadderDeps, type LadderTool } from '../context.js';
import { ANONYMOUS, type LadderPolicy } from '../policy.js';

/** zz's tool endpoint: `POST /api/repos/<owner>/<repo>/tools/<tool>`. */
const ROUTE_PREFIX = '/api/';
const TOOL_PATH = /^\/api\/repos\/([^/]+)\/([^/]+)\/tools\/([^/]+)$/;
const MAX_BODY_BYTES = 16 * 1024 * 1024;

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
  ) {
    super(message);
  }
}

function send(response: ServerResponse, status: number, body: { result: unknown } | { error: string }): void {
  if (response.headersSent) return;
  const text = JSON.stringify(body);
  response.writeHead(status, { 'content-type': 'application/json; charset=utf-8', 'content-length': Buffer.byteLength(text) });
  response.end(text);
}

async function readJsonObject(request: IncomingMessage): Promise<Record<string, unknown>> {
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of request as AsyncIterable<Buffer>) {
    size += chunk.length;
    if (size > MAX_BODY_BYTES) throw new HttpError(413, `the body is over ${MAX_BODY_BYTES} bytes`);
    chunks.push(chunk);
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

/** Arguments that name an ask by id, whatever the tool. */
const ASK_ARGUMENTS = ['ask_id'] as const;

type Refusal = { readonly message: string; readonly code: string };

/**
 * A token is used under one repository's URL: a lane or an ask named by id must belong to it, or a
 * caller could reach another repository's queue through this one's address. Refused as an id
 * that does not exist there (404).
 */
async function outsideRepository(store: LadderDeps['store'], args: Record<string, unknown>, repo: string): Promise<Refusal | undefined> {
  const laneIds = LANE_ARGUMENTS.map((name) => args[name]).filter((id): id is string => typeof id === 'string');
  for (const name of ASK_ARGUMENTS) {
    const askId = args[name];
    if (typeof askId === 'string') laneIds.push((await store.getAsk(askId)).lane_id);
  }
  for (const laneId of laneIds) {
    const lane = await store.getLane(laneId);
    if (lane.repo !== repo) return { message: `${laneId} is not a lane of ${repo}`, code: 'not_found' };
  }
  return undefined;
}

/** The body's own `repo`, when it names another repository than the URL. */
function otherRepository(body: Record<string, unknown>, repo: string): Refusal | undefined {
  if (body['repo'] === undefined || body['repo'] === repo) return undefined;
  return { message: `repo is ${String(body['repo'])} but the URL names ${repo}; leave repo out of the body`, code: 'invalid_arguments' };
}

/** `{"result": …}` is the structured result; an error is the refusal's words with the status of its code. */
function answer(response: ServerResponse, outcome: DirectCallOutcome): void {
  const text = outcome.result.content.map((block) => (block.type === 'text' ? block.text : '')).join('\n');
  if (outcome.errorCode !== undefined) send(response, STATUS_OF_CODE[outcome.errorCode] ?? 400, { error: text });
  else send(response, 200, { result: outcome.result.structuredContent ?? text });
}

/**
 * zz's tool endpoint as a route of the ladder's HTTP server, beside `/mcp`: the caller is the
 * bearer token's actor, `repo` comes from the URL (a different `repo` in the body is refused), and
 * the call runs through the server's audit log and permission gate like an MCP call.
 */
export function toolEndpointRoute(deps: LadderDeps, tools: readonly LadderTool[], call: DirectCall, publicRead: LadderPolicy['public_read']): HttpRoute {
  const byName = new Map(tools.map((tool) => [tool.name, tool]));
  const publicRepos = new Set(publicRead.repos);
  const publicTools = new Set<string>(publicRead.tools);
  /** The caller: the token's actor, or anonymous for a public repository's reading tool called without a token. */
  const callerOf = async (request: IncomingMessage, repo: string, toolName: string): Promise<string> => {
    const token = bearerToken(request.headers.authorization);
    if (token === undefined) {
      if (request.headers.authorization === undefined && publicRepos.has(repo) && publicTools.has(toolName)) return ANONYMOUS;
      throw new HttpError(401, 'send Authorization: Bearer <token> (bulkhead-ladder token create --actor NAME makes one)');
    }
    const actor = await deps.store.verifyToken(token);
    if (actor === undefined) throw new HttpError(401, 'the token is unknown or revoked');
    return actor;
  };
  return {
    pathPrefix: ROUTE_PREFIX,
    describe: (baseUrl) => `zz tool endpoint: POST ${baseUrl}/api/repos/<owner>/<repo>/tools/<tool> with Authorization: Bearer <token> (bulkhead-ladder token create --actor NAME)`,
    async handle(request, response) {
      const cancelled = new AbortController();
      response.on('close', () => {
        if (!response.writableFinished) cancelled.abort(new Error('the client closed the connection'));
      });
      try {
        const match = TOOL_PATH.exec(new URL(request.url ?? '/', 'http://localhost').pathname);
        if (!match) throw new HttpError(404, 'not found; tools are at POST /api/repos/<owner>/<repo>/tools/<tool>');
        if (request.method !== 'POST') throw new HttpError(405, 'tools are called with POST');
        const [owner, name, toolName] = [match[1]!, match[2]!, match[3]!].map(decodedSegment) as [string, string, string];
        const repo = `${owner}/${name}`;
        const actor = await callerOf(request, repo, toolName);
        // `_repo` is the standing lane of the URL's repository, not of the server's default one.
        const body = await resolveRepoLane(deps.store, await readJsonObject(request), repo);
        const tool = byName.get(toolName);
        let refusal: Refusal | undefined;
        if (tool && 'repo' in tool.input.shape) {
          refusal = otherRepository(body, repo);
          if (refusal === undefined) body['repo'] = repo;
        }
        const parsed = tool?.input.safeParse(body);
        if (refusal === undefined && parsed?.success) refusal = await outsideRepository(deps.store, parsed.data as Record<string, unknown>, repo);
        answer(response, await call(toolName, body, { caller: `tool-endpoint@${actor}`, principal: actor, signal: cancelled.signal, ...(refusal ? { refusal } : {}) }));
      } catch (error) {
        if (error instanceof HttpError) send(response, error.status, { error: error.message });
        else if (error instanceof ToolError) send(response, STATUS_OF_CODE[error.code] ?? 400, { error: error.message });
        else send(response, 500, { error: `internal error: ${errorMessage(error)}` });
      }
    },
  };
}
