import { z } from 'zod';
import { ToolError } from '@bulkhead/core';
import { actorField, checkSelf, defineLadderTool, laneRef, repoField, repoOf, WRITES_LOCAL } from '../context.js';
import { roleGrantInput } from '../store/work-queue.js';

// Same fields as role_grant: the store's schema has refinements, so the tool takes its fields and the store checks the rules.
const input = z.strictObject({ ...roleGrantInput.shape, lane_id: laneRef.optional(), repo: repoField, actor: actorField });

const output = z.object({ revoked: z.boolean().describe('false when the principal did not hold that role') });

export const roleRevoke = defineLadderTool({
  name: 'role_revoke',
  title: 'Revoke a role',
  description: "Takes a role back from a principal. Only the repository's owners revoke roles, and the last owner stays.",
  input,
  output,
  annotations: { ...WRITES_LOCAL, destructiveHint: true, idempotentHint: true },
  risk: 'high',
  async call(deps, principal, { actor, repo, ...grant }) {
    checkSelf(principal, actor, 'actor');
    const checked = roleGrantInput.safeParse({ ...grant, repo: repoOf(deps, repo) });
    if (!checked.success) throw new ToolError(z.prettifyError(checked.error), 'bad_argument');
    return { revoked: await deps.store.revokeRole(checked.data, principal) };
  },
  render: ({ revoked }) => (revoked ? 'revoked' : 'nothing to revoke: the principal did not hold that role'),
});
