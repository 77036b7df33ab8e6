import { z } from 'zod';
import { actorField, checkSelf, defineLadderTool, laneRef, WRITES_LOCAL } from '../context.js';
import { askResult, renderAsk } from '../results.js';
import { postAskInput } from '../store/work-queue.js';

const input = postAskInput.extend({ lane_id: laneRef, actor: actorField });

const output = z.object({ ask: askResult, replayed: z.boolean().describe('True when an earlier post with the same idempotency_key was returned') });

export const askPost = defineLadderTool({
  name: 'ask_post',
  title: 'Post an ask',
  description:
    "Posts an ask in a lane's queue: kind (work, changeset_review, submit_changeset, resolve_conflict, question, or one the policy declares), title, body, payload, priority (0 most urgent), depends_on (asks that must be answered complete or grant first), assignee. An idempotency_key makes a retried post return the first one.",
  input,
  output,
  annotations: WRITES_LOCAL,
  risk: 'medium',
  async call(deps, principal, { actor, ...ask }) {
    checkSelf(principal, actor, 'actor');
    const posted = await deps.store.postAsk(ask, principal);
    return { ask: posted.ask, replayed: posted.replayed };
  },
  render: ({ ask, replayed }) => `${replayed ? 'already posted (same idempotency_key)' : 'posted'} ${renderAsk(ask)}`,
});
