import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { z } from 'zod';
import { errorMessage, ToolError } from '@bulkhead/core';
import type { LadderDeps, LadderTool } from '../context.js';

/** zz's tool endpoint: `POST /api/repos/<owner>/<repo>/tools/<tool>`. */
const TOOL_PATH = /^\/api\/repos\/([^/]+)\/([^/]+)\/tools\/([a-z_]+)$/;
const MAX_BODY_BYTES = 16 * 1024 * 1024;

/** HTTP statuses of the store's refusal codes; any other ToolError is a bad request. */
const STATUS_OF_CODE: Readonly<Record<string, number>> = {
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
  timeout: 504,
  git_failed: 502,
  git_missing: 502,
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

/** Arguments that name a lane or an ask by id, whatever the tool. */
const LANE_ARGUMENTS = ['lane_id', 'related_lane_id'] as const;
const ASK_ARGUMENTS = ['ask_id'] as const;

/**
 * A token is used under one repository's URL: a lane or an ask named by id must belong to it, or a
 * caller could reach another repository's queue through this one's address. Answered 404, as an id
 * that does not exist there.
 */
async function requireInRepository(store: LadderDeps['store'], args: Record<string, unknown>, repo: string): Promise<void> {
  const laneIds = LANE_ARGUMENTS.map((name) => args[name]).filter((id): id is string => typeof id === 'string');
  for (const name of ASK_ARGUMENTS) {
    const askId = args[name];
    if (typeof askId === 'string') laneIds.push((await store.getAsk(askId)).lane_id);
  }
  for (const laneId of laneIds) {
    const lane = await store.getLane(laneId);
    if (lane.repo !== repo) throw new HttpError(404, `${laneId} is not a lane of ${repo}`);
  }
}

function bearerToken(request: IncomingMessage): string {
  const match = /^Bearer\s+(\S+)\s*$/i.exec(request.headers.authorization ?? '');
  if (!match) throw new HttpError(401, 'send Authorization: Bearer <token> (bulkhead-ladder token create --actor NAME makes one)');
  return match[1]!;
}

/**
 * Answers zz's tool calls with the same calls the MCP tools run: the caller is the bearer token's
 * actor, `repo` comes from the URL (a different `repo` in the body is refused), and the result is
 * `{"result": …}` or an HTTP error with `{"error": "…"}` worded as the MCP refusal is.
 */
export function toolEndpointHandler(deps: LadderDeps, tools: readonly LadderTool[]): (request: IncomingMessage, response: ServerResponse) => Promise<void> {
  const byName = new Map(tools.map((tool) => [tool.name, tool]));
  return async (request, response) => {
    try {
      const url = new URL(request.url ?? '/', 'http://localhost');
      const match = TOOL_PATH.exec(url.pathname);
      if (!match) throw new HttpError(404, 'not found; tools are at POST /api/repos/<owner>/<repo>/tools/<tool>');
      if (request.method !== 'POST') throw new HttpError(405, 'tools are called with POST');
      const actor = await deps.store.verifyToken(bearerToken(request));
      if (actor === undefined) throw new HttpError(401, 'the token is unknown or revoked');
      const tool = byName.get(match[3]!);
      if (!tool) throw new HttpError(404, `unknown tool ${match[3]}; tools: ${[...byName.keys()].join(', ')}`);
      const repo = `${decodeURIComponent(match[1]!)}/${decodeURIComponent(match[2]!)}`;
      const body = await readJsonObject(request);
      if ('repo' in tool.input.shape) {
        if (body['repo'] !== undefined && body['repo'] !== repo) throw new HttpError(400, `repo is ${String(body['repo'])} but the URL names ${repo}; leave repo out of the body`);
        body['repo'] = repo;
      }
      const parsed = tool.input.safeParse(body);
      if (!parsed.success) throw new HttpError(400, `invalid arguments for ${tool.name}: ${z.prettifyError(parsed.error)}`);
      await requireInRepository(deps.store, parsed.data as Record<string, unknown>, repo);
      const result = await tool.call({ ...deps, defaultRepo: repo }, actor, parsed.data);
      send(response, 200, { result });
    } catch (error) {
      if (error instanceof HttpError) send(response, error.status, { error: error.message });
      else if (error instanceof z.ZodError) send(response, 400, { error: z.prettifyError(error) });
      else if (error instanceof ToolError) send(response, STATUS_OF_CODE[error.code] ?? 400, { error: error.message });
      else send(response, 500, { error: `internal error: ${errorMessage(error)}` });
    }
  };
}

export interface RunningToolEndpoint {
  readonly url: string;
  close(): Promise<void>;
}

/** Serves the tool endpoint alone on `host:port` (0 picks a free port). */
export async function serveToolEndpoint(deps: LadderDeps, tools: readonly LadderTool[], host: string, port: number): Promise<RunningToolEndpoint> {
  const handler = toolEndpointHandler(deps, tools);
  const server: Server = createServer((request, response) => void handler(request, response));
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(port, host, () => resolve());
  });
  const address = server.address() as AddressInfo;
  return {
    url: `http://${host.includes(':') ? `[${host}]` : host}:${address.port}`,
    close: () =>
      new Promise<void>((resolve, reject) => {
        server.closeAllConnections();
        server.close((error) => (error ? reject(error) : resolve()));
      }),
  };
}
