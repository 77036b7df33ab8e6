import { spawn, type ChildProcess } from 'node:child_process';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { ElicitRequestSchema, type ElicitResult } from '@modelcontextprotocol/sdk/types.js';

export interface ServerProcess {
  readonly client: Client;
  /** The MCP endpoint, for HTTP servers. */
  readonly url?: string;
  readonly pid: number | undefined;
  /** Everything the process wrote to stderr so far. */
  stderr(): string;
  close(): Promise<void>;
}

export interface StartOptions {
  /** The server's CLI script (`dist/cli.js`). */
  readonly script: string;
  readonly args?: readonly string[];
  readonly cwd?: string;
  readonly env?: Record<string, string>;
  /** Headers the HTTP client sends (a bearer token, say). */
  readonly headers?: Record<string, string>;
  /** HOST:PORT for --http (default 127.0.0.1:0); clients always connect through 127.0.0.1. */
  readonly listen?: string;
  /** When given, the client declares elicitation and answers with this function. */
  readonly elicit?: (message: string) => ElicitResult | Promise<ElicitResult>;
  /**
   * A command that runs the server (stdio only): `node script args` is appended to it, so it must
   * exec them, keeping the pid (`['bash', '-c', 'ulimit -f 1024; exec "$0" "$@"']`).
   */
  readonly wrapper?: readonly string[];
}

function testClient(elicit: StartOptions['elicit']): Client {
  const client = new Client({ name: 'bulkhead-test', version: '1.0.0' }, { capabilities: elicit ? { elicitation: { form: {} } } : {} });
  if (elicit) client.setRequestHandler(ElicitRequestSchema, async (request) => elicit(request.params.message));
  return client;
}

function killGroup(child: ChildProcess): Promise<void> {
  return new Promise((resolve) => {
    if (child.exitCode !== null || child.signalCode !== null || child.pid === undefined) return resolve();
    const timer = setTimeout(() => {
      try {
        process.kill(-child.pid!, 'SIGKILL');
      } catch {
        // already gone
      }
    }, 3000);
    child.once('exit', () => {
      clearTimeout(timer);
      resolve();
    });
    try {
      process.kill(-child.pid, 'SIGTERM');
    } catch {
      clearTimeout(timer);
      resolve();
    }
  });
}

/** Starts a real server process speaking stdio and connects an MCP client to it. */
export async function startStdioServer(options: StartOptions): Promise<ServerProcess> {
  const transport = new StdioClientTransport({
    command: options.wrapper?.[0] ?? process.execPath,
    args: [...(options.wrapper ? [...options.wrapper.slice(1), process.execPath] : []), options.script, ...(options.args ?? [])],
    ...(options.cwd ? { cwd: options.cwd } : {}),
    env: { PATH: process.env['PATH'] ?? '', HOME: process.env['HOME'] ?? '', ...options.env },
    stderr: 'pipe',
  });
  let stderr = '';
  transport.stderr?.on('data', (chunk: Buffer) => {
    stderr += chunk.toString();
  });
  const client = testClient(options.elicit);
  await client.connect(transport);
  return {
    client,
    pid: transport.pid ?? undefined,
    stderr: () => stderr,
    close: () => client.close(),
  };
}

export interface HttpServerProcess extends ServerProcess {
  readonly url: string;
  readonly child: ChildProcess;
  /** Everything the process wrote to stdout so far (its URL and the client snippets). */
  stdout(): string;
  /** The bearer token the server made and printed in its banner, when it did. */
  readonly token: string | undefined;
  /** Another client for the same endpoint, with `headers` (default: those of the first client). */
  connectAnother(headers?: Record<string, string>): Promise<Client>;
}

/** An MCP client connected over Streamable HTTP to `url`, sending `headers` (a bearer token) with every request. */
export async function connectHttp(url: string, headers?: Record<string, string>, elicit?: StartOptions['elicit']): Promise<Client> {
  const client = testClient(elicit);
  await client.connect(new StreamableHTTPClientTransport(new URL(url), headers ? { requestInit: { headers } } : undefined));
  return client;
}

/** The bearer token a server made for itself, as its banner's Claude Code line shows it. */
export function printedToken(banner: string): string | undefined {
  return /--header "Authorization: Bearer ([A-Za-z0-9_-]{43,})"/.exec(banner)?.[1];
}

/**
 * Starts a real server process with `--http 127.0.0.1:0`, waits for its banner and connects with
 * the token it printed (or `headers`).
 */
export async function startHttpServer(options: StartOptions): Promise<HttpServerProcess> {
  const args = [options.script, ...(options.args ?? []), '--http', options.listen ?? '127.0.0.1:0'];
  const child = spawn(process.execPath, args, {
    cwd: options.cwd,
    env: { PATH: process.env['PATH'] ?? '', HOME: process.env['HOME'] ?? '', ...options.env },
    stdio: ['ignore', 'pipe', 'pipe'],
    detached: true,
  });
  let stdout = '';
  let stderr = '';
  child.stderr!.on('data', (chunk: Buffer) => {
    stderr += chunk.toString();
  });
  const url = await new Promise<string>((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`server did not print its URL within 15 s; stderr: ${stderr}`)), 15_000);
    child.stdout!.on('data', (chunk: Buffer) => {
      stdout += chunk.toString();
      const match = /listening on (http:\/\/\S+)/.exec(stdout);
      // The whole banner, so that the token in its client snippets is there to read.
      if (match && stdout.includes('Ctrl-C stops it.')) {
        clearTimeout(timer);
        resolve(match[1]!.replace(/^http:\/\/(0\.0\.0\.0|\[::\])/, 'http://127.0.0.1'));
      }
    });
    child.once('exit', (code) => {
      clearTimeout(timer);
      reject(new Error(`server exited with code ${code}; stderr: ${stderr}`));
    });
  });
  const token = printedToken(stdout);
  const connect = (headers?: Record<string, string>) => connectHttp(url, headers, options.elicit);
  // As a user would: with the token the banner printed, unless the test brings its own headers.
  const usual = options.headers ?? (token ? { authorization: `Bearer ${token}` } : undefined);
  const client = await connect(usual);
  const opened: Client[] = [client];
  return {
    client,
    url,
    child,
    pid: child.pid,
    stderr: () => stderr,
    stdout: () => stdout,
    token,
    connectAnother: async (headers) => {
      const another = await connect(headers ?? usual);
      opened.push(another);
      return another;
    },
    close: async () => {
      await Promise.allSettled(opened.map((c) => c.close()));
      await killGroup(child);
    },
  };
}
