import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import {
  CreateMessageRequestSchema,
  ElicitRequestSchema,
  ListRootsRequestSchema,
  LoggingMessageNotificationSchema,
  type ClientCapabilities,
  type CreateMessageRequest,
  type CreateMessageResult,
  type ElicitRequest,
  type ElicitResult,
  type LoggingMessageNotification,
  type Root,
} from '@modelcontextprotocol/sdk/types.js';
import { startHttpServer, type HttpServerProcess } from '@bulkhead/core/testing';
import { GATEWAY_CLI } from './helpers.js';

/** What a test client declares and how it answers the gateway's requests; what it declares follows from what it is given. */
export interface ClientSide {
  /** Its roots, read at each roots/list (a function, so a test can change them and send list_changed). */
  readonly roots?: () => Root[];
  readonly elicit?: (request: ElicitRequest['params']) => ElicitResult | Promise<ElicitResult>;
  /** Elicitation modes it declares (default: form). */
  readonly elicitationModes?: readonly ('form' | 'url')[];
  readonly sample?: (request: CreateMessageRequest['params']) => CreateMessageResult;
}

export interface TestClient {
  readonly client: Client;
  /** Every log message it was sent. */
  readonly logs: LoggingMessageNotification['params'][];
  /** Every request the gateway sent it, by method. */
  readonly requests: { method: string; params: unknown }[];
}

/** An SDK client that declares only what `side` gives it an answer for. */
export function testClient(side: ClientSide = {}): TestClient {
  const capabilities: ClientCapabilities = {
    ...(side.roots ? { roots: { listChanged: true } } : {}),
    ...(side.elicit ? { elicitation: Object.fromEntries((side.elicitationModes ?? ['form']).map((mode) => [mode, {}])) } : {}),
    ...(side.sample ? { sampling: {} } : {}),
  };
  const client = new Client({ name: 'relay-test', version: '1.0.0' }, { capabilities });
  const logs: LoggingMessageNotification['params'][] = [];
  const requests: { method: string; params: unknown }[] = [];
  client.setNotificationHandler(LoggingMessageNotificationSchema, async (notification) => {
    logs.push(notification.params);
  });
  const roots = side.roots;
  if (roots)
    client.setRequestHandler(ListRootsRequestSchema, async (request) => {
      requests.push({ method: request.method, params: request.params });
      return { roots: roots() };
    });
  const elicit = side.elicit;
  if (elicit)
    client.setRequestHandler(ElicitRequestSchema, async (request) => {
      requests.push({ method: request.method, params: request.params });
      return elicit(request.params);
    });
  const sample = side.sample;
  if (sample)
    client.setRequestHandler(CreateMessageRequestSchema, async (request) => {
      requests.push({ method: request.method, params: request.params });
      return sample(request.params);
    });
  return { client, logs, requests };
}

export interface StdioGateway extends TestClient {
  stderr(): string;
  close(): Promise<void>;
}

/** `bulkhead start --root <root>` over stdio, as a user's client starts it, connected with `side`. */
export async function startStdioGateway(root: string, side: ClientSide = {}, extraArgs: readonly string[] = []): Promise<StdioGateway> {
  const transport = new StdioClientTransport({
    command: process.execPath,
    args: [GATEWAY_CLI, 'start', '--root', root, ...extraArgs],
    env: { PATH: process.env['PATH'] ?? '', HOME: process.env['HOME'] ?? '' },
    stderr: 'pipe',
  });
  let stderr = '';
  transport.stderr?.on('data', (chunk: Buffer) => {
    stderr += chunk.toString();
  });
  const connected = testClient(side);
  await connected.client.connect(transport);
  return { ...connected, stderr: () => stderr, close: () => connected.client.close() };
}

export interface HttpGateway {
  readonly process: HttpServerProcess;
  /** A new client connection (session) with `side`, with `token` (default: the one the banner printed). */
  connect(side?: ClientSide, token?: string): Promise<TestClient>;
  close(): Promise<void>;
}

/**
 * `bulkhead start --root <root> --http 127.0.0.1:0`, with `tokenFile` as --token-file when given
 * (its token then is the default one); the banner's own client session is ended, so only the
 * test's connections are open.
 */
export async function startHttpGateway(root: string, tokenFile?: { path: string; token: string }): Promise<HttpGateway> {
  const started = await startHttpServer({
    script: GATEWAY_CLI,
    args: ['start', '--root', root, ...(tokenFile ? ['--token-file', tokenFile.path] : [])],
    ...(tokenFile ? { headers: { authorization: `Bearer ${tokenFile.token}` } } : {}),
  });
  await (started.client.transport as StreamableHTTPClientTransport).terminateSession();
  const defaultToken = tokenFile?.token ?? started.token;
  const clients: Client[] = [];
  return {
    process: started,
    connect: async (side = {}, token = defaultToken) => {
      const connected = testClient(side);
      const headers = token ? { authorization: `Bearer ${token}` } : undefined;
      await connected.client.connect(new StreamableHTTPClientTransport(new URL(started.url), headers ? { requestInit: { headers } } : undefined));
      clients.push(connected.client);
      return connected;
    },
    close: async () => {
      await Promise.allSettled(clients.map(async (client) => {
        await (client.transport as StreamableHTTPClientTransport | undefined)?.terminateSession().catch(() => undefined);
        await client.close();
      }));
      await started.close();
    },
  };
}
