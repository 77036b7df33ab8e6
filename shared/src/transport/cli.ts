import { errorMessage } from '../errors.js';
import type { ToolServer } from '../kit/server.js';
import { MCP_PATH, serveHttp, STATELESS_BANNER, type HttpOptions } from './http.js';
import { commonUsage, parseCommonOptions, usageMistake, type CommonOptions } from './options.js';
import { serveStdio } from './stdio.js';
import { discardMadeToken, resolveHttpAuth, type HttpAuth } from './token.js';

export interface ServerCliSpec {
  /** The command name, `bulkhead-fs`. */
  readonly bin: string;
  readonly version: string;
  readonly build: (options: CommonOptions) => Promise<ToolServer> | ToolServer;
  /** Path to the CLI script, for the Claude Desktop snippet. */
  readonly scriptPath: string;
}

/** The Claude Desktop entry that runs the server itself over stdio. */
function stdioSnippet(spec: ServerCliSpec, options: CommonOptions): string {
  const entry = { command: process.execPath, args: [spec.scriptPath, ...options.roots.flatMap((root) => ['--root', root])] };
  return JSON.stringify({ mcpServers: { [spec.bin]: entry } }, null, 2);
}

/**
 * The `Authorization` header value a client must send, for the snippets: the kept token itself
 * (the user needs it, and it is theirs), else a placeholder naming where the token is.
 */
function authorizationFor(auth: HttpAuth, ownTokens: string | undefined): string | undefined {
  switch (auth.kind) {
    case 'kept':
      return `Bearer ${auth.token}`;
    case 'token-file':
      return `Bearer <the token in ${auth.file}>`;
    case 'configured':
      return 'Bearer <a token of the tokens: in bulkhead.yaml>';
    case 'none':
      return ownTokens === undefined ? undefined : `Bearer <${ownTokens}>`;
  }
}

/** One banner line on the credential: what a client must send and where it is kept. */
function describeAuth(auth: HttpAuth, ownTokens: string | undefined): string {
  const also = ownTokens === undefined ? '' : `; ${ownTokens} are accepted too`;
  switch (auth.kind) {
    case 'kept':
      return `bearer token: ${auth.created ? 'made now and kept' : 'kept'} in ${auth.file} (mode 0600; the next start uses it again; delete the file for a new one)${also}`;
    case 'token-file':
      return `bearer token: the contents of ${auth.file}${also}`;
    case 'configured':
      return 'bearer tokens: the tokens: of bulkhead.yaml, each opening its profile';
    case 'none':
      return ownTokens === undefined ? 'no bearer token (--no-auth): every process on this machine can call these tools' : `bearer tokens: ${ownTokens} only (--no-auth turned off the kept token)`;
  }
}

/**
 * How an MCP client reaches an HTTP server at `url`: Claude Desktop through mcp-remote (the
 * header from an env variable, since some clients split arguments at spaces) and Claude Code's
 * own HTTP transport.
 */
export function httpClientSnippets(name: string, url: string, auth: HttpAuth, ownTokens?: string): string {
  const authorization = authorizationFor(auth, ownTokens);
  const viaRemote = authorization
    ? { command: 'npx', args: ['-y', 'mcp-remote', url, '--header', 'Authorization:${BULKHEAD_AUTH}'], env: { BULKHEAD_AUTH: authorization } }
    : { command: 'npx', args: ['-y', 'mcp-remote', url] };
  return (
    `${describeAuth(auth, ownTokens)}\n\n` +
    `Claude Desktop (claude_desktop_config.json), over HTTP through mcp-remote:\n${JSON.stringify({ mcpServers: { [name]: viaRemote } }, null, 2)}\n\n` +
    `Claude Code, over HTTP:\nclaude mcp add --transport http ${name} ${url}${authorization ? ` --header "Authorization: ${authorization}"` : ''}`
  );
}

/** What the HTTP options of serveHttp take from a resolved credential. */
export function httpOptionsFor(auth: HttpAuth): { token?: string; noAuth?: boolean } {
  if (auth.kind === 'kept' || auth.kind === 'token-file') return { token: auth.token };
  return auth.kind === 'none' ? { noAuth: true } : {};
}

/**
 * The whole life of a server process: flags, config, stdio or HTTP, and a clean shutdown on
 * SIGINT, SIGTERM or (for stdio) the client closing stdin.
 */
export async function runServerCli(spec: ServerCliSpec, argv: readonly string[] = process.argv.slice(2)): Promise<void> {
  let options: ReturnType<typeof parseCommonOptions>;
  let toolServer: ToolServer;
  let auth: HttpAuth | undefined;
  try {
    options = parseCommonOptions(argv, process.cwd());
    if (options.help) {
      process.stdout.write(`${commonUsage(spec.bin)}\n`);
      return;
    }
    if (options.version) {
      process.stdout.write(`${spec.bin} ${spec.version}\n`);
      return;
    }
    if (options.http) {
      auth = resolveHttpAuth({ controlDir: options.controlDir, server: spec.bin, host: options.http.host, noAuth: options.noAuth, ...(options.tokenFile !== undefined ? { tokenFile: options.tokenFile } : {}) });
    }
    toolServer = await spec.build(options);
  } catch (error) {
    if (auth) discardMadeToken(auth);
    const mistake = usageMistake(error, spec.bin);
    process.stderr.write(`${spec.bin}: ${mistake ?? errorMessage(error)}${mistake !== undefined ? ` (see ${spec.bin} --help)` : ''}\n`);
    process.exitCode = 2;
    return;
  }

  const ownTokens = toolServer.http?.verifyToken ? `the server's own bearer tokens` : undefined;
  await serveUntilStopped(toolServer, {
    bin: spec.bin,
    ...(options.http && auth ? { http: { ...options.http, ...httpOptionsFor(auth), allowedOrigins: options.allowedOrigins, allowedHosts: options.allowedHosts, ...(options.stateless ? { stateless: true } : {}) }, auth } : {}),
    stdioBanner: `serving ${toolServer.toolNames.length} tools over stdio (roots: ${options.roots.join(', ')})`,
    httpBanner: (url) =>
      `tools: ${toolServer.toolNames.join(', ') || 'none (disabled by policy)'}\n` +
      (toolServer.http?.routes ?? []).map((route) => `${route.describe(url.slice(0, -MCP_PATH.length))}\n`).join('') +
      `roots: ${options.roots.join(', ')}\ncontrol-plane folder: ${options.controlDir}\n` +
      (options.stateless ? `${STATELESS_BANNER}\n` : '') +
      `${httpClientSnippets(spec.bin, url, auth!, ownTokens)}\n\n` +
      `or over stdio, without a running server (Claude Desktop):\n${stdioSnippet(spec, options)}`,
  });
}

export interface ServeOptions {
  readonly bin: string;
  /** Serve Streamable HTTP with these options; stdio when absent. */
  readonly http?: HttpOptions;
  /** The credential behind `http`: a token made on this start is forgotten again when the server cannot start. */
  readonly auth?: HttpAuth;
  readonly stdioBanner: string;
  /** What to print after `<bin> listening on <url>`: the tools, the client snippets. */
  readonly httpBanner: (url: string) => string;
  /** Runs once the server can take requests (its address is bound, given over HTTP): work that must not start before, such as child processes. */
  readonly onServing?: (httpUrl?: string) => void;
}

/**
 * Serves until the client leaves (stdio) or SIGINT/SIGTERM arrives, then closes the server, and
 * so every process it started, before exiting.
 */
export async function serveUntilStopped(toolServer: ToolServer, options: ServeOptions): Promise<void> {
  let stopping = false;
  let stopHttp: (() => Promise<void>) | undefined;
  const stop = async (code: number) => {
    if (stopping) return;
    stopping = true;
    await stopHttp?.();
    await toolServer.close();
    process.exit(code);
  };
  // `on`, not `once`: a second Ctrl-C while children are being stopped must not kill us halfway.
  process.on('SIGINT', () => void stop(130));
  process.on('SIGTERM', () => void stop(143));
  process.on('SIGHUP', () => void stop(129));

  if (!options.http) {
    process.stderr.write(`${options.bin}: ${options.stdioBanner}\n`);
    options.onServing?.();
    await serveStdio(toolServer);
    await stop(0);
    return;
  }
  try {
    const running = await serveHttp(toolServer, options.http);
    stopHttp = running.close;
    process.stdout.write(`${options.bin} listening on ${running.url}\n${options.httpBanner(running.url)}\n\nCtrl-C stops it.\n`);
    options.onServing?.(running.url);
  } catch (error) {
    if (options.auth) discardMadeToken(options.auth);
    process.stderr.write(`${options.bin}: ${errorMessage(error)}\n`);
    await toolServer.close();
    process.exitCode = 2;
  }
}
