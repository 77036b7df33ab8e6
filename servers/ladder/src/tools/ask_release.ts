import { z } from 'zod';
import { actorField, checkSelf, defineLadderTool, WRITES_LOCAL } from '../context.js';
import { askResult, renderAsk } from '../results.js';
import { idSchemas } from '../store/work-queue.js';

const input = z.strictObject({
  ask_id: idSchemas.askId,
  fence: z.number().int().min(1).describe('The fence your claim returned'),
  actor: actorField,
});

const output = z.object({ ask: askResult });

export const askRelease = defineLadderTool({
  name: 'ask_release',
  title: 'Release a claim',
  description: 'Gives a claimed ask back to the queue without answering it (counts as an attempt). Needs the fence of your claim.',
  input,
  output,
  annotations: WRITES_LOCAL,
  risk: 'medium',
  async call(deps, principal, args) {
    checkSelf(principal, args.actor, 'actor');
    return { ask: await deps.store.release(args.ask_id, args.fence, principal) };
  },
  render: ({ ask }) => `released ${renderAsk(ask)}`,
});
