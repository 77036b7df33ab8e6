import { z } from 'zod';
import { READ_ONLY_LOCAL } from '@bulkhead/core';
import { defineLadderTool, laneRef } from '../context.js';
import { claimableResult, renderAsk } from '../results.js';

const input = z.strictObject({
  lane_id: laneRef,
  kind: z.string().min(1).max(64).optional().describe('Only asks of this kind'),
  limit: z.number().int().min(1).max(500).optional().describe('How many asks (default: the store\'s)'),
});

const output = z.object({ claimable: z.array(claimableResult).describe('Most urgent first, then oldest') });

export const askQueryClaimable = defineLadderTool({
  name: 'ask_query_claimable',
  title: 'Asks you can claim',
  description: "The lane's asks you may claim now: not answered, every dependency answered, in your scope; most urgent first, then oldest.",
  input,
  output,
  annotations: READ_ONLY_LOCAL,
  risk: 'low',
  async call(deps, principal, args) {
    const claimable = await deps.store.queryClaimable(args.lane_id, principal, { ...(args.kind ? { kind: args.kind } : {}), ...(args.limit ? { limit: args.limit } : {}) });
    return { claimable };
  },
  render: ({ claimable }) => (claimable.length === 0 ? 'nothing you can claim in this lane now' : claimable.map((entry) => `${renderAsk(entry.ask)}\n  (${entry.why})`).join('\n\n')),
});
