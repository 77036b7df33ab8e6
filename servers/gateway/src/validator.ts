import { Ajv2020 } from 'ajv/dist/2020.js';
import type { ValidateFunction } from 'ajv';
import type { Tool } from '@modelcontextprotocol/sdk/types.js';
import { ToolError } from '@bulkhead/core';

/** A short list of what a tool expects, for error messages and search results. */
export function parameterSummary(tool: Tool): string {
  const properties = (tool.inputSchema.properties ?? {}) as Record<string, { type?: unknown; description?: string }>;
  const required = new Set(tool.inputSchema.required ?? []);
  const parts = Object.entries(properties).map(([name, schema]) => {
    const type = Array.isArray(schema.type) ? schema.type.join('|') : typeof schema.type === 'string' ? schema.type : 'any';
    return `${name} (${type}${required.has(name) ? ', required' : ''})`;
  });
  return parts.length > 0 ? parts.join(', ') : 'no arguments';
}

/** Checks arguments against a downstream tool's own JSON Schema before it is called. */
export class ArgumentValidator {
  private readonly ajv = new Ajv2020({ allErrors: true, strict: false, validateFormats: false, addUsedSchema: false });
  private readonly compiled = new WeakMap<Tool, ValidateFunction>();

  validate(qualified: string, tool: Tool, args: unknown): Record<string, unknown> {
    let check = this.compiled.get(tool);
    if (!check) {
      try {
        // Checked under 2020-12 whatever dialect it names (draft-07 schemas read the same for
        // arguments), and without its `$id`, which two servers may share.
        const { $schema: _dialect, $id: _id, ...schema } = tool.inputSchema as Record<string, unknown>;
        check = this.ajv.compile(schema);
      } catch (error) {
        throw new ToolError(`${qualified} has an input schema that cannot be checked (${(error as Error).message}); its server must fix it`, 'bad_schema');
      }
      this.compiled.set(tool, check);
    }
    const value = args ?? {};
    if (check(value)) return value as Record<string, unknown>;
    const problems = (check.errors ?? []).map((error) => {
      const where = error.instancePath ? `\`${error.instancePath.slice(1).replace(/\//g, '.')}\`` : 'arguments';
      if (error.keyword === 'additionalProperties') return `unknown argument \`${String(error.params['additionalProperty'])}\``;
      if (error.keyword === 'required') return `\`${String(error.params['missingProperty'])}\` is required`;
      return `${where} ${error.message ?? 'is invalid'}`;
    });
    throw new ToolError(`Invalid arguments for ${qualified}: ${problems.join('; ')}. Expected: ${parameterSummary(tool)}.`, 'invalid_arguments');
  }
}
