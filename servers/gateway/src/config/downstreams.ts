import { createRequire } from 'node:module';
import { dirname, join, resolve } from 'node:path';
import type { DownstreamSpec } from '../downstream/downstream.js';
import { BUILTIN_NAMESPACES, TRUST_GRANTS, type GatewayConfig, type ServerEntry, type TrustGrant } from './schema.js';

const require = createRequire(import.meta.url);

export interface ResolvedDownstreams {
  readonly specs: DownstreamSpec[];
  /** Built-ins that are configured but not installed, and other entries that cannot start. */
  readonly problems: string[];
  readonly builtins: ReadonlySet<string>;
}

function isBuiltin(namespace: string): boolean {
  return (BUILTIN_NAMESPACES as readonly string[]).includes(namespace);
}

/** The CLI of a built-in compartment (`fs_write` → @bulkhead/fs-write's bin), if installed. */
export function builtinCli(namespace: string): string | undefined {
  const pkg = `@bulkhead/${namespace.replace(/_/g, '-')}`;
  try {
    return join(dirname(require.resolve(pkg)), 'cli.js');
  } catch {
    return undefined;
  }
}

/** The environment a child gets: only what it needs, so the gateway's secrets stay with it. */
function childEnv(extra: Record<string, string>): Record<string, string> {
  const env: Record<string, string> = {};
  for (const key of ['PATH', 'HOME', 'LANG', 'TMPDIR', 'SystemRoot']) {
    const value = process.env[key];
    if (value !== undefined) env[key] = value;
  }
  return { ...env, ...extra };
}

/** The grants of an entry's `trust`: `all` is every one. */
export function trustOf(entry: ServerEntry): ReadonlySet<TrustGrant> {
  const trust = entry.trust;
  if (trust === 'all') return new Set(TRUST_GRANTS);
  return new Set(typeof trust === 'string' ? [trust] : trust);
}

export function resolveDownstreams(config: GatewayConfig, roots: readonly string[], controlDir: string): ResolvedDownstreams {
  const specs: DownstreamSpec[] = [];
  const problems: string[] = [];
  const builtins = new Set<string>();
  for (const [namespace, entry] of Object.entries(config.servers) as [string, ServerEntry][]) {
    if (!entry.enabled) continue;
    const timeout = entry.start_timeout_ms !== undefined ? { startTimeoutMs: entry.start_timeout_ms } : {};
    const trust = trustOf(entry);
    if (entry.url) {
      specs.push({ kind: 'http', namespace, url: entry.url, headers: entry.headers, trust, ...timeout });
      continue;
    }
    const cwd = entry.cwd ? resolve(roots[0]!, entry.cwd) : roots[0]!;
    if (entry.command) {
      specs.push({ kind: 'stdio', namespace, child: { command: entry.command, args: entry.args, env: childEnv(entry.env), cwd }, trust, ...timeout });
      continue;
    }
    if (!isBuiltin(namespace)) {
      problems.push(`${namespace}: not a built-in compartment (${BUILTIN_NAMESPACES.join(', ')}), so it needs command (stdio) or url (HTTP)`);
      continue;
    }
    const cli = builtinCli(namespace);
    if (!cli) {
      problems.push(`${namespace}: the built-in compartment is not installed in this build (package @bulkhead/${namespace.replace(/_/g, '-')}); it is skipped`);
      continue;
    }
    builtins.add(namespace);
    const args = [cli, ...roots.flatMap((root) => ['--root', root]), '--config', controlDir, '--gated-by-gateway', ...entry.args];
    specs.push({ kind: 'stdio', namespace, child: { command: process.execPath, args, env: childEnv(entry.env), cwd }, builtin: true, trust: new Set(TRUST_GRANTS), ...timeout });
  }
  return { specs, problems, builtins };
}
