import { html } from 'hono/html';
import { z } from 'zod';
import { AUDIT_POLICY_FILE, auditPolicySchema, CallAuditor, errorMessage, loadYamlFile, neutralizeInvisible } from '@bulkhead/core';
import { GATEWAY_NAMESPACE } from '../../gateway.js';
import { definitionLines, sideBySide } from '../definition-diff.js';
import type { ActionOutcome, ConsolePage, ConsoleSources, Html, PageRequest } from '../page.js';
import { actionForm } from '../page-parts.js';
import { definitionHash, PinStore, shownDefinition, PINS_FILE, type PinnedDefinition, type PinnedVersion, type PinView } from '../../pins.js';
import { describeQuarantine } from '../../treatment.js';

const SLUG = 'quarantine';

/** A tool waiting for a human, with both definitions as the page shows them. */
interface Waiting {
  readonly qualified: string;
  /** Why it waits, in one line. */
  readonly why: string;
  readonly findings: readonly string[];
  /** The definition in use, when there is one (a changed tool). */
  readonly before?: PinnedDefinition;
  readonly after: PinnedDefinition;
  /** The hash of `after`: what Approve approves, and nothing else. */
  readonly pendingSha256: string;
}

/** Why a tool waits, from its pin alone (no gateway runs to have scanned it). */
function pinnedWhy(view: PinView, pending: PinnedVersion): string {
  if (!view.inUse) return `${view.qualified} was held back on first sight (its definition looked suspicious, or approve_new_tools in bulkhead.yaml holds new tools back)`;
  if (view.inUse.sha256 === pending.sha256) return `${view.qualified} has a definition that looked suspicious to the scanner and no human approved it yet`;
  return `${view.qualified} changed its definition since it was approved`;
}

function fromPin(view: PinView, pending: PinnedVersion): Waiting {
  const changed = view.inUse !== undefined && view.inUse.sha256 !== pending.sha256;
  return {
    qualified: view.qualified,
    why: pinnedWhy(view, pending),
    findings: [],
    ...(changed ? { before: view.inUse!.definition } : {}),
    after: pending.definition,
    pendingSha256: pending.sha256,
  };
}

/** The live gateway's quarantine first (with the scanner's findings), then what only the pin file says waits. */
function waitingTools(sources: ConsoleSources, pins: PinStore): Waiting[] {
  const live = (sources.gateway?.catalog.quarantinedTools() ?? []).map((held): Waiting => {
    const inUse = held.reason === 'changed' ? pins.view(held.entry.qualified)?.inUse : undefined;
    return {
      qualified: held.entry.qualified,
      why: describeQuarantine(held),
      findings: held.entry.findings,
      ...(inUse ? { before: inUse.definition } : {}),
      after: shownDefinition(held.entry.definition),
      pendingSha256: definitionHash(held.entry.definition),
    };
  });
  const seen = new Set(live.map((tool) => tool.qualified));
  const pinned = pins.waiting().flatMap((view) => (view.pending && !seen.has(view.qualified) ? [fromPin(view, view.pending)] : []));
  return [...live, ...pinned];
}

function cell(side: { line: number; text: string; changed: boolean } | undefined, mark: 'del' | 'add'): Html {
  if (!side) return html`<td class="ln"></td><td class="code"></td>`;
  return html`<td class="ln">${side.line}</td><td class="code">${side.changed ? html`<span class="${mark}">${side.text}</span>` : side.text}</td>`;
}

function definitionView(tool: Waiting): Html {
  if ('missing' in tool.after) return html`<p class="muted">The definition waiting cannot be shown here: ${tool.after.missing}.</p>`;
  const after = definitionLines(tool.after.kept);
  if (!tool.before) {
    return html`<h3>The definition waiting for approval</h3><pre class="definition">${after.join('\n')}</pre>`;
  }
  if ('missing' in tool.before) {
    return html`<p class="muted">The approved definition cannot be shown: ${tool.before.missing}.</p><h3>The new definition</h3><pre class="definition">${after.join('\n')}</pre>`;
  }
  const diff = sideBySide(definitionLines(tool.before.kept), after);
  return html`<p>${diff.removed} line${diff.removed === 1 ? '' : 's'} removed, ${diff.added} added (marked).</p>
<table class="side-by-side diff">
<colgroup><col class="ln"><col><col class="ln"><col></colgroup>
<thead><tr><th colspan="2">approved definition</th><th colspan="2">new definition</th></tr></thead>
<tbody>${diff.rows.map((row) => html`<tr>${cell(row.before, 'del')}${cell(row.after, 'add')}</tr>`)}</tbody>
</table>`;
}

function toolCard(tool: Waiting, request: PageRequest): Html {
  const fields = { tool: tool.qualified, sha256: tool.pendingSha256 };
  return html`<section class="card quarantined" data-tool="${tool.qualified}">
<h2><code>${tool.qualified}</code></h2>
<p class="why">${neutralizeInvisible(tool.why)}</p>
${tool.findings.length > 0 ? html`<p>What looks aimed at the model:</p><ul class="findings">${tool.findings.map((finding) => html`<li>${neutralizeInvisible(finding)}</li>`)}</ul>` : ''}
${definitionView(tool)}
${'missing' in tool.after
  ? html`<p class="muted">The console approves only a definition it has shown; <code>bulkhead approve ${tool.qualified}</code> approves it without.</p>`
  : html`<p class="muted">Approving accepts exactly this definition (sha256 <code>${tool.pendingSha256}</code>); if it changes again first, the approval is refused.</p>`}
<div class="decisions">
${'missing' in tool.after ? '' : actionForm(request, { slug: SLUG }, 'approve', fields, html`<button type="submit" class="allow">Approve this definition</button>`)}
${actionForm(request, { slug: SLUG }, 'keep', fields, html`<button type="submit" class="deny">Keep quarantined</button>`)}
</div>
</section>`;
}

function render(sources: ConsoleSources, request: PageRequest): Html {
  const waiting = waitingTools(sources, new PinStore(sources.controlDir));
  const source = sources.gateway ? '' : html`<p class="muted">No gateway serves this console: these are the tools ${PINS_FILE} says wait for a human (the scanner's findings are shown when the gateway runs).</p>`;
  if (waiting.length === 0) return html`${source}<p>No tool is quarantined.</p>`;
  return html`${source}${waiting.map((tool) => toolCard(tool, request))}`;
}

const reviewedSchema = z.object({
  tool: z.string().min(1).max(200),
  sha256: z.string().regex(/^[0-9a-f]{64}$/),
});

/**
 * The gateway's audit log, where an approval through elicitation is recorded too (`pin:<tool>`):
 * in the gateway's process the very chain it writes, in `bulkhead console` a chain of its own.
 */
function pinAuditor(controlDir: string): CallAuditor {
  return new CallAuditor(controlDir, GATEWAY_NAMESPACE, loadYamlFile(controlDir, AUDIT_POLICY_FILE, auditPolicySchema).value);
}

async function approve(sources: ConsoleSources, form: URLSearchParams, request: PageRequest): Promise<ActionOutcome> {
  const reviewed = reviewedSchema.safeParse({ tool: form.get('tool'), sha256: form.get('sha256') });
  if (!reviewed.success) return { ok: false, message: 'The form did not say which tool and definition to approve; nothing was approved.' };
  const { tool, sha256 } = reviewed.data;
  let auditor: CallAuditor;
  try {
    auditor = pinAuditor(sources.controlDir);
  } catch (error) {
    return { ok: false, message: `The approval could not be audited (${errorMessage(error)}); nothing was approved.` };
  }
  const pins = new PinStore(sources.controlDir);
  const waiting = pins.view(tool)?.pending;
  if (waiting === undefined) return { ok: false, message: `${tool} has no definition waiting for approval (it was approved already, or is no longer quarantined); nothing was approved.` };
  const pending = waiting.sha256;
  if ('missing' in waiting.definition && pending === sha256) {
    return { ok: false, message: `The console approves only a definition it has shown, and this one cannot be shown (${waiting.definition.missing}); nothing was approved. \`bulkhead approve ${tool}\` approves it without.` };
  }
  const audited = { tool: `pin:${tool}`, caller: request.actor, args: { definition_sha256: sha256 }, durationMs: 0 };
  if (pending !== sha256 || !pins.approve(tool, sha256)) {
    const message = `The definition of ${tool} changed again since this page was shown; nothing was approved. Review the definition shown now.`;
    auditor.record({ ...audited, decision: 'not approved', outcome: 'error', error: message });
    return { ok: false, message };
  }
  auditor.record({ ...audited, decision: 'approved', outcome: 'ok' });
  return { ok: true, message: `Approved the definition of ${tool} that was shown (sha256 ${sha256.slice(0, 12)}…); the gateway uses it from now on.` };
}

async function keep(sources: ConsoleSources, form: URLSearchParams, request: PageRequest): Promise<ActionOutcome> {
  const reviewed = reviewedSchema.safeParse({ tool: form.get('tool'), sha256: form.get('sha256') });
  if (!reviewed.success) return { ok: false, message: 'The form did not say which tool to keep quarantined.' };
  const { tool, sha256 } = reviewed.data;
  try {
    pinAuditor(sources.controlDir).record({ tool: `pin:${tool}`, caller: request.actor, args: { definition_sha256: sha256 }, decision: 'not approved', outcome: 'ok', durationMs: 0 });
  } catch (error) {
    return { ok: false, message: `The decision could not be audited (${errorMessage(error)}).` };
  }
  return { ok: true, message: `${tool} stays quarantined: its calls are refused until its definition is approved.` };
}

/**
 * Tools whose definition changed, looks suspicious or is new, with the difference, to approve or
 * keep quarantined. Not live: a definition that changed again must not replace the one a human is
 * reading (the form approves the hash of what was rendered, and a refusal says it changed).
 */
export const quarantinePage: ConsolePage = {
  slug: SLUG,
  title: 'Quarantine',
  render,
  actions: { approve, keep },
};
