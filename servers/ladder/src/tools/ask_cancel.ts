import { z } from 'zod';
import { actorField, checkSelf, defineLadderTool, WRITES_LOCAL } from '../context.js';
import { askResult, renderAsk } from '../results.js';
import { idSchemas } from '../store/work-queue.js';

const input = z.strictObject({
  ask_id: idSchemas.askId,
  reason: z.string().max(2000).optional().describe('Why, kept in the ask\'s history'),
  actor: actorField,
});

const output = z.object({ ask: askResult });

export const askCancel = defineLadderTool({
  name: 'ask_cancel',
  title: 'Cancel an ask',
  description: 'Withdraws an ask that is not answered yet (its poster or the lane\'s coordinators may). Asks that depend on it are reported as blocked from then on.',
  input,
  output,
  annotations: { ...WRITES_LOCAL, destructiveHint: true },
  risk: 'medium',
  async call(deps, principal, args) {
    checkSelf(principal, args.actor, 'actor');
    return { ask: await deps.store.cancel(args.ask_id, principal, args.reason) };
  },
  render: ({ ask }) => `cancelled ${renderAsk(ask)}`,
});
