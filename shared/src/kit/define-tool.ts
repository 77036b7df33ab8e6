import type { z } from 'zod';
import type { Risk } from '../permissions/schema.js';
import type { ToolContext } from './context.js';
import type { ToolReply } from './results.js';

/** All four hints are required so no tool ships with a guessed default. */
export interface ToolAnnotations {
  readonly readOnlyHint: boolean;
  readonly destructiveHint: boolean;
  readonly idempotentHint: boolean;
  readonly openWorldHint: boolean;
}

/** The hints of a tool that only reads local state. */
export const READ_ONLY_LOCAL: ToolAnnotations = { readOnlyHint: true, destructiveHint: false, idempotentHint: true, openWorldHint: false };

export type InputSchema = z.ZodObject;
export type OutputSchema = z.ZodObject;

export interface ToolDefinition<Caps, I extends InputSchema = InputSchema, O extends OutputSchema | undefined = OutputSchema | undefined> {
  readonly name: string;
  readonly title: string;
  readonly description: string;
  readonly input: I;
  readonly output?: O;
  readonly annotations: ToolAnnotations;
  readonly risk: Risk;
  /** The argument a bare permission matcher such as `fs:read_file(src/**)` compares against. */
  readonly subjectArg?: Extract<keyof z.output<I>, string>;
  readonly run: (args: z.output<I>, ctx: ToolContext<Caps>) => Promise<ToolReply<O extends OutputSchema ? z.input<O> : undefined>>;
  /**
   * What the call would do, as text for the human asked to approve it (a diff). It must change
   * nothing; it runs only when the permission gate asks, and a gateway in front asks for it too.
   */
  readonly preview?: (args: z.output<I>, ctx: ToolContext<Caps>) => Promise<string>;
}

/** Erased form the server kit stores; the definition's own types are checked at `defineTool`. */
export interface AnyToolDefinition<Caps> {
  readonly name: string;
  readonly title: string;
  readonly description: string;
  readonly input: InputSchema;
  readonly output?: OutputSchema;
  readonly annotations: ToolAnnotations;
  readonly risk: Risk;
  readonly subjectArg?: string;
  readonly run: (args: Record<string, unknown>, ctx: ToolContext<Caps>) => Promise<ToolReply<unknown>>;
  readonly preview?: (args: Record<string, unknown>, ctx: ToolContext<Caps>) => Promise<string>;
}

export function defineTool<Caps, I extends InputSchema, O extends OutputSchema | undefined = undefined>(
  definition: ToolDefinition<Caps, I, O>,
): AnyToolDefinition<Caps> {
  return definition as unknown as AnyToolDefinition<Caps>;
}
