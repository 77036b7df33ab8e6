import { z } from 'zod';

export const HOOKS_FILE = 'hooks.yaml';

const hookEntry = z.strictObject({
  matcher: z.string().min(1).describe('Qualified-name glob of the calls this hook sees (fs_write:*, *:run_shell, a bare namespace)'),
  command: z.string().min(1).describe('Run with /bin/sh -c in the first root; the call comes as JSON on stdin'),
  timeout_ms: z.number().int().min(100).max(600_000).default(10_000).describe('A pre_tool hook that runs longer blocks the call; a post_tool hook is stopped'),
});

export const hooksSchema = z.strictObject({
  $schema: z.string().optional().describe('Editor hint; ignored'),
  pre_tool: z
    .array(hookEntry)
    .default([])
    .describe('Run before a call: exit 2 blocks it with stderr as the reason; JSON {"arguments": {...}} on stdout replaces the arguments'),
  post_tool: z.array(hookEntry).default([]).describe('Run after a call with its result; they cannot change it'),
});

export type HooksConfig = z.output<typeof hooksSchema>;
export type HookEntry = HooksConfig['pre_tool'][number];
