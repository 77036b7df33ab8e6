import { mkdirSync, writeFileSync } from 'node:fs';
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import { auditPolicySchema, PermissionGate } from '@bulkhead/core';
import { connectInProcess, tempWorkspace, toolCall, type ToolCall } from '@bulkhead/core/testing';
import { createWebServer, type Resolver } from '@bulkhead/web';
import { webPolicySchema, type WebLimits } from '../src/policy.js';

export type PolicyOverrides = Omit<Partial<Record<string, unknown>>, 'limits'> & { limits?: Partial<WebLimits> };

export interface WebHarness {
  readonly client: Awaited<ReturnType<typeof connectInProcess>>['client'];
  call<S = Record<string, unknown>>(name: string, args?: Record<string, unknown>): Promise<ToolCall<S>>;
  close(): Promise<void>;
}

/** Starts the web server in-process with a connected client; every call is allowed by the gate. */
export async function startWeb(options: { policy?: PolicyOverrides; resolve?: Resolver } = {}): Promise<WebHarness> {
  const control = tempWorkspace({}, 'bulkhead-web-control-');
  const controlDir = control.path('.bulkhead');
  mkdirSync(controlDir, { recursive: true });
  writeFileSync(join(controlDir, 'permissions.yaml'), 'allow:\n  - web\n');
  const { limits, ...rest } = options.policy ?? {};
  const server = createWebServer({
    controlDir,
    gate: { kind: 'self', permissions: PermissionGate.load(controlDir) },
    audit: auditPolicySchema.parse({ enabled: false }),
    policy: webPolicySchema.parse({ ...rest, limits: { ...limits } }),
    ...(options.resolve ? { resolve: options.resolve } : {}),
  });
  const { client, close } = await connectInProcess(server);
  return {
    client,
    call: async <S,>(name: string, args: Record<string, unknown> = {}) => toolCall<S>(await client.callTool({ name, arguments: args })),
    close: async () => {
      await close();
      await server.close();
      control.cleanup();
    },
  };
}

export type Handler = (request: IncomingMessage, response: ServerResponse) => void;

export interface TestSite {
  readonly port: number;
  /** http://127.0.0.1:PORT + path */
  url(path: string): string;
  /** Requests the site has received, as "METHOD path host". */
  readonly seen: string[];
  close(): Promise<void>;
}

/** An HTTP server on 127.0.0.1 (the only network the tests touch) serving `routes` by path. */
export async function startSite(routes: Record<string, Handler>): Promise<TestSite> {
  const seen: string[] = [];
  const server = createServer((request, response) => {
    seen.push(`${request.method} ${request.url} ${request.headers.host}`);
    const handler = routes[request.url ?? ''];
    if (handler) handler(request, response);
    else response.writeHead(404, { 'content-type': 'text/plain' }).end('not found');
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    port,
    url: (path) => `http://127.0.0.1:${port}${path}`,
    seen,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

/** The policy that lets the tests reach their own 127.0.0.1 site, and nothing else local. */
export function localSitePolicy(site: TestSite, extra: PolicyOverrides = {}): PolicyOverrides {
  return { allow_private: ['127.0.0.1/32'], ports: [site.port], ...extra };
}

export function send(status: number, headers: Record<string, string>, body: string | Buffer = ''): Handler {
  return (_request, response) => {
    response.writeHead(status, headers).end(body);
  };
}
