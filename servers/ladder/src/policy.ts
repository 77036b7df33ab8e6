import { z } from 'zod';
import { ConfigError, serverPolicySchema } from '@bulkhead/core';
import { askKindSchema } from './store/ask-kinds.js';
import { checkedUrl, isPostgresUrl } from './store/pg/database.js';
import { ANONYMOUS } from './store/tokens.js';
import { idSchemas } from './store/work-queue.js';

export const LADDER_POLICY_FILE = 'ladder_policy.yaml';

/** Tools that only read and do not depend on who calls: the ones a public repository may answer without a token. */
export const PUBLIC_READ_TOOLS = ['ladder_read', 'ladder_tree', 'ladder_search', 'lane_get', 'lane_list', 'role_list'] as const;

/** The largest pool a server may keep; PostgreSQL's own default max_connections is 100. */
const MAX_POOL_SIZE = 100;

const ladderPolicyFields = serverPolicySchema(true, {
  database: z
    .string()
    .min(1)
    .default('ladder.db')
    .describe(
      'Where rungs, lanes, asks, roles and tokens are kept: a SQLite file (a relative path is resolved against the control-plane folder), or a PostgreSQL database as postgres://user@host:port/database (or postgresql://), never with a password in it',
    ),
  password_file: z
    .string()
    .min(1)
    .optional()
    .describe(
      "A file whose first line is the PostgreSQL password (relative to the control-plane folder); without it the password comes from PGPASSWORD, else libpq's ~/.pgpass (or the file PGPASSFILE names). Only with a postgres:// database",
    ),
  pool_size: z.number().int().min(1).max(MAX_POOL_SIZE).optional().describe('Connections a server keeps open to its PostgreSQL database (default: 10). Only with a postgres:// database'),
  actor: z
    .string()
    .min(1)
    .max(200)
    .optional()
    .describe('The principal every call over stdio acts as (default: the name of the OS user running the server); the first to serve a default repository with no owner becomes its owner'),
  lease_ms: z.number().int().min(1000).max(86_400_000).default(15 * 60_000).describe('How long a claim holds an ask when the claim names no lease'),
  max_attempts: z.number().int().min(1).max(100).default(5).describe('Claims an ask may lapse or be released before it expires'),
  extra_kinds: z.array(askKindSchema).default([]).describe('Ask kinds beyond the built-in ones: name, the scope that may claim and answer it, the answers it allows'),
  public_read: z
    .strictObject({
      repos: z.array(idSchemas.repo).default([]).describe('Repositories (owner/name) whose reading tools answer on the tool endpoint without a token (default: none)'),
      tools: z
        .array(z.enum(PUBLIC_READ_TOOLS))
        .default(['lane_list', 'ladder_tree'])
        .describe(`The tools those repositories answer without a token, acting as ${ANONYMOUS}; only reading tools: ${PUBLIC_READ_TOOLS.join(', ')}`),
      max_concurrent_calls: z.number().int().min(1).max(1000).default(4).describe('Calls without a token at once; more are answered 503 with Retry-After'),
      max_body_bytes: z.number().int().min(2).max(16 * 1024 * 1024).default(64 * 1024).describe('The largest body a call without a token may send'),
      upload_timeout_ms: z.number().int().min(100).max(600_000).default(10_000).describe('How long a call without a token may take to send its body'),
    })
    .prefault({})
    .describe("zz's public repositories: reading without a token on the HTTP tool endpoint (never on /mcp)"),
  repo: z
    .strictObject({
      name: z.string().min(1).max(200).optional().describe('The repository name calls use when they give none (default: local/<folder name of the git repository>)'),
      root: z.string().min(1).optional().describe('The folder of the git repository the rungs describe (default: the first --root; a relative path is resolved against it)'),
    })
    .prefault({}),
});

/** The message of checkedUrl without the `source: ` it starts with: the config loader names the key itself. */
function urlProblem(url: string): string | undefined {
  const source = 'database';
  try {
    checkedUrl(url, source);
    return undefined;
  } catch (error) {
    if (!(error instanceof ConfigError)) throw error;
    return error.message.startsWith(`${source}: `) ? error.message.slice(source.length + 2) : error.message;
  }
}

/**
 * The policy with the checks that span keys: a PostgreSQL URL is refused with a password in it (the
 * policy file is read by anyone who reads the configuration), and the PostgreSQL-only keys are
 * refused beside a SQLite file rather than silently ignored.
 */
export const ladderPolicySchema = ladderPolicyFields.superRefine((policy, ctx) => {
  if (isPostgresUrl(policy.database)) {
    const problem = urlProblem(policy.database);
    if (problem !== undefined) ctx.addIssue({ code: 'custom', path: ['database'], message: problem });
    return;
  }
  const postgresOnly = { password_file: 'takes no password', pool_size: 'has no connection pool' } as const;
  for (const [key, why] of Object.entries(postgresOnly) as [keyof typeof postgresOnly, string][]) {
    if (policy[key] === undefined) continue;
    ctx.addIssue({
      code: 'custom',
      path: [key],
      message: `only for a PostgreSQL database: database is the SQLite file ${policy.database}, which ${why}; remove ${key}, or set database to postgres://user@host:port/database`,
    });
  }
});

export type LadderPolicy = z.output<typeof ladderPolicySchema>;
