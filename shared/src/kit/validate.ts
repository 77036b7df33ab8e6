import { z } from 'zod';
import { ToolError } from '../errors.js';

function describeIssue(issue: z.core.$ZodIssue): string {
  const key = issue.path.length > 0 ? `\`${issue.path.map(String).join('.')}\`` : 'arguments';
  if (issue.code === 'unrecognized_keys') return `unknown argument${issue.keys.length > 1 ? 's' : ''} ${issue.keys.map((k) => `\`${k}\``).join(', ')}`;
  if (issue.code === 'invalid_type' && /received undefined/.test(issue.message)) return `${key} is required (${issue.expected})`;
  return `${key}: ${issue.message}`;
}

/** Validates tool arguments, turning zod's report into one line per problem the model can fix. */
export function parseArguments(schema: z.ZodObject, raw: unknown, tool: string): Record<string, unknown> {
  const parsed = schema.safeParse(raw ?? {});
  if (parsed.success) return parsed.data as Record<string, unknown>;
  const problems = parsed.error.issues.map(describeIssue);
  throw new ToolError(`Invalid arguments for ${tool}: ${problems.join('; ')}`, 'invalid_arguments');
}
