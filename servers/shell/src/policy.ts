import { z } from 'zod';
import { serverPolicySchema } from '@bulkhead/core';

export const SHELL_POLICY_FILE = 'shell_policy.yaml';

const MIB = 1024 * 1024;

const commandRule = z.string().trim().min(1).max(500);

/** Variables that would run code the classifier never saw: bash start-up files, traced prompts, exported functions, preloaded libraries. */
const RUNS_CODE_BEFORE_THE_COMMAND = /^(BASH_ENV|ENV|SHELLOPTS|BASHOPTS|PS4|PROMPT_COMMAND|IFS|GLOBIGNORE|BASH_FUNC_.*|LD_.*)$/;

export const shellLimitsSchema = z
  .strictObject({
    default_timeout_ms: z.number().int().min(100).max(600_000).default(120_000).describe('A command without timeout_ms is stopped after this long'),
    max_timeout_ms: z.number().int().min(100).max(600_000).default(600_000).describe('The largest timeout_ms a call may ask for'),
    max_output_bytes: z.number().int().min(0).max(64 * MIB).default(32 * 1024).describe('Output kept from one command (stdout and stderr together); 0 keeps it all'),
    max_processes: z.number().int().min(8).max(65_536).default(256).describe('Processes one command may have alive at once (a fork bomb stops here)'),
    kill_grace_ms: z.number().int().min(0).max(60_000).default(2_000).describe('After SIGTERM, a command has this long before SIGKILL'),
    tmpfs_max_bytes: z.number().int().min(MIB).max(64 * 1024 * MIB).default(1024 * MIB).describe('Bytes each in-memory folder of the sandbox (/tmp, /var/tmp, /dev/shm, the emptied home) may hold'),
    max_background_tasks: z.number().int().min(0).max(1_000).default(100).describe('Background tasks running at once; 0 turns run_in_background off'),
    task_log_max_bytes: z.number().int().min(64 * 1024).max(1024 * MIB).default(16 * MIB).describe('Bytes of output a background task\'s log keeps'),
  })
  .prefault({});

export const shellPolicySchema = serverPolicySchema(false, {
  sandbox: z
    .enum(['bubblewrap', 'none'])
    .default('bubblewrap')
    .describe('bubblewrap: the system read-only, the roots read-write, a private /tmp, the control-plane folder read-only; none: commands run on the host as the server user (only by explicit choice)'),
  network: z.boolean().default(false).describe('Commands in the sandbox may use the network'),
  env_passthrough: z
    .array(
      z
        .string()
        .regex(/^[A-Za-z_][A-Za-z0-9_]*$/, 'must be an environment variable name')
        .refine((name) => !RUNS_CODE_BEFORE_THE_COMMAND.test(name), 'makes bash or the dynamic loader run code the parsed command does not show (BASH_ENV, ENV, SHELLOPTS, BASHOPTS, PS4, PROMPT_COMMAND, IFS, BASH_FUNC_*, LD_*), so it is never passed'),
    )
    .default([])
    .describe('Variables of the server\'s environment passed to commands besides PATH, HOME, LANG, LC_* and TERM=dumb'),
  allow_commands: z.array(commandRule).default([]).describe('Parsed commands counted as low risk, word by word: "npm test", "git push *"'),
  deny_commands: z.array(commandRule).default([]).describe('Parsed commands never run, wherever they appear in a command line: "rm -rf *", "git push *"'),
  project_commands: z.array(commandRule).default([]).describe('Project commands counted as medium risk besides the known test runners, builds and formatters'),
  limits: shellLimitsSchema,
});

export type ShellPolicy = z.output<typeof shellPolicySchema>;
export type ShellLimits = ShellPolicy['limits'];
