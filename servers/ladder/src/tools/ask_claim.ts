import { z } from 'zod';
import { actorField, checkSelf, defineLadderTool, WRITES_LOCAL } from '../context.js';
import { claimResult, renderAsk } from '../results.js';
import { claimOptions, idSchemas } from '../store/work-queue.js';

const input = claimOptions.extend({ ask_id: idSchemas.askId, actor: actorField });

const output = z.object({ claim: claimResult });

export const askClaim = defineLadderTool({
  name: 'ask_claim',
  title: 'Claim an ask',
  description:
    'Claims an ask for a lease (default 15 minutes; claiming again while you hold it renews the lease). Keep the fence it returns: ask_answer and ask_release need it. Refused with the reason when the ask waits on another, is held by someone else, or needs a scope you lack.',
  input,
  output,
  annotations: WRITES_LOCAL,
  risk: 'medium',
  async call(deps, principal, { actor, ask_id, ...lease }) {
    checkSelf(principal, actor, 'actor');
    return { claim: await deps.store.claim(ask_id, principal, lease) };
  },
  render: ({ claim }) => `${claim.renewed ? 'renewed' : 'claimed'} with fence ${claim.fence} until ${claim.lease_until}\n${renderAsk(claim.ask)}`,
});
