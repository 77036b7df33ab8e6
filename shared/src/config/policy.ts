import { z } from 'zod';

/** Per-tool switches shared by every server policy: `tools: { grep: { enabled: false } }`. */
export const toolSwitchesSchema = z
  .record(
    z.string().regex(/^[a-z][a-z0-9_]*$/, 'tool names are lower-case words joined by _'),
    z.strictObject({ enabled: z.boolean().default(true).describe('false unregisters the tool: not listed, not callable') }),
  )
  .default({})
  .describe('Per-tool settings, keyed by the plain tool name');

/**
 * The shape every `<server>_policy.yaml` starts from. `enabled: false` registers no tool at all:
 * registration is the switch, there is no second runtime gate.
 */
export function serverPolicySchema<Shape extends z.ZodRawShape>(defaultEnabled: boolean, shape: Shape) {
  return z.strictObject({
    $schema: z.string().optional().describe('Editor hint; ignored'),
    enabled: z.boolean().default(defaultEnabled).describe('false registers none of this server\'s tools'),
    tools: toolSwitchesSchema,
    ...shape,
  });
}

export interface ServerPolicyBase {
  readonly enabled: boolean;
  readonly tools: Readonly<Record<string, { readonly enabled: boolean }>>;
}

export function isToolEnabled(policy: ServerPolicyBase, tool: string): boolean {
  return policy.enabled && (policy.tools[tool]?.enabled ?? true);
}
