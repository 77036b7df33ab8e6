import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import { getRequestListener } from '@hono/node-server';
import { ApprovalStore, errorMessage, isLoopback, loadYamlFile, PermissionGate, registerConsole, type HttpRoute, type ToolServer } from '@bulkhead/core';
import { GATEWAY_CONFIG_FILE, gatewayConfigSchema } from '../config/schema.js';
import type { Gateway } from '../gateway.js';
import { CONSOLE_BASE, createConsoleApp, privateConsoleBase } from './app.js';
import { consoleSecret, ConsoleSessions } from './auth.js';
import { ConsoleChanges } from './events.js';
import type { ConsolePage, ConsoleSources } from './page.js';
import { CONSOLE_PAGES } from './pages/index.js';

/** The console is served on loopback only: on 127.0.0.1 when it has a port of its own. */
const OWN_HOST = '127.0.0.1';

export interface ConsoleSetup {
  readonly controlDir: string;
  readonly roots: readonly string[];
  readonly gateway?: Gateway;
  /** What serves it, as the registry and `bulkhead console` name it (`bulkhead gateway`). */
  readonly server: string;
  readonly pages?: readonly ConsolePage[];
}

/** The sources a console shows, read from the control-plane folder. */
export function consoleSources(setup: ConsoleSetup): ConsoleSources {
  return {
    controlDir: setup.controlDir,
    roots: setup.roots,
    approvals: new ApprovalStore(setup.controlDir),
    permissions: PermissionGate.load(setup.controlDir),
    ...(setup.gateway ? { gateway: setup.gateway } : {}),
  };
}

/**
 * One console: its app behind a node request listener, answering only once it knows its own
 * address (a request before that is refused as misdirected), and recorded in the control-plane
 * folder while it serves.
 */
export class ServedConsole {
  private address: string | undefined;
  private unregister: (() => void) | undefined;
  private readonly changes: ConsoleChanges;
  /** This console's own base path, where browser sessions live (privateConsoleBase). */
  readonly base = privateConsoleBase();
  readonly listener: (request: IncomingMessage, response: ServerResponse) => Promise<void>;

  constructor(private readonly setup: ConsoleSetup) {
    const sources = consoleSources(setup);
    this.changes = new ConsoleChanges(sources);
    const app = createConsoleApp({
      sources,
      base: this.base,
      pages: setup.pages ?? CONSOLE_PAGES,
      address: () => this.address,
      secret: () => this.secret(),
      sessions: new ConsoleSessions(),
      changes: this.changes,
      servedBy: setup.gateway ? `Served by the Bulkhead gateway (pid ${process.pid}).` : `Served by bulkhead console (pid ${process.pid}): no gateway is running, so live gateway data (servers, their tools) is not shown.`,
    });
    this.listener = getRequestListener(app.fetch);
  }

  /** The console secret, or undefined when its file holds something else (the file is then reported, and scripts are refused). */
  private secret(): string | undefined {
    try {
      return consoleSecret(this.setup.controlDir);
    } catch {
      return undefined;
    }
  }

  /** The console's URL (without any secret) once it serves. */
  get url(): string | undefined {
    return this.address === undefined ? undefined : consoleUrl(this.address);
  }

  /** Starts answering at `host:port`; nothing is written until `announce`. */
  answerAt(address: string): string {
    this.address = address;
    return consoleUrl(address);
  }

  /**
   * Records the console for `bulkhead console` and makes its secret, once what serves it is up:
   * a start that fails leaves nothing behind in the control-plane folder.
   */
  announce(report: (line: string) => void): void {
    if (this.address === undefined || this.unregister) return;
    try {
      this.unregister = registerConsole(this.setup.controlDir, { url: consoleUrl(this.address), path: `${this.base}/`, server: this.setup.server });
      consoleSecret(this.setup.controlDir);
    } catch (error) {
      // The gateway is what matters: a console that cannot record itself still serves a browser that knows its address.
      report(`the console at ${consoleUrl(this.address)}: ${errorMessage(error)}`);
    }
  }

  close(): void {
    this.unregister?.();
    this.unregister = undefined;
    this.changes.close();
  }
}

export function consoleUrl(address: string): string {
  return `http://${address}${CONSOLE_BASE}/`;
}

/** The console as a route of the gateway's own HTTP server, beside `/mcp` (whose bearer tokens it ignores: it has its own secret). */
export function consoleRoute(served: ServedConsole): HttpRoute {
  return {
    pathPrefix: CONSOLE_BASE,
    describe: (baseUrl) => `console: ${baseUrl}${CONSOLE_BASE}/ (open it with \`bulkhead console\`)`,
    handle: (request, response) => served.listener(request, response),
  };
}

export interface RunningConsole {
  readonly url: string;
  close(): Promise<void>;
}

/** The console on a port of its own on 127.0.0.1 (0: any free port). */
export async function serveConsoleAlone(served: ServedConsole, port: number): Promise<RunningConsole> {
  const server = createServer((request, response) => void served.listener(request, response));
  server.headersTimeout = 30_000;
  server.requestTimeout = 30_000;
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(port, OWN_HOST, () => resolve());
  });
  const address = server.address();
  const url = served.answerAt(`${OWN_HOST}:${typeof address === 'object' && address ? address.port : port}`);
  return {
    url,
    close: async () => {
      served.close();
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}

/** `server` with more HTTP routes and more work on close; everything else is the server's own. */
function extended(server: ToolServer, routes: readonly HttpRoute[], onClose: () => Promise<void> | void): ToolServer {
  return {
    namespace: server.namespace,
    maxRequestBytes: server.maxRequestBytes,
    get toolNames() {
      return server.toolNames;
    },
    sendLog: (level, data) => server.sendLog(level, data),
    connect: (transport, opener) => server.connect(transport, opener),
    http: { ...server.http, routes: [...(server.http?.routes ?? []), ...routes] },
    close: async () => {
      await onClose();
      await server.close();
    },
  };
}

/** What `bulkhead start` needs of the console: the server to serve, its banner line, and the moment it serves. */
export interface GatewayConsole {
  /** The gateway, with the console as a route when it shares the gateway's HTTP port. */
  readonly server: ToolServer;
  /** The banner line, given the gateway's MCP URL over HTTP; empty when there is no console. */
  banner(mcpUrl?: string): string;
  /** The gateway serves (at `mcpUrl` over HTTP). */
  serving(mcpUrl?: string): void;
}

const bannerLine = (url: string) => `console: ${url} (open it with \`bulkhead console\`)`;

/**
 * The gateway's console, as bulkhead.yaml's `console:` says: on the gateway's own port under
 * `/console/` when it serves HTTP on loopback, else on a port of its own on 127.0.0.1. A console
 * that cannot start is reported and the gateway runs without it.
 */
export async function gatewayConsole(options: { gateway: Gateway; controlDir: string; roots: readonly string[]; httpHost?: string; report: (line: string) => void }): Promise<GatewayConsole> {
  const { gateway } = options;
  const settings = loadYamlFile(options.controlDir, GATEWAY_CONFIG_FILE, gatewayConfigSchema).value.console;
  const none: GatewayConsole = { server: gateway, banner: () => '', serving: () => undefined };
  if (!settings.enabled) return none;
  let served: ServedConsole;
  try {
    served = new ServedConsole({ controlDir: options.controlDir, roots: options.roots, gateway, server: 'bulkhead gateway' });
  } catch (error) {
    options.report(`the console did not start: ${errorMessage(error)}; the gateway runs without it`);
    return none;
  }
  if (options.httpHost !== undefined && isLoopback(options.httpHost)) {
    return {
      server: extended(gateway, [consoleRoute(served)], () => served.close()),
      banner: (mcpUrl) => (mcpUrl ? bannerLine(consoleUrl(new URL(mcpUrl).host)) : ''),
      serving: (mcpUrl) => {
        if (!mcpUrl) return;
        served.answerAt(new URL(mcpUrl).host);
        served.announce(options.report);
      },
    };
  }
  let running: RunningConsole;
  try {
    running = await serveConsoleAlone(served, settings.port);
  } catch (error) {
    served.close();
    options.report(`the console could not listen on ${OWN_HOST}:${settings.port}: ${errorMessage(error)}; the gateway runs without it`);
    return none;
  }
  return { server: extended(gateway, [], () => running.close()), banner: () => bannerLine(running.url), serving: () => served.announce(options.report) };
}
