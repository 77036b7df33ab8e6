import { z } from 'zod';
import { actorField, checkSelf, defineLadderTool, WRITES_LOCAL } from '../context.js';
import { askResult, renderAsk } from '../results.js';
import { answerInput } from '../store/work-queue.js';

const input = answerInput.extend({ actor: actorField });

const output = z.object({ ask: askResult });

export const askAnswer = defineLadderTool({
  name: 'ask_answer',
  title: 'Answer an ask',
  description:
    "Answers an ask you hold, with the fence of your claim: complete, deny, or grant (reviews and approvals only). complete and grant free the asks that depend on it; deny blocks them.",
  input,
  output,
  annotations: WRITES_LOCAL,
  risk: 'medium',
  async call(deps, principal, { actor, ...answer }) {
    checkSelf(principal, actor, 'actor');
    return { ask: await deps.store.answer(answer, principal) };
  },
  render: ({ ask }) => renderAsk(ask),
});
