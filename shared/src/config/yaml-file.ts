import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { LineCounter, parseDocument, isMap, isNode, isScalar, type Document } from 'yaml';
import { z } from 'zod';
import { ConfigError } from '../errors.js';

export type YamlPath = readonly (string | number)[];

/** A validated YAML file that still knows which line each value came from. */
export interface LoadedYaml<T> {
  readonly file: string;
  readonly exists: boolean;
  readonly value: T;
  /** 1-based line of the value at `path`, when the file has one. */
  lineOf(path: YamlPath): number | undefined;
  /** Whether the file itself sets the value at `path` (rather than a default). */
  sets(path: YamlPath): boolean;
}

function describeIssue(issue: z.core.$ZodIssue): string {
  if (issue.code === 'unrecognized_keys') {
    return `unknown key${issue.keys.length > 1 ? 's' : ''} ${issue.keys.map((k) => `\`${k}\``).join(', ')}`;
  }
  if (issue.code === 'invalid_key') return `not allowed as a key: ${issue.issues.map((inner) => inner.message).join('; ')}`;
  if (issue.code === 'invalid_value') {
    return `must be one of ${issue.values.map((v) => JSON.stringify(v)).join(', ')}`;
  }
  return issue.message;
}

function allowedKeysAt(schema: z.ZodType, path: YamlPath): string[] {
  let current: z.ZodType | undefined = schema;
  for (const segment of path) {
    current = unwrap(current);
    if (current instanceof z.ZodObject) current = (current.shape as Record<string, z.ZodType>)[String(segment)];
    else if (current instanceof z.ZodRecord) current = current._zod.def.valueType as z.ZodType;
    else if (current instanceof z.ZodArray) current = current._zod.def.element as z.ZodType;
    else return [];
  }
  current = unwrap(current);
  return current instanceof z.ZodObject ? Object.keys(current.shape) : [];
}

function unwrap(schema: z.ZodType | undefined): z.ZodType | undefined {
  let current = schema;
  while (current instanceof z.ZodDefault || current instanceof z.ZodOptional || current instanceof z.ZodNullable) {
    current = current._zod.def.innerType as z.ZodType;
  }
  return current;
}

function lineLookup(document: Document | undefined, lines: LineCounter) {
  return (path: YamlPath): number | undefined => {
    if (!document) return undefined;
    for (let depth = path.length; depth >= 0; depth--) {
      const parent = depth > 0 ? document.getIn(path.slice(0, depth - 1), true) : undefined;
      const pair = isMap(parent) ? parent.items.find((item) => isScalar(item.key) && item.key.value === path[depth - 1]) : undefined;
      if (pair && isScalar(pair.key) && pair.key.range) return lines.linePos(pair.key.range[0]).line;
      const node = document.getIn(path.slice(0, depth), true);
      if (isNode(node) && node.range) return lines.linePos(node.range[0]).line;
    }
    return undefined;
  };
}

/**
 * Reads `dir/name` as YAML and validates it. A missing file yields the schema's defaults; a bad
 * file throws a ConfigError that names the file, the line, the key and what is allowed.
 */
export function loadYamlFile<S extends z.ZodType>(dir: string, name: string, schema: S): LoadedYaml<z.output<S>> {
  const file = join(dir, name);
  let text: string | undefined;
  try {
    text = readFileSync(file, 'utf8');
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== 'ENOENT') {
      throw new ConfigError(`${file}: cannot be read (${(error as Error).message})`, file);
    }
  }
  const lines = new LineCounter();
  const document = text === undefined ? undefined : parseDocument(text, { lineCounter: lines, prettyErrors: true });
  if (document && document.errors.length > 0) {
    const first = document.errors[0]!;
    const line = first.linePos?.[0]?.line;
    throw new ConfigError(`${file}${line ? ` line ${line}` : ''}: not valid YAML: ${first.message.split('\n')[0]!.replace(/ at line \d+, column \d+:?$/, '')}`, file);
  }
  const raw: unknown = document?.toJS() ?? {};
  const lineOf = lineLookup(document, lines);
  const parsed = schema.safeParse(raw ?? {});
  if (!parsed.success) {
    const problems = parsed.error.issues.map((issue) => {
      const path = issue.path.filter((p): p is string | number => typeof p !== 'symbol');
      const key = path.length > 0 ? `\`${path.join('.')}\`` : 'top level';
      const line = lineOf(path);
      let message = `${key}${line ? ` (line ${line})` : ''}: ${describeIssue(issue)}`;
      if (issue.code === 'unrecognized_keys') {
        const allowed = allowedKeysAt(schema, path);
        if (allowed.length > 0) message += `; allowed keys: ${allowed.join(', ')}`;
      }
      return message;
    });
    throw new ConfigError(`${file}: invalid configuration\n  - ${problems.join('\n  - ')}`, file);
  }
  return { file, exists: text !== undefined, value: parsed.data, lineOf, sets: (path) => document?.hasIn(path) ?? false };
}
