import { z } from 'zod';
import { ToolError } from '@bulkhead/core';
import { actorField, checkSelf, defineLadderTool, laneRef, repoField, repoOf, WRITES_LOCAL } from '../context.js';
import { renderRole, roleGrantResult } from '../results.js';
import { roleGrantInput } from '../store/work-queue.js';

// The store's schema has refinements (which zod cannot extend), so the tool takes its fields and the store checks the rules.
const input = z.strictObject({ ...roleGrantInput.shape, lane_id: laneRef.optional(), repo: repoField, actor: actorField });

const output = z.object({ grant: roleGrantResult });

export const roleGrant = defineLadderTool({
  name: 'role_grant',
  title: 'Grant a role',
  description:
    "Gives a principal a role: owner or contributor on the repository, maintainer on a lane (or repository-wide without lane_id), coordinator on a lane. Only the repository's owners grant roles.",
  input,
  output,
  // Granting the same role twice changes nothing.
  annotations: { ...WRITES_LOCAL, idempotentHint: true },
  risk: 'high',
  async call(deps, principal, { actor, repo, ...grant }) {
    checkSelf(principal, actor, 'actor');
    const checked = roleGrantInput.safeParse({ ...grant, repo: repoOf(deps, repo) });
    if (!checked.success) throw new ToolError(z.prettifyError(checked.error), 'bad_argument');
    return { grant: await deps.store.grantRole(checked.data, principal) };
  },
  render: ({ grant }) => `granted ${renderRole(grant)}`,
});
