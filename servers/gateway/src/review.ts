import { ElicitResultSchema } from '@modelcontextprotocol/sdk/types.js';
import type { CallAuditor, CallState } from '@bulkhead/core';
import type { Catalog, CatalogEntry } from './catalog.js';
import { definitionHash, type PinStore, type QuarantineReason } from './pins.js';

const REVIEW_TIMEOUT_MS = 10 * 60 * 1000;

const REVIEW_HEADINGS: Record<QuarantineReason, (qualified: string) => string> = {
  changed: (qualified) => `${qualified} changed its definition since it was approved. Review the new one before it can be used:`,
  suspicious: (qualified) => `${qualified} has a definition that looks aimed at the model (listed below). Review it before it can be used:`,
  new: (qualified) => `${qualified} is a new third-party tool, and new tools wait for approval (approve_new_tools). Review it before it can be used:`,
};

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
  const held = review.catalog.quarantinedTool(review.name);
  if (!held || !review.visible(held.entry) || !review.call.clientCanElicit()) return undefined;
  // The human reads the definition with invisible characters written out; what is approved is the server's own.
  const { tool, definition, qualified, findings } = held.entry;
  const shown = definitionHash(definition);
  const started = performance.now();
  const answer = await review.call.extra.sendRequest(
    {
      method: 'elicitation/create',
      params: {
        mode: 'form',
        message:
          `${REVIEW_HEADINGS[held.reason](qualified)}\n\n` +
          `Title: ${tool.title ?? '(none)'}\nDescription: ${tool.description ?? '(none)'}\nInput schema: ${JSON.stringify(tool.inputSchema)}\n` +
          `Output schema: ${tool.outputSchema ? JSON.stringify(tool.outputSchema) : '(none)'}\nAnnotations: ${JSON.stringify(tool.annotations ?? {})}` +
          (findings.length ? `\n\nWhat looks aimed at the model:\n${findings.map((finding) => `- ${finding}`).join('\n')}` : ''),
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
