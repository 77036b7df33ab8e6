#!/usr/bin/env node
import { spawn } from 'node:child_process';
import { resolve } from 'node:path';
import { parseArgs } from 'node:util';
import { checkControlDir, checkRoots, errorMessage, httpClientSnippets, httpOptionsFor, parseHostPort, qualifiedForm, resolveHttpAuth, serveUntilStopped, ToolError, UsageError, usageMistake } from '@bulkhead/core';
import { builtinCli } from './config/downstreams.js';
import { BUILTIN_NAMESPACES } from './config/schema.js';
import { loadGateway } from './load.js';
import { PinStore } from './pins.js';
import type { CatalogEntry, QuarantinedTool } from './catalog.js';
import { describeQuarantine } from './treatment.js';
import { auditKey, auditVerify, auditVerifyReceipt } from './commands/audit-verify.js';
import { initConfig } from './commands/config-init.js';
import { doctor } from './commands/doctor.js';
import { listTrash, purgeTrash, restoreFromTrash, type TrashOutput } from './commands/trash.js';
import { approvals } from './commands/approvals.js';
import { firstParagraph } from './search/index.js';
import { commandHelp, COMMANDS, overview } from './commands/help.js';
import { runSetup } from './commands/setup.js';
import { clientSnippets, gatewayEntry } from './commands/clients.js';
import { openConsole } from './commands/console.js';
import { gatewayConsole } from './console/serve.js';

const VERSION = '0.1.0';

const USAGE = overview();

/** Every flag a command may take; `COMMANDS` says which one takes which. */
interface Flags {
  readonly root?: string[];
  readonly config?: string;
  readonly profile?: string;
  readonly http?: string;
  readonly 'token-file'?: string;
  readonly 'no-auth'?: boolean;
  readonly 'allow-origin'?: string[];
  readonly 'allow-host'?: string[];
  readonly limit?: string;
  readonly to?: string;
  readonly receipt?: string;
  readonly key?: string;
  readonly print?: boolean;
  readonly session?: boolean;
  readonly always?: boolean;
  readonly help?: boolean;
}

/** Roots and the control-plane folder from the flags, refused before anything starts when they are wrong. */
function setupFrom(values: { root?: string[]; config?: string; profile?: string }) {
  const roots = checkRoots(values.root, process.cwd());
  return { roots, controlDir: checkControlDir(values.config, roots, process.cwd()), ...(values.profile !== undefined ? { profile: values.profile } : {}) };
}

async function withGateway<T>(values: { root?: string[]; config?: string; profile?: string }, work: (loaded: ReturnType<typeof loadGateway>) => Promise<T>): Promise<T> {
  const loaded = loadGateway(setupFrom(values));
  for (const problem of loaded.problems) process.stderr.write(`bulkhead: ${problem}\n`);
  loaded.gateway.start();
  await loaded.gateway.settled();
  try {
    return await work(loaded);
  } finally {
    await loaded.gateway.close();
  }
}

/** Held-back tools for `bulkhead tools`, each with why and the command that lets it through; nothing when none is. */
function quarantinedSection(held: readonly QuarantinedTool[]): string {
  return held.length ? `quarantined (waiting for bulkhead approve):\n${held.map((item) => `  ${describeQuarantine(item)}`).join('\n')}\n` : '';
}

function reportDownstreams(loaded: ReturnType<typeof loadGateway>): void {
  for (const note of [...loaded.gateway.downstreamNotes(), ...loaded.gateway.catalogNotes()]) process.stderr.write(`bulkhead: ${note}\n`);
}

async function start(values: Flags): Promise<void> {
  // Every flag is checked before a child starts, so a mistake exits at once and leaves nothing running.
  const setup = setupFrom(values);
  const http = values.http !== undefined ? parseHostPort(values.http) : undefined;
  const loaded = loadGateway({ ...setup, report: (line) => process.stderr.write(`bulkhead: ${line}\n`) });
  const auth = http
    ? resolveHttpAuth({
        controlDir: setup.controlDir,
        server: 'bulkhead',
        host: http.host,
        noAuth: values['no-auth'] ?? false,
        configuredTokens: loaded.tokens.length,
        ...(values['token-file'] !== undefined ? { tokenFile: resolve(values['token-file']) } : {}),
      })
    : undefined;
  for (const problem of loaded.problems) process.stderr.write(`bulkhead: ${problem}\n`);
  const webConsole = await gatewayConsole({
    gateway: loaded.gateway,
    controlDir: setup.controlDir,
    roots: setup.roots,
    ...(http ? { httpHost: http.host } : {}),
    report: (line) => process.stderr.write(`bulkhead: ${line}\n`),
  });
  const compartments = [...loaded.gateway.downstreams.keys()].join(', ') || 'none';
  const everyClient =
    `Each client's entry (\`bulkhead setup <client>\` writes it into the client's config for you):\n` +
    clientSnippets(gatewayEntry(setup.roots)).map((snippet) => `\n${snippet.title} (${snippet.file}${snippet.projectFile ? `, or ${snippet.projectFile} in a project` : ''}):\n${snippet.json}`).join('');
  await serveUntilStopped(webConsole.server, {
    bin: 'bulkhead gateway',
    ...(http && auth
      ? {
          http: {
            ...http,
            ...httpOptionsFor(auth),
            tokens: loaded.tokens,
            allowedOrigins: values['allow-origin'] ?? [],
            allowedHosts: values['allow-host'] ?? [],
          },
          auth,
        }
      : {}),
    // Someone who typed it in a terminal is setting up, not a client: show how a client starts it.
    stdioBanner: `over stdio (roots: ${setup.roots.join(', ')}; downstream servers starting: ${compartments})${webConsole.banner() ? `\n${webConsole.banner()}` : ''}${process.stdin.isTTY ? `\n\nThis waits for an MCP client on stdin. ${everyClient}` : ''}`,
    httpBanner: (url) =>
      (webConsole.banner(url) ? `${webConsole.banner(url)}\n` : '') +
      `downstream servers: ${compartments} (starting; each is reported below when it is up)\n` +
      `roots: ${setup.roots.join(', ')}\ncontrol-plane folder: ${setup.controlDir}\n` +
      `${httpClientSnippets('bulkhead', url, auth!)}\n\n` +
      `or over stdio, without a running server. ${everyClient}`,
    onServing: (url) => {
      webConsole.serving(url);
      loaded.gateway.start();
    },
  });
}

function serve(namespace: string | undefined, rest: string[]): void {
  if (!namespace || namespace === '--help' || namespace === '-h') {
    if (!namespace) throw new UsageError(`serve needs a namespace (${BUILTIN_NAMESPACES.join(', ')})`);
    process.stdout.write(`${commandHelp('serve')}\n`);
    process.exitCode = 0;
    return;
  }
  const cli = builtinCli(namespace);
  if (!cli) throw new UsageError(`${namespace} is not an installed built-in compartment (built-ins: ${BUILTIN_NAMESPACES.join(', ')})`);
  const child = spawn(process.execPath, [cli, ...rest], { stdio: 'inherit' });
  for (const signal of ['SIGINT', 'SIGTERM', 'SIGHUP'] as const) process.on(signal, () => child.kill(signal));
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
  if (command === undefined) {
    process.stderr.write(`${USAGE}\n`);
    return 2;
  }
  if (command === '--help' || command === '-h') {
    process.stdout.write(`${USAGE}\n`);
    return 0;
  }
  if (command === '--version') return main(['version']);
  const help = COMMANDS[command];
  if (!help) throw new UsageError(`unknown command ${command}`);
  const parsed = parseArgs({ args: rest, options: { ...help.options, help: { type: 'boolean', short: 'h' } }, allowPositionals: true, strict: true });
  // Sound: strict parsing admits only the command's own flags, each with the type declared in COMMANDS.
  const values = parsed.values as Flags;
  const positionals = parsed.positionals;
  if (values.help) {
    process.stdout.write(`${commandHelp(command)}\n`);
    return 0;
  }
  switch (command) {
    case 'help': {
      const topic = positionals[0];
      if (topic === undefined) {
        process.stdout.write(`${USAGE}\n`);
        return 0;
      }
      if (topic === 'serve' && positionals[1]) return main(['serve', positionals[1], '--help']);
      if (topic === 'setup') return runSetup(['--help']);
      const text = commandHelp(topic);
      if (!text) throw new UsageError(`unknown command ${topic}`);
      process.stdout.write(`${text}\n`);
      return 0;
    }
    case 'start':
      if (positionals.length) throw new UsageError(`start takes no arguments besides its flags (got ${positionals.join(' ')})`);
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
        const line = (entry: CatalogEntry) =>
          `  ${entry.wire} — ${firstParagraph(entry.tool.description ?? '', 100).split('\n')[0]}${entry.findings.length ? `\n    flagged: ${entry.findings.join('; ')}` : ''}`;
        process.stdout.write(
          `core (always bound):\n${core.map(line).join('\n') || '  none'}\n` +
            `meta (always bound):\n  ${loaded.gateway.metaToolNames.join(', ')}\n` +
            `deferred (found with tool_search):\n${deferred.map(line).join('\n') || '  none'}\n` +
            quarantinedSection(loaded.gateway.catalog.quarantinedTools().filter((held) => loaded.gateway.visible(held.entry))),
        );
        return 0;
      });
    case 'search': {
      const query = positionals.join(' ');
      if (!query) throw new UsageError('search needs a query');
      const limit = positiveInteger(values.limit, 5, '--limit');
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
      const [action, ...files] = positionals;
      const usage = 'usage: bulkhead audit verify [FILE...] | bulkhead audit verify --receipt FILE [--key PUBFILE] | bulkhead audit key';
      if (action === 'key' && files.length === 0 && values.receipt === undefined && values.key === undefined) {
        const shown = auditKey(setupFrom(values).controlDir);
        (shown.exitCode === 0 ? process.stdout : process.stderr).write(shown.text);
        return shown.exitCode;
      }
      if (action !== 'verify') throw new UsageError(usage);
      if (values.receipt !== undefined && files.length > 0) throw new UsageError(`--receipt checks one receipt and takes no audit files; ${usage}`);
      const controlDir = setupFrom(values).controlDir;
      const report = values.receipt !== undefined ? auditVerifyReceipt(controlDir, values.receipt, values.key) : auditVerify(controlDir, files, values.key);
      for (const line of report.lines) process.stdout.write(`${line}\n`);
      return report.exitCode;
    }
    case 'config': {
      if (positionals[0] !== 'init') throw new UsageError('usage: bulkhead config init [--config DIR]');
      for (const line of initConfig(setupFrom(values).controlDir)) process.stdout.write(`${line}\n`);
      return 0;
    }
    case 'trash':
      return trash(positionals, values);
    case 'approvals':
      return approvals(positionals, values, setupFrom(values).controlDir);
    case 'console':
      if (positionals.length) throw new UsageError(`console takes no arguments besides its flags (got ${positionals.join(' ')})`);
      return openConsole({ ...setupFrom(values), print: values.print ?? false });
    case 'doctor': {
      const address = values.http !== undefined ? parseHostPort(values.http) : undefined;
      const checks = await doctor(setupFrom(values), address);
      for (const check of checks) process.stdout.write(`${check.level.padEnd(4)} ${check.what}: ${check.detail}\n`);
      return checks.some((check) => check.level === 'fail') ? 1 : 0;
    }
    case 'version':
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
    const command = process.argv[2];
    const mistake = usageMistake(error, `bulkhead ${command}`);
    const hint = mistake !== undefined ? ` (see \`bulkhead help${command && COMMANDS[command] ? ` ${command}` : ''}\`)` : '';
    process.stderr.write(`bulkhead: ${mistake ?? errorMessage(error)}${hint}\n`);
    process.exitCode = 2;
  },
);
