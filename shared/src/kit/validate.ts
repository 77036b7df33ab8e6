import { z } from 'zod';
import { ToolError } from '../errors.js';

function describeIssue(issue: z.core.$ZodIssue): string {
  const key = issue.path.length > 0 ? `\`${issue.path.map(String).join('.')}\`` : 'arguments';
  if (issue.code === 'unrecognized_keys') return `unknown argument${issue.keys.length > 1 ? 's' : ''} ${issue.keys.map((k) => `\`${k}\``).join(', ')}`;
  if (issue.code === 'invalid_type' && /received undefined/.test(issue.message)) return `${key} is required (${issue.expected})`;
  return `${key}: ${issue.message}`;
}

/** Deepest nesting of arrays and objects an arguments object may have (the arguments object itself is level 1). */
export const MAX_ARGUMENT_DEPTH = 64;

export interface ArgumentBounds {
  /** Most levels of nested arrays and objects. */
  readonly maxDepth?: number;
  /** Most bytes the arguments may take as JSON (the server's request limit); counted approximately from below, never above. */
  readonly maxBytes?: number;
}

function pathText(path: readonly (string | number)[]): string {
  const shown = path.slice(0, 6).map(String).join('.');
  return path.length > 6 ? `${shown}.…` : shown || 'arguments';
}

/**
 * Refuses, before any schema sees them, arguments nested deeper than `maxDepth` or larger than
 * `maxBytes`: a schema walk (zod, JSON Schema) and the tools recurse, and 100,000 levels end in
 * "Maximum call stack size exceeded". The walk here is iterative and stops at the first excess.
 */
export function checkArgumentBounds(raw: unknown, tool: string, bounds: ArgumentBounds = {}): void {
  const maxDepth = bounds.maxDepth ?? MAX_ARGUMENT_DEPTH;
  const maxBytes = bounds.maxBytes ?? Number.POSITIVE_INFINITY;
  let bytes = 0;
  const stack: { value: unknown; depth: number; path: (string | number)[] }[] = [{ value: raw, depth: 1, path: [] }];
  while (stack.length > 0) {
    const { value, depth, path } = stack.pop()!;
    if (typeof value === 'string') bytes += value.length + 2;
    else if (value === null || typeof value !== 'object') bytes += 8;
    else {
      if (depth > maxDepth) {
        throw new ToolError(`Invalid arguments for ${tool}: \`${pathText(path)}\` nests deeper than ${maxDepth} levels of arrays and objects; send a flatter value`, 'invalid_arguments');
      }
      bytes += 2;
      if (Array.isArray(value)) value.forEach((item, i) => stack.push({ value: item, depth: depth + 1, path: path.length < 7 ? [...path, i] : path }));
      else
        for (const [key, item] of Object.entries(value)) {
          bytes += key.length + 4;
          stack.push({ value: item, depth: depth + 1, path: path.length < 7 ? [...path, key] : path });
        }
    }
    if (bytes > maxBytes) {
      throw new ToolError(`Invalid arguments for ${tool}: the arguments are larger than this server's request limit (${maxBytes} bytes); send less per call`, 'invalid_arguments');
    }
  }
}

/** Validates tool arguments, turning zod's report into one line per problem the model can fix. */
export function parseArguments(schema: z.ZodObject, raw: unknown, tool: string, bounds?: ArgumentBounds): Record<string, unknown> {
  checkArgumentBounds(raw, tool, bounds);
  const parsed = schema.safeParse(raw ?? {});
  if (parsed.success) return parsed.data as Record<string, unknown>;
  const problems = parsed.error.issues.map(describeIssue);
  throw new ToolError(`Invalid arguments for ${tool}: ${problems.join('; ')}`, 'invalid_arguments');
}
