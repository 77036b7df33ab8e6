import { resolve, join } from 'node:path';
import { auditPolicySchema, AUDIT_POLICY_FILE, ConfigError, readTokenFile, DEFAULT_OUTPUT_LIMITS, loadYamlFile, PermissionGate, parseToolPattern, qualify, type RiskAssessor } from '@bulkhead/core';
import { shellRiskAssessors } from '@bulkhead/shell';
import { resolveDownstreams } from './config/downstreams.js';
import { HOOKS_FILE, hooksSchema } from './config/hooks.js';
import { GATEWAY_CONFIG_FILE, gatewayConfigSchema, TOOL_POLICY_FILE, toolPolicySchema, type GatewayConfig } from './config/schema.js';
import { createGateway, type Access, type Gateway } from './gateway.js';

export interface GatewaySetup {
  readonly roots: readonly string[];
  readonly controlDir: string;
  readonly profile?: string;
  /** Where news of the downstreams goes (a server up, one that failed), in words. */
  readonly report?: (line: string) => void;
}

export interface LoadedGateway {
  readonly gateway: Gateway;
  /** Configured servers that cannot run, to tell the user rather than crash. */
  readonly problems: readonly string[];
  /** Bearer tokens from bulkhead.yaml, labelled with the profile each maps to. */
  readonly tokens: readonly { readonly token: string; readonly label: string }[];
}

function profileAccess(config: GatewayConfig, permissions: PermissionGate, name: string | undefined, where: string): Access {
  if (name === undefined) return { gate: { kind: 'self', permissions } };
  const profile = config.profiles[name];
  if (!profile) {
    const known = Object.keys(config.profiles);
    throw new ConfigError(`unknown profile ${name}${where}; ${known.length ? `profiles in ${GATEWAY_CONFIG_FILE}: ${known.join(', ')}` : `${GATEWAY_CONFIG_FILE} defines none`}`);
  }
  const tools = profile.tools?.map(parseToolPattern);
  const withArgument = tools?.find((pattern) => pattern.argument);
  if (withArgument) throw new ConfigError(`profile ${name} in ${GATEWAY_CONFIG_FILE}: tools entries name tools, not arguments (\`${withArgument.source}\`); put argument rules in permissions.yaml`);
  return {
    gate: { kind: 'self', permissions: profile.autonomy ? permissions.narrowedTo(profile.autonomy) : permissions },
    visibleTo: (entry) => (!profile.namespaces || profile.namespaces.includes(entry.namespace)) && (!tools || tools.some((pattern) => pattern.matchesName(entry.qualified))),
    namespaceVisible: (namespace) => !profile.namespaces || profile.namespaces.includes(namespace),
  };
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
  const { specs, problems, builtins } = resolveDownstreams(config, roots, controlDir);
  const defaultAccess = profileAccess(config, permissions, setup.profile, '');
  // Labels come from positions, never from names a user picks, so two tokens cannot share one.
  const tokens = config.tokens.map((entry, index) => ({ token: readTokenFile(resolve(controlDir, entry.file)), label: `tokens[${index}]` }));
  const accessByToken = new Map(
    config.tokens.map((entry, index) => [`tokens[${index}]`, entry.profile === undefined ? defaultAccess : profileAccess(config, permissions, entry.profile, ` (tokens[${index}] in ${GATEWAY_CONFIG_FILE})`)] as const),
  );
  const principalByToken = new Map(config.tokens.flatMap((entry, index) => (entry.principal !== undefined ? [[`tokens[${index}]`, entry.principal] as const] : [])));
  const gateway = createGateway({
    controlDir,
    roots,
    downstreams: specs,
    builtins,
    config,
    toolPolicy,
    access: defaultAccess,
    accessByToken,
    principalByToken,
    audit,
    limits: DEFAULT_OUTPUT_LIMITS,
    hooks,
    hookCwd: roots[0]!,
    riskAssessors: builtinRiskAssessors(builtins, roots, controlDir),
    ...(setup.report ? { report: setup.report } : {}),
  });
  return { gateway, problems, tokens };
}

/** The per-call risk the built-ins compute for their own gate, so the gateway's gate sees the same tier. */
function builtinRiskAssessors(builtins: ReadonlySet<string>, roots: readonly string[], controlDir: string): ReadonlyMap<string, RiskAssessor> {
  if (!builtins.has('shell')) return new Map();
  return new Map(Object.entries(shellRiskAssessors({ roots, controlDir })).map(([tool, assess]) => [qualify('shell', tool), assess]));
}

export function defaultControlDir(roots: readonly string[]): string {
  return join(resolve(roots[0]!), '.bulkhead');
}
