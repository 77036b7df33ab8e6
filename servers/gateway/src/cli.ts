#!/usr/bin/env node
import { spawn } from 'node:child_process';
import { readdirSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import { errorMessage, parseHostPort, qualifiedForm, readTokenFile, serveUntilStopped, ToolError, verifyAuditFile } from '@bulkhead/core';
import { builtinCli } from './config/downstreams.js';
import { BUILTIN_NAMESPACES } from './config/schema.js';
import { defaultControlDir, loadGateway } from './load.js';
import { PinStore } from './pins.js';
import { initConfig } from './commands/config-init.js';
import { doctor } from './commands/doctor.js';
import { listTrash, purgeTrash, restoreFromTrash, type TrashOutput } from './commands/trash.js';
import { runSetup } from './commands/setup.js';
import { firstParagraph } from './search/index.js';

const VERSION = '0.1.0';
const SCRIPT = fileURLToPath(import.meta.url);

const USAGE = `usage: bulkhead <command> [options]

commands:
  start                the gateway over the current folder (stdio, or --http HOST:PORT)
  serve <namespace>    one built-in compartment on its own (${BUILTIN_NAMESPACES.join(', ')}); flags go to it
  tools                what the gateway exposes, by tier
  search "<query>"     tool_search from the terminal
  setup <client>       put a bulkhead entry into an MCP client's config file (bulkhead setup --help)
  approve <ns:tool>    accept the changed definition of a quarantined tool
  audit verify [FILE]  check the audit logs' hash chains
  config init          write a commented control-plane folder (never overwrites)
  trash list           what fs_write deleted, newest first (--limit N, default 50)
  trash restore ID     put it back where it was, or at --to PATH; never overwrites
  trash purge          apply the retention policy of fs_write_policy.yaml now
  doctor               check rg, git, bwrap, the configuration, the servers and (with --http) the port

options for start, tools and search:
  --root DIR           a folder the compartments may use (repeatable; default: the current folder)
  --config DIR         the control-plane folder (default: <first root>/.bulkhead)
  --profile NAME       expose only what this profile of bulkhead.yaml allows
  --http HOST:PORT     (start) serve Streamable HTTP at http://HOST:PORT/mcp
  --token-file FILE    (start) require this bearer token (mandatory beyond loopback)
  --allow-origin O, --allow-host H   (start) accept another Origin / Host

trash, audit, approve, config and doctor take --root and --config as well.`;

const OPTIONS = {
  root: { type: 'string', multiple: true },
  config: { type: 'string' },
  profile: { type: 'string' },
  http: { type: 'string' },
  'token-file': { type: 'string' },
  'allow-origin': { type: 'string', multiple: true },
  'allow-host': { type: 'string', multiple: true },
  limit: { type: 'string' },
  to: { type: 'string' },
  help: { type: 'boolean', short: 'h' },
} as const;

class UsageError extends Error {}

function setupFrom(values: { root?: string[]; config?: string; profile?: string }) {
  const roots = (values.root ?? [process.cwd()]).map((root) => resolve(root));
  return { roots, controlDir: resolve(values.config ?? defaultControlDir(roots)), ...(values.profile ? { profile: values.profile } : {}) };
}

async function withGateway<T>(values: { root?: string[]; config?: string; profile?: string }, work: (loaded: ReturnType<typeof loadGateway>) => Promise<T>): Promise<T> {
  const loaded = loadGateway(setupFrom(values));
  for (const problem of loaded.problems) process.stderr.write(`bulkhead: ${problem}\n`);
  await loaded.gateway.start();
  try {
    return await work(loaded);
  } finally {
    await loaded.gateway.close();
  }
}

function reportDownstreams(loaded: ReturnType<typeof loadGateway>): void {
  for (const downstream of loaded.gateway.downstreams.values()) {
    if (downstream.state !== 'ready') process.stderr.write(`bulkhead: ${downstream.namespace} is ${downstream.state}: ${downstream.lastError ?? 'no error recorded'}\n`);
  }
  for (const name of loaded.gateway.catalog.invalidNames()) {
    process.stderr.write(`bulkhead: ${name} is left out: tool names may hold only letters, digits, _ and - (at most 64)\n`);
  }
  for (const name of loaded.gateway.catalog.quarantined()) {
    process.stderr.write(`bulkhead: ${name} changed its definition and is quarantined until \`bulkhead approve ${name}\`\n`);
  }
}

async function start(values: Record<string, unknown>): Promise<void> {
  const setup = setupFrom(values as { root?: string[]; config?: string; profile?: string });
  const loaded = loadGateway(setup);
  for (const problem of loaded.problems) process.stderr.write(`bulkhead: ${problem}\n`);
  const token = typeof values['token-file'] === 'string' ? readTokenFile(resolve(values['token-file'])) : undefined;
  await loaded.gateway.start();
  reportDownstreams(loaded);
  const http = typeof values['http'] === 'string' ? parseHostPort(values['http']) : undefined;
  const viaStdio = { mcpServers: { bulkhead: { command: process.execPath, args: [SCRIPT, 'start', ...setup.roots.flatMap((root) => ['--root', root])] } } };
  await serveUntilStopped(loaded.gateway, {
    bin: 'bulkhead gateway',
    ...(http
      ? {
          http: {
            ...http,
            ...(token ? { token } : {}),
            tokens: loaded.tokens,
            allowedOrigins: (values['allow-origin'] as string[] | undefined) ?? [],
            allowedHosts: (values['allow-host'] as string[] | undefined) ?? [],
          },
        }
      : {}),
    stdioBanner: `over stdio (roots: ${setup.roots.join(', ')}; tools: ${loaded.gateway.toolNames.join(', ')})`,
    httpBanner: (url) =>
      `always bound: ${loaded.gateway.toolNames.join(', ')}\n` +
      `downstream servers: ${[...loaded.gateway.downstreams.values()].map((d) => `${d.namespace} (${d.state})`).join(', ') || 'none'}\n` +
      `roots: ${setup.roots.join(', ')}\ncontrol-plane folder: ${setup.controlDir}\n\n` +
      `Claude Desktop (claude_desktop_config.json), over HTTP through mcp-remote:\n${JSON.stringify({ mcpServers: { bulkhead: { command: 'npx', args: ['-y', 'mcp-remote', url] } } }, null, 2)}\n\n` +
      `or over stdio, without a running server:\n${JSON.stringify(viaStdio, null, 2)}`,
  });
}

function serve(namespace: string | undefined, rest: string[]): void {
  if (!namespace) throw new UsageError('serve needs a namespace');
  const cli = builtinCli(namespace);
  if (!cli) throw new UsageError(`${namespace} is not an installed built-in compartment (built-ins: ${BUILTIN_NAMESPACES.join(', ')})`);
  const child = spawn(process.execPath, [cli, ...rest], { stdio: 'inherit' });
  for (const signal of ['SIGINT', 'SIGTERM'] as const) process.on(signal, () => child.kill(signal));
  child.on('exit', (code, signal) => process.exit(code ?? (signal ? 1 : 0)));
}

function positiveInteger(value: string | undefined, fallback: number, flag: string): number {
  if (value === undefined) return fallback;
  const number = Number(value);
  if (!Number.isInteger(number) || number < 1) throw new UsageError(`${flag} needs a positive whole number, not ${value}`);
  return number;
}

/** `bulkhead trash list|restore ID|purge`: a refusal (restore never overwrites) exits 1 with its reason. */
async function trash(positionals: string[], values: { root?: string[]; config?: string; to?: string; limit?: string }): Promise<number> {
  const [action, id] = positionals;
  const setup = setupFrom(values);
  let output: TrashOutput;
  try {
    if (action === 'list') output = await listTrash(setup, positiveInteger(values.limit, 50, '--limit'));
    else if (action === 'restore' && id) output = await restoreFromTrash(setup, id, values.to);
    else if (action === 'purge') output = await purgeTrash(setup);
    else throw new UsageError('usage: bulkhead trash list [--limit N] | restore ID [--to PATH] | purge');
  } catch (error) {
    if (!(error instanceof ToolError)) throw error;
    process.stderr.write(`bulkhead: ${error.message}\n`);
    return 1;
  }
  for (const line of output.stderr) process.stderr.write(`bulkhead: ${line}\n`);
  for (const line of output.stdout) process.stdout.write(`${line}\n`);
  return 0;
}

async function main(argv: string[]): Promise<number> {
  const [command, ...rest] = argv;
  if (command === 'serve') {
    serve(rest[0], rest.slice(1));
    return -1;
  }
  if (command === 'setup') return runSetup(rest);
  const { values, positionals } = parseArgs({ args: rest, options: OPTIONS, allowPositionals: true, strict: true });
  if (!command || values.help || command === '--help' || command === '-h') {
    process.stdout.write(`${USAGE}\n`);
    return command ? 0 : 2;
  }
  switch (command) {
    case 'start':
      await start(values);
      return -1;
    case 'tools':
      return withGateway(values, async (loaded) => {
        reportDownstreams(loaded);
        const bound = new Set(loaded.gateway.toolNames);
        const entries = loaded.gateway.catalog
          .entries()
          .filter(loaded.gateway.visible)
          .sort((a, b) => (a.qualified < b.qualified ? -1 : 1));
        const core = entries.filter((entry) => bound.has(entry.wire));
        const deferred = entries.filter((entry) => !bound.has(entry.wire));
        const line = (name: string, description: string) => `  ${name} — ${firstParagraph(description, 100).split('\n')[0]}`;
        process.stdout.write(
          `core (always bound):\n${core.map((e) => line(e.wire, e.tool.description ?? '')).join('\n') || '  none'}\n` +
            `meta (always bound):\n  ${loaded.gateway.metaToolNames.join(', ')}\n` +
            `deferred (found with tool_search):\n${deferred.map((e) => line(e.wire, e.tool.description ?? '')).join('\n') || '  none'}\n`,
        );
        return 0;
      });
    case 'search': {
      const query = positionals.join(' ');
      if (!query) throw new UsageError('search needs a query');
      const limit = values.limit ? Number(values.limit) : 5;
      return withGateway(values, async (loaded) => {
        const hits = loaded.gateway.catalog.search(query, limit, loaded.gateway.visible);
        process.stdout.write(hits.map(({ entry, score }, i) => `${i + 1}. ${entry.wire} (score ${score.toFixed(3)})\n   ${firstParagraph(entry.tool.description ?? '', 200).replace(/\n/g, ' ')}`).join('\n') + (hits.length ? '\n' : `no tools match ${JSON.stringify(query)}\n`));
        return 0;
      });
    }
    case 'approve': {
      const name = positionals[0];
      if (!name) throw new UsageError('approve needs a tool name such as fs:read_file');
      const setup = setupFrom(values);
      const qualified = qualifiedForm(name);
      if (!new PinStore(setup.controlDir).approve(qualified)) {
        process.stderr.write(`bulkhead: ${qualified} has no changed definition waiting for approval\n`);
        return 1;
      }
      process.stdout.write(`approved the new definition of ${qualified}\n`);
      return 0;
    }
    case 'audit': {
      if (positionals[0] !== 'verify') throw new UsageError('usage: bulkhead audit verify [FILE...]');
      const setup = setupFrom(values);
      const dir = join(setup.controlDir, 'audit');
      const files = positionals.length > 1 ? positionals.slice(1) : readdirSync(dir).filter((f) => f.endsWith('.jsonl')).map((f) => join(dir, f));
      let failed = false;
      for (const file of files) {
        const result = verifyAuditFile(file);
        failed ||= !result.ok;
        process.stdout.write(result.ok ? `OK ${file}: ${result.entries} entries, chain intact\n` : `FAIL ${file} line ${result.line}: ${result.problem}\n`);
      }
      return failed ? 1 : 0;
    }
    case 'config': {
      if (positionals[0] !== 'init') throw new UsageError('usage: bulkhead config init [--config DIR]');
      for (const line of initConfig(setupFrom(values).controlDir)) process.stdout.write(`${line}\n`);
      return 0;
    }
    case 'trash':
      return trash(positionals, values);
    case 'doctor': {
      const checks = await doctor(setupFrom(values), typeof values.http === 'string' ? parseHostPort(values.http) : undefined);
      for (const check of checks) process.stdout.write(`${check.level.padEnd(4)} ${check.what}: ${check.detail}\n`);
      return checks.some((check) => check.level === 'fail') ? 1 : 0;
    }
    case 'version':
    case '--version':
      process.stdout.write(`bulkhead ${VERSION}\n`);
      return 0;
    default:
      throw new UsageError(`unknown command ${command}`);
  }
}

process.stdout.on('error', (error: NodeJS.ErrnoException) => {
  if (error.code === 'EPIPE') process.exit(0);
  throw error;
});

main(process.argv.slice(2)).then(
  (code) => {
    if (code >= 0) process.exitCode = code;
  },
  (error: unknown) => {
    process.stderr.write(`bulkhead: ${errorMessage(error)}\n${error instanceof UsageError ? `\n${USAGE}\n` : ''}`);
    process.exitCode = 2;
  },
);
