import { ConfigError, ToolError } from '@bulkhead/core';
import { z } from 'zod';

/**
 * Who may claim and answer an Ask of a kind. `contributor` is every principal; `maintainer` and
 * `coordinator` are roles held on the Ask's lane (maintainer also repo-wide). An owner holds every
 * scope. Scopes do not nest: a lane's coordinator is whoever proposed it, so letting coordinators
 * answer reviews would let anyone review their own changesets by proposing a lane.
 */
export const SCOPES = ['contributor', 'maintainer', 'coordinator'] as const;
export type Scope = (typeof SCOPES)[number];

export const ANSWERS = ['complete', 'deny', 'grant'] as const;
export type Answer = (typeof ANSWERS)[number];

/** Answers that resolve a dependency (the claim statement spells the same list in SQL); `deny` blocks every Ask waiting on it. */
export const RESOLVING_ANSWERS: readonly Answer[] = ['complete', 'grant'];

export const askKindSchema = z
  .object({
    name: z.string().regex(/^[a-z][a-z0-9_]{0,63}$/, 'a kind name is lower_snake_case, at most 64 characters'),
    scope: z.enum(SCOPES),
    answers: z.array(z.enum(ANSWERS)).min(1),
    description: z.string().max(500).default(''),
  })
  .strict();

export type AskKind = z.infer<typeof askKindSchema>;
export type AskKindInput = z.input<typeof askKindSchema>;

/** The kinds every lane understands; `grant` belongs only to reviews and approvals. */
export const BUILT_IN_ASK_KINDS: readonly AskKind[] = [
  { name: 'work', scope: 'contributor', answers: ['complete', 'deny'], description: 'Do a piece of work and report it.' },
  {
    name: 'changeset_review',
    scope: 'maintainer',
    answers: ['grant', 'deny'],
    description: "Review a changeset: grant to approve it, deny to reject it. Only the lane's maintainers answer.",
  },
  {
    name: 'submit_changeset',
    scope: 'coordinator',
    answers: ['complete', 'deny'],
    description: "Commit an approved changeset. Only the lane's coordinators answer.",
  },
  { name: 'resolve_conflict', scope: 'contributor', answers: ['complete', 'deny'], description: 'Rebase or merge a changeset that no longer applies.' },
  { name: 'question', scope: 'contributor', answers: ['complete', 'deny'], description: 'Answer a question; deny when it cannot be answered.' },
];

/** The built-in kinds plus `extra` (from the policy file); an extra kind may not redefine a built-in one. */
export class AskKinds {
  private readonly byName = new Map<string, AskKind>();

  constructor(extra: readonly AskKindInput[] = []) {
    for (const kind of BUILT_IN_ASK_KINDS) this.byName.set(kind.name, kind);
    for (const input of extra) {
      const kind = askKindSchema.parse(input);
      if (this.byName.has(kind.name)) throw new ConfigError(`ask kind ${kind.name} is already defined; choose another name`);
      this.byName.set(kind.name, kind);
    }
  }

  /** The kind, or a refusal naming the kinds that exist. */
  require(name: string): AskKind {
    const kind = this.byName.get(name);
    if (!kind) throw new ToolError(`unknown ask kind ${name}; known kinds: ${this.names().join(', ')}`, 'invalid');
    return kind;
  }

  names(): string[] {
    return [...this.byName.keys()];
  }

  /** Kinds whose scope is among `scopes`: the kinds a principal holding them may claim. */
  namesInScopes(scopes: ReadonlySet<Scope>): string[] {
    return [...this.byName.values()].filter((kind) => scopes.has(kind.scope)).map((kind) => kind.name);
  }
}
