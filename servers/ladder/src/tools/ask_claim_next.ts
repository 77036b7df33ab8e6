import { z } from 'zod';
import { actorField, checkSelf, defineLadderTool, laneRef, WRITES_LOCAL } from '../context.js';
import { claimResult, renderAsk } from '../results.js';
import { claimOptions } from '../store/work-queue.js';

const input = claimOptions.extend({
  lane_id: laneRef,
  kind: z.string().min(1).max(100).optional().describe('Only asks of this kind'),
  actor: actorField,
});

const output = z.object({ claim: claimResult.nullable().describe('null when nothing in the lane is claimable for you now') });

export const askClaimNext = defineLadderTool({
  name: 'ask_claim_next',
  title: 'Claim the most urgent claimable ask',
  description:
    "Claims, in one step, the lane's most urgent ask you may claim now (unanswered, every dependency answered, in your scope; by priority, then age) — what ask_query_claimable followed by ask_claim does, without racing other agents between the two. Keep the fence it returns.",
  input,
  output,
  annotations: WRITES_LOCAL,
  risk: 'medium',
  async call(deps, principal, { actor, lane_id, kind, ...lease }) {
    checkSelf(principal, actor, 'actor');
    const claim = await deps.store.claimNext(lane_id, principal, { ...lease, ...(kind !== undefined ? { kind } : {}) });
    return { claim: claim ?? null };
  },
  render: ({ claim }) => (claim === null ? 'nothing in this lane is claimable for you now' : `claimed with fence ${claim.fence} until ${claim.lease_until}\n${renderAsk(claim.ask)}`),
});
