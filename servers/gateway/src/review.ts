import { ElicitResultSchema } from '@modelcontextprotocol/sdk/types.js';
import type { CallAuditor, CallState } from '@bulkhead/core';
import type { Catalog, CatalogEntry } from './catalog.js';
import { definitionHash, type PinStore } from './pins.js';

const REVIEW_TIMEOUT_MS = 10 * 60 * 1000;

export interface Review {
  readonly name: string;
  readonly catalog: Catalog;
  readonly pins: PinStore;
  readonly auditor: CallAuditor;
  readonly call: Pick<CallState, 'extra' | 'signal' | 'caller' | 'clientCanElicit'>;
  readonly visible: (entry: CatalogEntry) => boolean;
}

/**
 * Puts a quarantined tool's new definition to the human through elicitation. Only a caller who
 * may see the tool is asked; only the very definition shown is approved; the answer is audited.
 */
export async function reviewQuarantined(review: Review): Promise<CatalogEntry | undefined> {
  const candidate = review.catalog.quarantinedEntry(review.name);
  if (!candidate || !review.visible(candidate) || !review.call.clientCanElicit()) return undefined;
  const { tool, qualified } = candidate;
  const shown = definitionHash(tool);
  const started = performance.now();
  const answer = await review.call.extra.sendRequest(
    {
      method: 'elicitation/create',
      params: {
        mode: 'form',
        message:
          `${qualified} changed its definition since it was approved. Review the new one before it can be used:\n\n` +
          `Title: ${tool.title ?? '(none)'}\nDescription: ${tool.description ?? '(none)'}\nInput schema: ${JSON.stringify(tool.inputSchema)}\n` +
          `Output schema: ${tool.outputSchema ? JSON.stringify(tool.outputSchema) : '(none)'}\nAnnotations: ${JSON.stringify(tool.annotations ?? {})}`,
        requestedSchema: { type: 'object', properties: { approve: { type: 'boolean', title: `Approve the new definition of ${qualified}`, default: false } }, required: ['approve'] },
      },
    },
    ElicitResultSchema,
    { signal: review.call.signal, timeout: REVIEW_TIMEOUT_MS },
  );
  const approved = answer.action === 'accept' && answer.content?.['approve'] === true && review.pins.approve(qualified, shown);
  review.auditor.record({
    tool: `pin:${qualified}`,
    caller: review.call.caller,
    args: { definition_sha256: shown },
    decision: approved ? 'approved' : 'not approved',
    outcome: 'ok',
    durationMs: performance.now() - started,
  });
  if (!approved) return undefined;
  const entry = review.catalog.get(qualified);
  return entry && review.visible(entry) ? entry : undefined;
}
