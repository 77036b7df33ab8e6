import { errorMessage } from '../errors.js';
import type { ToolServer } from '../kit/server.js';
import { MCP_PATH, serveHttp, type HttpOptions } from './http.js';
import { commonUsage, parseCommonOptions, usageMistake, type CommonOptions } from './options.js';
import { serveStdio } from './stdio.js';

export interface ServerCliSpec {
  /** The command name, `bulkhead-fs`. */
  readonly bin: string;
  readonly version: string;
  readonly build: (options: CommonOptions) => Promise<ToolServer> | ToolServer;
  /** Path to the CLI script, for the Claude Desktop snippet. */
  readonly scriptPath: string;
}

/** `tokenHint` names the token an HTTP client must send, when the server requires one. */
function desktopSnippet(spec: ServerCliSpec, options: CommonOptions, url?: string, tokenHint?: string): string {
  const viaRemote = tokenHint
    ? { command: 'npx', args: ['-y', 'mcp-remote', url, '--header', 'Authorization:${BULKHEAD_AUTH}'], env: { BULKHEAD_AUTH: `Bearer <${tokenHint}>` } }
    : { command: 'npx', args: ['-y', 'mcp-remote', url] };
  const entry = url ? viaRemote : { command: process.execPath, args: [spec.scriptPath, ...options.roots.flatMap((root) => ['--root', root])] };
  return JSON.stringify({ mcpServers: { [spec.bin]: entry } }, null, 2);
}

/**
 * The whole life of a server process: flags, config, stdio or HTTP, and a clean shutdown on
 * SIGINT, SIGTERM or (for stdio) the client closing stdin.
 */
export async function runServerCli(spec: ServerCliSpec, argv: readonly string[] = process.argv.slice(2)): Promise<void> {
  let options: ReturnType<typeof parseCommonOptions>;
  let toolServer: ToolServer;
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
    toolServer = await spec.build(options);
  } catch (error) {
    const mistake = usageMistake(error, spec.bin);
    process.stderr.write(`${spec.bin}: ${mistake ?? errorMessage(error)}${mistake !== undefined ? ` (see ${spec.bin} --help)` : ''}\n`);
    process.exitCode = 2;
    return;
  }

  const tokenHint = options.token ? 'the token in your --token-file' : toolServer.http?.verifyToken ? 'your token' : undefined;
  await serveUntilStopped(toolServer, {
    bin: spec.bin,
    ...(options.http ? { http: { ...options.http, ...(options.token ? { token: options.token } : {}), allowedOrigins: options.allowedOrigins, allowedHosts: options.allowedHosts } } : {}),
    stdioBanner: `serving ${toolServer.toolNames.length} tools over stdio (roots: ${options.roots.join(', ')})`,
    httpBanner: (url) =>
      `tools: ${toolServer.toolNames.join(', ') || 'none (disabled by policy)'}\n` +
      (toolServer.http?.routes ?? []).map((route) => `${route.describe(url.slice(0, -MCP_PATH.length))}\n`).join('') +
      `roots: ${options.roots.join(', ')}\ncontrol-plane folder: ${options.controlDir}\n\n` +
      `Claude Desktop (claude_desktop_config.json), over HTTP through mcp-remote:\n${desktopSnippet(spec, options, url, tokenHint)}\n\n` +
      `or over stdio, without a running server:\n${desktopSnippet(spec, options)}`,
  });
}

export interface ServeOptions {
  readonly bin: string;
  /** Serve Streamable HTTP with these options; stdio when absent. */
  readonly http?: HttpOptions;
  readonly stdioBanner: string;
  /** What to print after `<bin> listening on <url>`: the tools, the client snippets. */
  readonly httpBanner: (url: string) => string;
  /** Runs once the server can take requests (its address is bound): work that must not start before, such as child processes. */
  readonly onServing?: () => void;
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
    options.onServing?.();
  } catch (error) {
    process.stderr.write(`${options.bin}: ${errorMessage(error)}\n`);
    await toolServer.close();
    process.exitCode = 2;
  }
}
