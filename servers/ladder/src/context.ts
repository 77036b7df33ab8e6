import { z } from 'zod';
import { structuredReply, ToolError, type AnyToolDefinition, type InputSchema, type OutputSchema, type Risk, type ToolAnnotations } from '@bulkhead/core';
import type { Ladder, LadderRepository } from './ladder/ladder.js';
import { REPO_LANE } from './store/lanes.js';
import { scopedArguments } from './call-scope.js';
import { idSchemas, type WorkQueueStore } from './store/work-queue.js';

/** What a ladder call needs, whatever transport carried it: the stores and the git repository of the rungs. */
export interface LadderDeps {
  readonly store: WorkQueueStore;
  readonly ladder: Ladder;
  /** The repository name a call uses when it gives none. */
  readonly defaultRepo: string;
  /** The git repository behind a repository name; refused for a repository this server has no git for. */
  readonly openRepository: (repo: string, signal?: AbortSignal) => Promise<LadderRepository>;
  /** Tells the client how far a long call got (the kit's ctx.progress); absent outside a tool call. */
  readonly progress?: (message: string) => void;
}

/** What ladder tools receive: the deps and who a call acts as when its transport authenticated nobody. */
export interface LadderCapabilities extends LadderDeps {
  /** The policy's actor: stdio calls, and HTTP calls made with the `--token-file` token, act as it. */
  readonly operator: string;
}

/** A tool's domain logic, given the caller: a bearer token's actor over HTTP, else the operator. */
export type LadderCall<A, R> = (deps: LadderDeps, principal: string, args: A, signal?: AbortSignal) => Promise<R>;

export type LadderTool = AnyToolDefinition<LadderCapabilities>;

export interface LadderToolSpec<I extends InputSchema, O extends OutputSchema> {
  readonly name: string;
  readonly title: string;
  readonly description: string;
  readonly input: I;
  readonly output: O;
  readonly annotations: ToolAnnotations;
  readonly risk: Risk;
  readonly call: LadderCall<z.output<I>, z.input<O>>;
  /** The readable text of a result; the structured part is the result itself. */
  readonly render: (result: z.input<O>) => string;
}

export function defineLadderTool<I extends InputSchema, O extends OutputSchema>(spec: LadderToolSpec<I, O>): LadderTool {
  const { call, render, ...rest } = spec;
  // Erased the way defineTool erases: the spec's own types were checked at this function's signature.
  const erasedCall = call as unknown as LadderCall<Record<string, unknown>, Record<string, unknown>>;
  const erasedRender = render as unknown as (result: Record<string, unknown>) => string;
  return {
    ...rest,
    async run(args, ctx) {
      const principal = ctx.principal ?? ctx.operator;
      const scoped = await scopedArguments(ctx, args, { principal, takesRepo: 'repo' in rest.input.shape, reading: rest.annotations.readOnlyHint });
      const result = await erasedCall(ctx, principal, scoped, ctx.signal);
      return structuredReply(erasedRender(result), result);
    },
  };
}

/** The hints of a tool that changes the ladder's database and nothing outside it. */
export const WRITES_LOCAL: ToolAnnotations = { readOnlyHint: false, destructiveHint: false, idempotentHint: false, openWorldHint: false };

/**
 * A caller may name itself (zz's clients send `actor`), but never someone else: the identity comes
 * from the transport, and an argument that disagrees is a mistake or an impersonation.
 */
export function checkSelf(principal: string, claimed: string | undefined, argument: string): void {
  if (claimed !== undefined && claimed !== principal) {
    throw new ToolError(`${argument} is ${claimed}, but this call is made by ${principal}; leave ${argument} out or give your own identity`, 'forbidden');
  }
}

export function repoOf(deps: LadderDeps, repo: string | undefined): string {
  return repo ?? deps.defaultRepo;
}

/** The optional `actor` argument of writing tools: when given, it must be the caller. */
export const actorField = idSchemas.principal.optional().describe('Your own identity, if your client sends one; any other name is refused');

/** A lane by id, or `_repo`: the repository's standing lane, as zz's clients name it. */
export const laneRef = z
  .string()
  .max(15)
  .regex(/^(lane-[0-9a-f]{10}|_repo)$/, `a lane id looks like lane-0123456789, or ${REPO_LANE} for the repository's standing lane`);

/** `repo` of a call: optional, the server's default repository when absent. */
export const repoField = idSchemas.repo.optional().describe('The repository, as owner/name (default: the repository this server serves)');
