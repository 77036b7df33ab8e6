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
    for (const where of unboundedFields(schema)) problems.push(`${name}: ${where}`);
  }
  return problems;
}

/** z.json(): any JSON value, whose size and depth the core checks before any schema. */
function isFreeJson(node: Record<string, unknown>): boolean {
  const options = node['anyOf'];
  if (!Array.isArray(options)) return false;
  const types = new Set(options.map((option) => (option as Record<string, unknown>)['type']));
  return ['string', 'number', 'boolean', 'null', 'array', 'object'].every((type) => types.has(type));
}

/**
 * Every string, array and record in an input JSON Schema without a bound (maxLength, maxItems,
 * maxProperties): the places a huge argument would reach the tool. A string given by enum or
 * const is bounded by its values. Free-form JSON (a schema that says nothing of its type) is
 * bounded by the core's depth and size check, which runs before any schema.
 */
export function unboundedFields(schema: unknown, at = 'input'): string[] {
  const found: string[] = [];
  const walk = (node: unknown, path: string): void => {
    if (!node || typeof node !== 'object') return;
    const s = node as Record<string, unknown>;
    const types = Array.isArray(s['type']) ? (s['type'] as unknown[]) : [s['type']];
    if (types.includes('string') && s['maxLength'] === undefined && s['enum'] === undefined && s['const'] === undefined) found.push(`${path} is a string without maxLength (.max())`);
    if (types.includes('array') && s['maxItems'] === undefined) found.push(`${path} is an array without maxItems (.max())`);
    const extra = s['additionalProperties'];
    if (isFreeJson(s)) return;
    const names = s['propertyNames'] as Record<string, unknown> | undefined;
    if (types.includes('object') && extra && typeof extra === 'object' && s['maxProperties'] === undefined && names?.['enum'] === undefined) {
      found.push(`${path} is a record without maxProperties (a size check)`);
    }
    if (s['properties'] && typeof s['properties'] === 'object') for (const [key, inner] of Object.entries(s['properties'] as Record<string, unknown>)) walk(inner, `${path}.${key}`);
    if (s['items']) walk(s['items'], `${path}[]`);
    if (Array.isArray(s['prefixItems'])) s['prefixItems'].forEach((inner, i) => walk(inner, `${path}[${i}]`));
    if (extra && typeof extra === 'object') walk(extra, `${path}{}`);
    for (const key of ['anyOf', 'oneOf', 'allOf'] as const) if (Array.isArray(s[key])) (s[key] as unknown[]).forEach((inner) => walk(inner, path));
    if (s['$defs'] && typeof s['$defs'] === 'object') for (const [key, inner] of Object.entries(s['$defs'] as Record<string, unknown>)) walk(inner, `${path}#${key}`);
  };
  walk(schema, at);
  return found;
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
