import { z } from 'zod';
import { AUTONOMY_LEVELS, principalSchema } from '@bulkhead/core';

export const GATEWAY_CONFIG_FILE = 'bulkhead.yaml';
export const TOOL_POLICY_FILE = 'tool_policy.yaml';

/**
 * What a user may trust a third-party server with, each granted per server in bulkhead.yaml:
 * annotations (its readOnlyHint may lower the risk tier), descriptions (not scanned or
 * quarantined as suspicious), results (not wrapped as untrusted content or redacted), paths (its
 * path-like arguments skip the default deny of the protected set). Built-ins have every grant.
 */
export const TRUST_GRANTS = ['annotations', 'descriptions', 'results', 'paths'] as const;
export type TrustGrant = (typeof TRUST_GRANTS)[number];

/** The compartments Bulkhead ships, by namespace. */
export const BUILTIN_NAMESPACES = ['fs', 'fs_write', 'shell', 'web', 'git', 'ladder'] as const;

const serverEntry = z
  .strictObject({
    enabled: z.boolean().default(true).describe('false leaves the server out entirely'),
    command: z.string().min(1).optional().describe('Program of a third-party stdio server'),
    args: z.array(z.string()).default([]).describe('Its arguments (for a built-in: extra flags)'),
    env: z.record(z.string(), z.string()).default({}).describe('Extra environment variables for the child'),
    cwd: z.string().optional().describe('Working folder of the child (relative to the first root)'),
    url: z.url().optional().describe('Streamable HTTP endpoint of a remote server'),
    headers: z.record(z.string(), z.string()).default({}).describe('HTTP headers for the remote server (an Authorization header, say)'),
    start_timeout_ms: z.number().int().min(100).max(600_000).optional().describe('This server\'s own start_timeout_ms (default: the top-level one)'),
    trust: z
      .union([z.enum([...TRUST_GRANTS, 'all']), z.array(z.enum(TRUST_GRANTS))])
      .default([])
      .describe('What this third-party server is trusted with: annotations, descriptions, results, paths (one, a list, or all); none by default'),
  })
  .refine((entry) => !(entry.command && entry.url), { message: 'give either command (stdio) or url (HTTP), not both' });

export const gatewayConfigSchema = z.strictObject({
  $schema: z.string().optional().describe('Editor hint; ignored'),
  servers: z
    .record(
      z
        .string()
        .regex(/^[a-z][a-z0-9_]*$/, 'a namespace is lower-case letters, digits and _ (it prefixes tool names)')
        .refine((name) => !name.includes('__'), 'a namespace may not contain __ (it separates namespace and tool on the wire)')
        // With the two rules above, `ns__tool` splits at its first __ only one way, so no two tools share a wire name.
        .refine((name) => !name.endsWith('_'), {
          error: (issue) => {
            const name = String(issue.input);
            const stem = name.replace(/_+$/, '');
            return `a namespace may not end in _ (${name} + status and ${stem} + ${'_'.repeat(name.length - stem.length)}status would both be ${name}__status on the wire)`;
          },
        })
        .refine((name) => name !== 'gateway', 'gateway is reserved for the meta tools'),
      serverEntry,
    )
    // prefault, not default: zod 4 hands a default back unparsed, so the entries' own defaults (enabled) would be missing.
    .prefault(Object.fromEntries(BUILTIN_NAMESPACES.map((ns) => [ns, {}])))
    .describe('Downstream servers by namespace: a built-in compartment (fs, fs_write, shell, web, git, ladder) needs no command; any other needs command or url'),
  call_timeout_ms: z.number().int().min(1000).max(3_600_000).default(300_000).describe('A downstream call is abandoned after this long'),
  start_timeout_ms: z
    .number()
    .int()
    .min(100)
    .max(600_000)
    .default(30_000)
    .describe('A downstream that has not answered initialize and listed its tools by then is stopped, reported and retried later'),
  list_wait_ms: z
    .number()
    .int()
    .min(0)
    .max(60_000)
    .default(5_000)
    .describe('tools/list and the search tools wait at most this long for servers on their first start (clients such as Claude Desktop never re-list); 0 answers at once'),
  quarantine_suspicious: z
    .boolean()
    .default(true)
    .describe('A third-party tool whose name, description or schema looks aimed at the model (hidden instructions, invisible characters, other servers\' tools, secret files) waits for bulkhead approve'),
  approve_new_tools: z.boolean().default(false).describe('Every third-party tool seen for the first time waits for bulkhead approve'),
  restart: z
    .strictObject({
      budget: z.number().int().min(0).max(1000).default(8).describe('Restarts in a row before a downstream is given up on; a run that stays up stable_ms earns a fresh budget'),
      initial_delay_ms: z.number().int().min(10).max(600_000).default(1000).describe('Wait before the first restart; each next one waits twice as long'),
      max_delay_ms: z.number().int().min(10).max(3_600_000).default(30_000).describe('Longest wait between two restarts'),
      stable_ms: z.number().int().min(1000).max(86_400_000).default(60_000).describe('How long a run must stay up for the restart budget to start again'),
    })
    // prefault, not default: the fields' own defaults must apply when the key is absent.
    .prefault({})
    .describe('How a downstream that stops or fails to start is restarted'),
  console: z
    .strictObject({
      enabled: z.boolean().default(true).describe('The gateway serves its web console on loopback (bulkhead console opens it)'),
      port: z
        .number()
        .int()
        .min(0)
        .max(65_535)
        .default(0)
        .describe("The console's port on 127.0.0.1 when the gateway serves stdio or HTTP beyond loopback (0: any free port); over HTTP on loopback it is on the gateway's port under /console/"),
    })
    // prefault, not default: the fields' own defaults must apply when the key is absent.
    .prefault({})
    .describe('The local web console: approvals, activity, quarantine, servers, trash, policy'),
  max_tools_per_server: z.number().int().min(1).max(100_000).default(1000).describe('Tools taken from one downstream; past it the first ones are used and the rest reported'),
  profiles: z
    .record(
      z.string(),
      z.strictObject({
        namespaces: z.array(z.string()).optional().describe('Only these namespaces'),
        tools: z.array(z.string()).optional().describe('Only tools matching these qualified-name globs'),
        autonomy: z.enum(AUTONOMY_LEVELS).optional().describe('At most this autonomy (narrows permissions.yaml, never widens it)'),
      }),
    )
    .default({})
    .describe('Named views (--profile NAME): each narrows what is exposed and the autonomy'),
  tokens: z
    .array(
      z.strictObject({
        file: z.string().min(1).describe('File holding the bearer token (relative to this folder); the token itself never goes in this file'),
        profile: z.string().optional().describe('The profile a client presenting this token gets (none: everything permissions.yaml allows)'),
        principal: principalSchema
          .optional()
          .describe("Who presents this token (an agent's name, 1-200 characters, no control characters): Bulkhead's own compartments act as it (the ladder's actor); none: as their own identity"),
      }),
    )
    .default([])
    .describe('Over HTTP: accepted bearer tokens, each mapped to one profile and, optionally, the principal who presents it'),
});

export type GatewayConfig = z.output<typeof gatewayConfigSchema>;
export type ServerEntry = GatewayConfig['servers'][string];

export const toolPolicySchema = z.strictObject({
  $schema: z.string().optional().describe('Editor hint; ignored'),
  core_tools: z
    .array(z.string())
    .default(['fs:read_file', 'fs:grep', 'fs:glob_files'])
    .describe('Always bound (qualified names or globs); everything else is deferred until load_tools'),
  max_active: z.number().int().min(1).max(200).default(12).describe('Most loaded tools per session; past it the least recently used is unloaded'),
  mode: z
    .enum(['dynamic', 'stable'])
    .default('dynamic')
    .describe('dynamic: load_tools binds tools and the list changes; stable: the list never changes and everything goes through call_tool'),
});

export type ToolPolicy = z.output<typeof toolPolicySchema>;
