import { z } from 'zod';

/** The JSON Schema editors use for completion of one policy file. */
export function policyJsonSchema(schema: z.ZodType, title: string): Record<string, unknown> {
  const generated = z.toJSONSchema(schema, { io: 'input', unrepresentable: 'any' }) as Record<string, unknown>;
  return { ...generated, title };
}
