// A tiny reverse proxy standing for "any load balancer" in front of several servers: each request
// goes to the next backend in turn, whoever sent it and whatever it carries (no session affinity),
// its body and the answer streamed through as they come. A backend that refuses the connection
// (its process is gone) is skipped for the next one, as a load balancer's health check would.
import { createServer, request, type IncomingMessage, type Server, type ServerResponse } from 'node:http';

export interface Backend {
  readonly host: string;
  readonly port: number;
}

export interface RoundRobinProxy {
  readonly url: string;
  /** How many requests each backend answered (by the backends' order), an answer cut off midway included. */
  readonly answered: readonly number[];
  /** The backend that answered each request, in the order the requests came. */
  readonly log: readonly { readonly backend: number; readonly method: string; readonly status: number }[];
  close(): Promise<void>;
}

/** The backend a URL names (`http://127.0.0.1:PORT/mcp` → 127.0.0.1:PORT). */
export function backendOf(url: string): Backend {
  const parsed = new URL(url);
  return { host: parsed.hostname, port: Number(parsed.port) };
}

export async function startRoundRobinProxy(backends: readonly Backend[]): Promise<RoundRobinProxy> {
  if (backends.length === 0) throw new Error('a proxy needs at least one backend');
  const answered = backends.map(() => 0);
  const log: { backend: number; method: string; status: number }[] = [];
  let next = 0;

  /** Sends `incoming` to backend `index`; on a refused connection tries the one after it, until each was tried once. */
  const forward = (incoming: IncomingMessage, outgoing: ServerResponse, index: number, triesLeft: number): void => {
    const backend = backends[index]!;
    const upstream = request({
      host: backend.host,
      port: backend.port,
      method: incoming.method,
      path: incoming.url,
      // The backend checks Host against its own address (DNS-rebinding protection), as behind a
      // proxy that sets the upstream's Host; a fresh connection per request (agent: false) so that
      // a refused one is known before any of the body was sent.
      headers: { ...incoming.headers, host: `${backend.host}:${backend.port}` },
      agent: false,
    });
    upstream.once('socket', (socket) => socket.once('connect', () => incoming.pipe(upstream)));
    upstream.once('response', (answer) => {
      answered[index]!++;
      log.push({ backend: index, method: incoming.method ?? '', status: answer.statusCode ?? 0 });
      outgoing.writeHead(answer.statusCode ?? 502, answer.headers);
      // Flushed chunk by chunk: an SSE stream must reach the client as the server writes it.
      answer.pipe(outgoing);
      answer.once('error', () => outgoing.destroy());
      answer.once('aborted', () => outgoing.destroy());
    });
    upstream.once('error', (error: NodeJS.ErrnoException) => {
      if (error.code === 'ECONNREFUSED' && triesLeft > 1) return forward(incoming, outgoing, (index + 1) % backends.length, triesLeft - 1);
      if (outgoing.headersSent) return void outgoing.destroy();
      outgoing.writeHead(502, { 'content-type': 'text/plain' }).end(`no backend answered: ${error.message}\n`);
    });
    // A client that goes away takes its backend request with it.
    outgoing.once('close', () => {
      if (!outgoing.writableFinished) upstream.destroy();
    });
  };

  const server: Server = createServer((incoming, outgoing) => {
    const index = next;
    next = (next + 1) % backends.length;
    forward(incoming, outgoing, index, backends.length);
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => resolve());
  });
  const address = server.address();
  const port = typeof address === 'object' && address ? address.port : 0;
  return {
    url: `http://127.0.0.1:${port}`,
    answered,
    log,
    close: async () => {
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}
