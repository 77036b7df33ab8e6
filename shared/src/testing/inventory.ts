import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { z } from 'zod';
import type { AnyToolDefinition } from '../kit/define-tool.js';

const ANNOTATIONS = ['readOnlyHint', 'destructiveHint', 'idempotentHint', 'openWorldHint'] as const;

export interface InventoryOptions {
  /** Folder holding one `<tool>.ts` file per tool. */
  readonly toolsDir: string;
  /** A read-only server may expose only readOnlyHint tools. */
  readonly readOnly: boolean;
}

/**
 * The checks every server runs on its own tools; an empty list means the surface is sound.
 */
export function inventoryProblems(tools: readonly AnyToolDefinition<never>[], options: InventoryOptions): string[] {
  const problems: string[] = [];
  const seen = new Set<string>();
  for (const tool of tools) {
    const name = tool.name;
    if (seen.has(name)) problems.push(`${name}: defined twice`);
    seen.add(name);
    if (!/^[a-z][a-z0-9_]*$/.test(name) || name.length > 64) problems.push(`${name}: name must match ^[a-z][a-z0-9_]*$ (at most 64)`);
    if (!existsSync(join(options.toolsDir, `${name}.ts`)) && !existsSync(join(options.toolsDir, `${name}.js`))) {
      problems.push(`${name}: no file ${name}.ts in ${options.toolsDir}`);
    }
    if (tool.description.trim().length < 20) problems.push(`${name}: description is missing or too short`);
    for (const key of ANNOTATIONS) {
      if (typeof tool.annotations[key] !== 'boolean') problems.push(`${name}: annotation ${key} is not set`);
    }
    if (options.readOnly && !tool.annotations.readOnlyHint) problems.push(`${name}: a read-only server exposes a tool without readOnlyHint`);
    const schema = z.toJSONSchema(tool.input, { io: 'input', unrepresentable: 'any' }) as Record<string, unknown>;
    if (schema['anyOf'] || schema['oneOf']) problems.push(`${name}: input schema has a top-level anyOf/oneOf`);
    for (const [key, field] of Object.entries(tool.input.shape as Record<string, z.ZodType>)) {
      if (!field.description) problems.push(`${name}: argument ${key} has no .describe()`);
    }
  }
  return problems;
}

/** A stable, reviewable description of the public surface for snapshot tests. */
export function surfaceSnapshot(tools: readonly AnyToolDefinition<never>[]): Record<string, unknown> {
  return Object.fromEntries(
    tools.map((tool) => [
      tool.name,
      {
        title: tool.title,
        risk: tool.risk,
        annotations: tool.annotations,
        input: z.toJSONSchema(tool.input, { io: 'input', unrepresentable: 'any' }),
        ...(tool.output ? { output: z.toJSONSchema(tool.output, { io: 'output', unrepresentable: 'any' }) } : {}),
      },
    ]),
  );
}
