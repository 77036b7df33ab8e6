import { z } from 'zod';
import { READ_ONLY_LOCAL } from '@bulkhead/core';
import { defineLadderTool, laneRef, repoField, repoOf } from '../context.js';
import { renderRole, roleGrantResult } from '../results.js';
import { idSchemas } from '../store/work-queue.js';

const input = z.strictObject({
  repo: repoField,
  principal: idSchemas.principal.optional().describe('Only this principal\'s roles'),
  lane_id: laneRef.optional().describe('Only roles on this lane and repository-wide ones'),
});

const output = z.object({ roles: z.array(roleGrantResult) });

export const roleList = defineLadderTool({
  name: 'role_list',
  title: 'Roles of a repository',
  description: 'Who holds which role (owner, coordinator, maintainer, contributor) in a repository, optionally for one principal or one lane.',
  input,
  output,
  annotations: READ_ONLY_LOCAL,
  risk: 'low',
  async call(deps, _principal, args) {
    const roles = await deps.store.listRoles(repoOf(deps, args.repo), { ...(args.principal ? { principal: args.principal } : {}), ...(args.lane_id ? { laneId: args.lane_id } : {}) });
    return { roles };
  },
  render: ({ roles }) => (roles.length === 0 ? 'no roles granted' : roles.map(renderRole).join('\n')),
});
