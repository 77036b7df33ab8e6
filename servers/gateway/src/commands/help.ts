import type { ParseArgsConfig } from 'node:util';
import { BUILTIN_NAMESPACES } from '../config/schema.js';

type Options = NonNullable<ParseArgsConfig['options']>;

/** One `bulkhead` command: the flags it takes (any other is refused) and its help text. */
export interface CommandHelp {
  readonly summary: string;
  readonly usage: string;
  readonly options: Options;
  /** Lines under "options:", flag first. */
  readonly flags: readonly string[];
}

const FOLDERS: Options = { root: { type: 'string', multiple: true }, config: { type: 'string' } };
const FOLDER_FLAGS = [
  '--root DIR           a folder the compartments may use (repeatable; default: the current folder; it must exist)',
  '--config DIR         the control-plane folder (default: <first root>/.bulkhead; it may be missing)',
];
const PROFILE_FLAG = '--profile NAME       expose only what this profile of bulkhead.yaml allows';

export const COMMANDS: Readonly<Record<string, CommandHelp>> = {
  start: {
    summary: 'the gateway over the current folder (stdio, or --http HOST:PORT)',
    usage: 'bulkhead start [--root DIR]... [--config DIR] [--profile NAME] [--http HOST:PORT] [--token-file FILE | --no-auth] [--allow-origin O]... [--allow-host H]...',
    options: {
      ...FOLDERS,
      profile: { type: 'string' },
      http: { type: 'string' },
      'token-file': { type: 'string' },
      'no-auth': { type: 'boolean' },
      'allow-origin': { type: 'string', multiple: true },
      'allow-host': { type: 'string', multiple: true },
    },
    flags: [
      ...FOLDER_FLAGS,
      PROFILE_FLAG,
      '--http HOST:PORT     serve Streamable HTTP at http://HOST:PORT/mcp instead of stdio (port 0 picks a free one)',
      '--token-file FILE    require this bearer token (default: a token made at the first start, kept in <control-plane folder>/keys/bulkhead.http.token)',
      '--no-auth            serve HTTP without a bearer token (loopback only; any local process can then call tools)',
      '--allow-origin O     also accept this browser Origin (repeatable)',
      '--allow-host H       also accept this Host header name (repeatable)',
    ],
  },
  serve: {
    summary: `one built-in compartment on its own (${BUILTIN_NAMESPACES.join(', ')}); flags go to it`,
    usage: 'bulkhead serve <namespace> [flags of that compartment]   (bulkhead serve <namespace> --help lists them)',
    options: {},
    flags: [],
  },
  tools: {
    summary: 'what the gateway exposes, by tier',
    usage: 'bulkhead tools [--root DIR]... [--config DIR] [--profile NAME]',
    options: { ...FOLDERS, profile: { type: 'string' } },
    flags: [...FOLDER_FLAGS, PROFILE_FLAG],
  },
  search: {
    summary: 'tool_search from the terminal',
    usage: 'bulkhead search "<query>" [--limit N] [--root DIR]... [--config DIR] [--profile NAME]',
    options: { ...FOLDERS, profile: { type: 'string' }, limit: { type: 'string' } },
    flags: ['--limit N            most results (default 5)', ...FOLDER_FLAGS, PROFILE_FLAG],
  },
  approve: {
    summary: 'accept the definition of a quarantined tool or prompt (changed, suspicious or new)',
    usage: 'bulkhead approve <ns:tool | prompt:ns:name> [--root DIR]... [--config DIR]',
    options: FOLDERS,
    flags: FOLDER_FLAGS,
  },
  audit: {
    summary: "check the audit logs' chains and head records, or a receipt offline; print the receipt public key",
    usage: 'bulkhead audit verify [FILE]... [--key PUBFILE] [--root DIR]... [--config DIR]\n       bulkhead audit verify --receipt FILE [--key PUBFILE] [--root DIR]... [--config DIR]\n       bulkhead audit key [--root DIR]... [--config DIR]',
    options: { ...FOLDERS, receipt: { type: 'string' }, key: { type: 'string' } },
    flags: [
      '--receipt FILE       (verify) check this saved receipt (the JSON of _meta["bulkhead/receipt"]) instead of the chains',
      '--key PUBFILE        (verify) the receipt public key (PEM or raw base64) to check the receipt with, or to require every head record signed by; default: <config>/keys/receipt.pub, and unsigned heads pass',
      ...FOLDER_FLAGS,
    ],
  },
  config: {
    summary: 'write a commented control-plane folder (never overwrites)',
    usage: 'bulkhead config init [--root DIR]... [--config DIR]',
    options: FOLDERS,
    flags: FOLDER_FLAGS,
  },
  trash: {
    summary: 'what fs_write deleted: list (newest first), restore ID, purge (apply the retention policy now)',
    usage: 'bulkhead trash list [--limit N] | restore ID [--to PATH] | purge   [--root DIR]... [--config DIR]',
    options: { ...FOLDERS, limit: { type: 'string' }, to: { type: 'string' } },
    flags: ['--limit N            (list) most entries (default 50)', '--to PATH            (restore) put it here instead of where it was; never overwrites', ...FOLDER_FLAGS],
  },
  approvals: {
    summary: 'calls waiting for a human (clients without elicitation): list, show ID, allow ID [--session | --always], deny ID',
    usage: 'bulkhead approvals [list | show ID | allow ID [--session | --always] | deny ID]   [--root DIR]... [--config DIR]',
    options: { ...FOLDERS, session: { type: 'boolean' }, always: { type: 'boolean' } },
    flags: [
      '--session            (allow) allow this tool for the rest of the session that asked',
      '--always             (allow) always allow this tool: adds it under allow: in permissions.yaml, with a comment saying who and when',
      ...FOLDER_FLAGS,
    ],
  },
  console: {
    summary: 'open the web console of the running gateway in the browser (approvals, activity, quarantine, servers, trash, policy); with none running, serve one until Ctrl-C',
    usage: 'bulkhead console [--print] [--root DIR]... [--config DIR]',
    options: { ...FOLDERS, print: { type: 'boolean' } },
    flags: ['--print              print the login link (it works once, within a minute) instead of opening a browser', ...FOLDER_FLAGS],
  },
  doctor: {
    summary: 'check node, rg, git, bwrap, the SQLite binding, the configuration, each server and (with --http) the port',
    usage: 'bulkhead doctor [--root DIR]... [--config DIR] [--http HOST:PORT]',
    options: { ...FOLDERS, http: { type: 'string' } },
    flags: [...FOLDER_FLAGS, '--http HOST:PORT     also check that this address is free to serve on'],
  },
  setup: {
    summary: "put a bulkhead entry into an MCP client's config file (claude-desktop, claude-code, cursor, vscode, windsurf)",
    usage: 'bulkhead setup <client> [--root DIR]... [--scope user|project] [--name NAME] [--config-file PATH] [--dry-run]',
    // Parsed by the command itself; `bulkhead setup --help` prints its full text.
    options: {},
    flags: [],
  },
  help: {
    summary: 'this text, or one command in full',
    usage: 'bulkhead help [command]',
    options: {},
    flags: [],
  },
  version: {
    summary: 'the version',
    usage: 'bulkhead version',
    options: {},
    flags: [],
  },
};

/** The overview `bulkhead help` prints. */
export function overview(): string {
  const rows = Object.entries(COMMANDS).map(([name, command]) => [name, command.summary] as const);
  return `usage: bulkhead <command> [options]\n\ncommands:\n${rows.map(([name, summary]) => `  ${name.padEnd(10)} ${summary}`).join('\n')}\n\n\`bulkhead help <command>\` or \`bulkhead <command> --help\` shows a command's flags.`;
}

/** One command's help: its usage line, what it does and every flag it takes. */
export function commandHelp(name: string): string | undefined {
  const command = COMMANDS[name];
  if (!command) return undefined;
  return `usage: ${command.usage}\n\n${command.summary}${command.flags.length ? `\n\noptions:\n${command.flags.map((flag) => `  ${flag}`).join('\n')}` : ''}\n  -h, --help           this help`;
}
