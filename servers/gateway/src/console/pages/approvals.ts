import { html } from 'hono/html';
import { z } from 'zod';
import { APPROVAL_DECISION_TITLES, APPROVAL_DECISIONS, ApprovalError, type ApprovalDecision, type PendingApproval } from '@bulkhead/core';
import { actionHref } from '../layout.js';
import type { ConsolePage, Html, PageAction, PageRequest } from '../page.js';

/** Decided approvals shown under the pending ones. */
const RECENT_SHOWN = 20;

/** The buttons' words; each button's tooltip is the decision's full title. */
const BUTTON_LABELS: Readonly<Record<ApprovalDecision, string>> = {
  once: 'Allow once',
  session: 'Allow for this session',
  always: 'Always allow',
  deny: 'Deny',
};

/** What a decision did, in the words of the outcome line. */
const DONE: Readonly<Record<ApprovalDecision, string>> = {
  once: 'Allowed once',
  session: 'Allowed for the rest of its session',
  always: 'Always allowed',
  deny: 'Denied',
};

const decideForm = z.object({
  id: z.string().regex(/^[a-z0-9]{1,64}$/, 'an approval id is lower-case letters and digits'),
  decision: z.enum(APPROVAL_DECISIONS),
});

/** A time as the page shows it: the ISO text, and how long ago. */
function when(iso: string, now: number): Html {
  const seconds = Math.round((now - Date.parse(iso)) / 1000);
  const ago = Number.isNaN(seconds) ? '' : seconds < 60 ? `${Math.max(seconds, 0)} s ago` : seconds < 3600 ? `${Math.floor(seconds / 60)} min ago` : `${Math.floor(seconds / 3600)} h ago`;
  return html`<time datetime="${iso}">${iso}</time>${ago ? html` <span class="muted">(${ago})</span>` : ''}`;
}

/** A diff's lines, each marked: added, removed, hunk header, or context. */
function diff(text: string): Html {
  return html`<pre class="diff">${text.split('\n').map((line) => {
    if (/^(\+\+\+|---)( |$)/.test(line) || line.startsWith('@@') || line.startsWith('```')) return html`<span class="hunk">${line}</span>`;
    if (line.startsWith('+')) return html`<span class="add">${line}</span>`;
    if (line.startsWith('-')) return html`<span class="del">${line}</span>`;
    return html`${line}\n`;
  })}</pre>`;
}

function preview(approval: PendingApproval): Html {
  if (!approval.preview) return html``;
  if ('failed' in approval.preview) return html`<h3>What will happen</h3><p class="muted">The tool could not preview this call: ${approval.preview.failed}</p>`;
  return html`<h3>What will happen (the tool's preview)</h3>${diff(approval.preview.text)}`;
}

/** The preview's paragraph of the prompt, which the page shows marked up on its own. */
const PROMPT_PREVIEW = /\n\nWhat will happen \(the tool's preview\):\n[\s\S]*?(?=\n\n|$)/;

/** The prompt as the page shows it: without the preview when the page shows that itself. */
function promptText(approval: PendingApproval): string {
  return approval.preview && 'text' in approval.preview ? approval.prompt.replace(PROMPT_PREVIEW, '') : approval.prompt;
}

function decisionForm(approval: PendingApproval, request: PageRequest): Html {
  return html`<form method="post" action="${actionHref(request.base, approvalsPage, 'decide')}" class="decisions">
<input type="hidden" name="csrf" value="${request.csrf}">
<input type="hidden" name="id" value="${approval.id}">
${approval.offers.map((decision) => html`<button type="submit" name="decision" value="${decision}" class="${decision === 'deny' ? 'deny' : 'allow'}" title="${APPROVAL_DECISION_TITLES[decision]}">${BUTTON_LABELS[decision]}</button>`)}
</form>`;
}

function pendingCard(approval: PendingApproval, request: PageRequest, now: number): Html {
  return html`<section class="card approval" id="approval-${approval.id}" data-approval="${approval.id}">
<h2>${approval.tool} <span class="muted">· ${approval.id}</span></h2>
<dl>
<dt>Caller</dt><dd>${approval.caller}${approval.principal ? ` (token of ${approval.principal})` : ''}</dd>
<dt>Asked</dt><dd>${when(approval.created, now)}</dd>
<dt>Held by</dt><dd>${approval.server} (pid ${approval.pid})${approval.state === 'timed_out' ? ' · the call gave up waiting: an identical retry finds your decision' : ' · the call is waiting'}</dd>
<dt>Asked because</dt><dd>${approval.reason}</dd>
${approval.risk ? html`<dt>Risk</dt><dd>${approval.risk}</dd>` : ''}
</dl>
<h3>The call</h3>
<pre class="prompt">${promptText(approval)}</pre>
${approval.rest.length
  ? html`<details id="rest-${approval.id}"><summary>The values the prompt cuts, in full (${approval.rest.length})</summary>${approval.rest.map((value) => html`<pre>${value}</pre>`)}</details>`
  : ''}
${preview(approval)}
${decisionForm(approval, request)}
</section>`;
}

function decidedRow(approval: PendingApproval, now: number): Html {
  const decision = approval.decision!;
  return html`<tr data-approval="${approval.id}">
<td>${approval.tool}<br><span class="muted">${approval.id}</span></td>
<td>${DONE[decision.decision]}${decision.rule ? html`<br><span class="muted">rule: ${decision.rule}</span>` : ''}</td>
<td>${decision.by}</td>
<td>${when(decision.at, now)}</td>
<td>${approval.used ? 'ran' : decision.decision === 'deny' ? 'refused' : approval.state === 'timed_out' ? 'waiting for the identical retry' : 'not run yet'}</td>
</tr>`;
}

const decide: PageAction = async (sources, form, request) => {
  const parsed = decideForm.safeParse(Object.fromEntries(form));
  if (!parsed.success) return { ok: false, message: `Not decided: ${parsed.error.issues.map((issue) => `${issue.path.join('.')}: ${issue.message}`).join('; ')}` };
  const { id, decision } = parsed.data;
  try {
    const decided = sources.approvals.decide(id, decision, request.actor);
    const rule = decided.decision?.rule;
    return { ok: true, message: `${DONE[decision]}: ${decided.tool} (${id})${rule ? `; added ${rule}` : ''}.` };
  } catch (error) {
    // Decided in the terminal meanwhile, expired, not offered: the human reads why.
    if (error instanceof ApprovalError) return { ok: false, message: `Not decided: ${error.message}` };
    throw error;
  }
};

export const approvalsPage: ConsolePage = {
  slug: '',
  title: 'Approvals',
  live: true,
  render(sources, request) {
    const now = Date.now();
    const pending = sources.approvals.pending();
    const decided = sources.approvals.recent(RECENT_SHOWN * 2).filter((approval) => approval.decision !== undefined).slice(0, RECENT_SHOWN);
    return html`<section id="pending">
${pending.length
  ? pending.map((approval) => pendingCard(approval, request, now))
  : html`<p class="muted" id="none-pending">No call is waiting for approval. Calls that permissions.yaml decides <code>ask</code> appear here when the client cannot ask you itself.</p>`}
</section>
<h2>Recently decided</h2>
${decided.length
  ? html`<table id="decided"><thead><tr><th>Tool</th><th>Decision</th><th>By</th><th>When</th><th>Call</th></tr></thead><tbody>${decided.map((approval) => decidedRow(approval, now))}</tbody></table>`
  : html`<p class="muted">Nothing decided yet.</p>`}`;
  },
  actions: { decide },
};
