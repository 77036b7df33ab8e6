import { z } from 'zod';

export const RISKS = ['low', 'medium', 'high'] as const;
export type Risk = (typeof RISKS)[number];

export const AUTONOMY_LEVELS = ['read_only', 'supervised', 'full'] as const;
export type Autonomy = (typeof AUTONOMY_LEVELS)[number];

const patternList = (what: string) =>
  z
    .array(z.string().min(1))
    .default([])
    .describe(`${what}: qualified-name globs (fs:*, *:read_*, a bare namespace), optionally with an argument matcher such as shell:run_shell(git status*) or fs:read_file(path=src/**)`);

/** Half an hour: a held call keeps its client, its connection and a slot of the server that long at most. */
export const MAX_APPROVAL_WAIT_MS = 30 * 60 * 1000;

export const permissionsSchema = z.strictObject({
  $schema: z.string().optional().describe('Editor hint; ignored'),
  autonomy: z
    .enum(AUTONOMY_LEVELS)
    .default('supervised')
    .describe('read_only: low risk runs, the rest is denied; supervised: low runs, medium asks, high is denied; full: everything runs'),
  allow: patternList('Calls that run without asking'),
  ask: patternList('Calls put to the human first (MCP elicitation)'),
  deny: patternList('Calls that never run'),
  always_ask: patternList('Calls that ask even under autonomy full'),
  approval_wait_ms: z
    .number()
    .int()
    .min(0)
    .max(MAX_APPROVAL_WAIT_MS)
    .default(120_000)
    .describe('How long a call the client cannot confirm (no MCP elicitation) waits for a human to decide its pending approval; 0 answers at once with the approval id'),
});

export type Permissions = z.output<typeof permissionsSchema>;
export const PERMISSIONS_FILE = 'permissions.yaml';
