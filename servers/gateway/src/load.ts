import { resolve, join } from 'node:path';
import { auditPolicySchema, AUDIT_POLICY_FILE, DEFAULT_OUTPUT_LIMITS, loadYamlFile, PermissionGate, parseToolPattern, type AuditPolicy } from '@bulkhead/core';
import { resolveDownstreams } from './config/downstreams.js';
import { HOOKS_FILE, hooksSchema } from './config/hooks.js';
import { GATEWAY_CONFIG_FILE, gatewayConfigSchema, TOOL_POLICY_FILE, toolPolicySchema, type GatewayConfig } from './config/schema.js';
import { createGateway, type Gateway } from './gateway.js';
import type { CatalogEntry } from './catalog.js';

export interface GatewaySetup {
  readonly roots: readonly string[];
  readonly controlDir: string;
  readonly profile?: string;
}

export interface LoadedGateway {
  readonly gateway: Gateway;
  /** Configured servers that cannot run, to tell the user rather than crash. */
  readonly problems: readonly string[];
  readonly audit: AuditPolicy;
}

function profileFilter(config: GatewayConfig, name: string | undefined): ((entry: CatalogEntry) => boolean) | undefined {
  if (name === undefined) return undefined;
  const profile = config.profiles[name];
  if (!profile) {
    const known = Object.keys(config.profiles);
    throw new Error(`unknown profile ${name}; ${known.length ? `profiles in ${GATEWAY_CONFIG_FILE}: ${known.join(', ')}` : `${GATEWAY_CONFIG_FILE} defines none`}`);
  }
  const tools = profile.tools?.map(parseToolPattern);
  return (entry) => (!profile.namespaces || profile.namespaces.includes(entry.namespace)) && (!tools || tools.some((pattern) => pattern.matchesName(entry.qualified)));
}

/** Reads the control-plane folder and builds a gateway (not started yet). */
export function loadGateway(setup: GatewaySetup): LoadedGateway {
  const roots = setup.roots.map((root) => resolve(root));
  const controlDir = resolve(setup.controlDir);
  const config = loadYamlFile(controlDir, GATEWAY_CONFIG_FILE, gatewayConfigSchema).value;
  const toolPolicy = loadYamlFile(controlDir, TOOL_POLICY_FILE, toolPolicySchema).value;
  const audit = loadYamlFile(controlDir, AUDIT_POLICY_FILE, auditPolicySchema).value;
  const hooks = loadYamlFile(controlDir, HOOKS_FILE, hooksSchema).value;
  const permissions = PermissionGate.load(controlDir);
  const gatePermissions = setup.profile && config.profiles[setup.profile]?.autonomy ? permissions.narrowedTo(config.profiles[setup.profile]!.autonomy!) : permissions;
  const { specs, problems, builtins } = resolveDownstreams(config, roots, controlDir);
  const visibleTo = profileFilter(config, setup.profile);
  const gateway = createGateway({
    controlDir,
    downstreams: specs,
    builtins,
    config,
    toolPolicy,
    gate: { kind: 'self', permissions: gatePermissions },
    audit,
    limits: DEFAULT_OUTPUT_LIMITS,
    hooks,
    hookCwd: roots[0]!,
    ...(visibleTo ? { visibleTo } : {}),
  });
  return { gateway, problems, audit };
}

export function defaultControlDir(roots: readonly string[]): string {
  return join(resolve(roots[0]!), '.bulkhead');
}
