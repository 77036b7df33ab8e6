import { readFileSync, statSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { parseArgs } from 'node:util';
import { loadYamlFile } from '../config/yaml-file.js';
import { AUDIT_POLICY_FILE, auditPolicySchema, type AuditPolicy } from '../config/audit-policy.js';
import { PermissionGate } from '../permissions/gate.js';
import type { GateMode } from '../kit/gate.js';

export interface CommonOptions {
  /** Absolute root folders, as given (the server realpaths them). */
  readonly roots: readonly string[];
  readonly controlDir: string;
  readonly gate: GateMode;
  readonly audit: AuditPolicy;
  readonly http?: { readonly host: string; readonly port: number };
  /** `--token-file`, absolute; read when the server starts serving HTTP. */
  readonly tokenFile?: string;
  /** `--no-auth`: serve HTTP on loopback without a bearer token. */
  readonly noAuth: boolean;
  readonly allowedOrigins: readonly string[];
  readonly allowedHosts: readonly string[];
  /** `--stateless` (with `--http` only): no MCP sessions, so several servers may share one address. */
  readonly stateless?: boolean;
}

export class UsageError extends Error {}

export const STATELESS_WITHOUT_HTTP = '--stateless needs --http HOST:PORT: over stdio there is one client on one connection, so there are no sessions to do without';

/**
 * A mistake in a command line, in one line of our words, or undefined for any other error. node's
 * own parseArgs errors count ("Unknown option '--x'. To specify…" says more than it needs to).
 */
export function usageMistake(error: unknown, command: string): string | undefined {
  if (error instanceof UsageError) return error.message;
  const code = error instanceof TypeError ? (error as NodeJS.ErrnoException).code : undefined;
  if (!code?.startsWith('ERR_PARSE_ARGS')) return undefined;
  const flag = /'(-{1,2}[^' ]+)/.exec(error instanceof Error ? error.message : '')?.[1];
  if (code === 'ERR_PARSE_ARGS_UNKNOWN_OPTION' && flag) return `${command} does not take ${flag}`;
  return (error as Error).message.split('. ')[0]!;
}

export function commonUsage(bin: string): string {
  return `usage: ${bin} [--root DIR]... [--config DIR] [--http HOST:PORT] [--token-file FILE | --no-auth]
       [--allow-origin ORIGIN]... [--allow-host HOST]... [--stateless] [--gated-by-gateway]

  --root DIR          a folder the server may read (repeatable; default: the current folder)
  --config DIR        the control-plane folder with the policy files (default: <first root>/.bulkhead)
  --http HOST:PORT    serve Streamable HTTP at http://HOST:PORT/mcp instead of stdio (port 0 picks a free one)
  --token-file FILE   require "Authorization: Bearer <contents of FILE>" (default: a token made at the first
                      start and kept in <control-plane folder>/keys/${bin}.http.token, mode 0600)
  --no-auth           serve HTTP without a bearer token (loopback only; any local process can then call tools)
  --allow-origin O    also accept this browser Origin (repeatable)
  --allow-host H      also accept this Host header name (repeatable)
  --stateless         with --http: keep no MCP sessions, each POST answered on its own, so several servers can
                      share one address behind a load balancer; a call that needs confirming cannot be asked
                      over MCP then and waits as a pending approval (bulkhead approvals)
  --gated-by-gateway  a Bulkhead gateway in front applies allow/ask/deny; hard boundaries still hold here`;
}

export function parseHostPort(value: string): { host: string; port: number } {
  const match = /^(\[[^\]]+\]|[^:]+):(\d{1,5})$/.exec(value) ?? /^(\d{1,5})$/.exec(value);
  if (!match) throw new UsageError(`--http expects HOST:PORT (for example 127.0.0.1:8765), got ${JSON.stringify(value)}`);
  const host = match.length === 3 ? match[1]!.replace(/^\[|\]$/g, '') : '127.0.0.1';
  const port = Number(match.length === 3 ? match[2] : match[1]);
  if (port > 65535) throw new UsageError(`--http port ${port} is out of range (0-65535)`);
  return { host, port };
}

/**
 * The roots a server may use, absolute. Each must be an existing folder: an empty value (an unset
 * variable in a client's config) or a typo must never widen to the current folder or create one.
 */
export function checkRoots(given: readonly string[] | undefined, cwd: string): string[] {
  if (given === undefined) return [cwd];
  return given.map((root) => {
    if (root.trim() === '') throw new UsageError('--root is empty (an unset variable in the client config?); give the folder to serve, for example --root /home/me/project');
    const absolute = resolve(cwd, root);
    let isFolder: boolean;
    try {
      isFolder = statSync(absolute).isDirectory();
    } catch {
      throw new UsageError(`--root ${absolute} does not exist; create it or give an existing folder`);
    }
    if (!isFolder) throw new UsageError(`--root ${absolute} is not a folder; give the folder that holds it`);
    return absolute;
  });
}

/** The control-plane folder: it may be missing (every file has defaults), but not empty or a file. */
export function checkControlDir(given: string | undefined, roots: readonly string[], cwd: string): string {
  if (given !== undefined && given.trim() === '') throw new UsageError('--config is empty (an unset variable in the client config?); give the control-plane folder, or leave the flag out for <first root>/.bulkhead');
  const controlDir = resolve(cwd, given ?? join(roots[0]!, '.bulkhead'));
  let isFile = false;
  try {
    isFile = !statSync(controlDir).isDirectory();
  } catch {
    // A missing control-plane folder is the zero-config start.
  }
  if (isFile) throw new UsageError(`--config ${controlDir} is a file; the control-plane folder holds the policy files`);
  return controlDir;
}

/** Reads a bearer token from a file; a short or unreadable token is refused, never accepted. */
export function readTokenFile(file: string): string {
  let token: string;
  try {
    token = readFileSync(file, 'utf8').trim();
  } catch (error) {
    throw new UsageError(`token file ${file} cannot be read: ${(error as Error).message}`);
  }
  if (token.length < 16) throw new UsageError(`token file ${file} holds ${token.length} characters; use at least 16 random characters`);
  return token;
}

/** Parses the flags every Bulkhead server shares and loads the core's own policy files. */
export function parseCommonOptions(argv: readonly string[], cwd: string): CommonOptions & { help: boolean; version: boolean } {
  const { values } = parseArgs({
    args: [...argv],
    options: {
      root: { type: 'string', multiple: true },
      config: { type: 'string' },
      http: { type: 'string' },
      'token-file': { type: 'string' },
      'no-auth': { type: 'boolean' },
      'allow-origin': { type: 'string', multiple: true },
      'allow-host': { type: 'string', multiple: true },
      'gated-by-gateway': { type: 'boolean' },
      stateless: { type: 'boolean' },
      help: { type: 'boolean', short: 'h' },
      version: { type: 'boolean' },
    },
    strict: true,
    allowPositionals: false,
  });
  const help = values.help ?? false;
  const version = values.version ?? false;
  if (help || version) {
    return { roots: [cwd], controlDir: join(cwd, '.bulkhead'), gate: { kind: 'gateway' }, audit: auditPolicySchema.parse({}), noAuth: false, allowedOrigins: [], allowedHosts: [], help, version };
  }
  const roots = checkRoots(values.root, cwd);
  const controlDir = checkControlDir(values.config, roots, cwd);
  const http = values.http !== undefined ? parseHostPort(values.http) : undefined;
  if (values.stateless && !http) throw new UsageError(STATELESS_WITHOUT_HTTP);
  // Only the parent at the other end of stdin may name the caller; an HTTP port has no one parent.
  const gate: GateMode = values['gated-by-gateway'] ? { kind: 'gateway', parentNamesCaller: http === undefined } : { kind: 'self', permissions: PermissionGate.load(controlDir) };
  const audit = loadYamlFile(controlDir, AUDIT_POLICY_FILE, auditPolicySchema).value;
  return {
    roots,
    controlDir,
    gate,
    audit,
    ...(http ? { http } : {}),
    ...(values['token-file'] !== undefined ? { tokenFile: resolve(cwd, values['token-file']) } : {}),
    noAuth: values['no-auth'] ?? false,
    allowedOrigins: values['allow-origin'] ?? [],
    allowedHosts: values['allow-host'] ?? [],
    ...(values.stateless ? { stateless: true } : {}),
    help,
    version,
  };
}
