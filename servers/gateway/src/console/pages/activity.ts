import { join } from 'node:path';
import { html } from 'hono/html';
import { formatBytes, neutralizeInvisible, OUTCOMES, truncateLine } from '@bulkhead/core';
import { ChainVerifier, recentCalls, TAIL_RECORDS, type CallRecord } from '../audit-reader.js';
import { pageHref } from '../layout.js';
import type { ConsolePage, ConsoleSources, PageRequest } from '../page.js';
import { timeText } from '../page-parts.js';

/** Rows shown at most: the newest calls that pass the filter. */
export const ACTIVITY_ROWS = 200;
const MAX_ERROR_SHOWN = 300;

/** Text filters match anywhere, ignoring case; decision and outcome match whole. */
const TEXT_FILTERS = ['tool', 'server', 'caller'] as const;
const EXACT_FILTERS = ['decision', 'outcome'] as const;
type Filter = (typeof TEXT_FILTERS)[number] | (typeof EXACT_FILTERS)[number];

/** One verifier per control-plane folder, so its cache lives as long as the console. */
const verifiers = new Map<string, ChainVerifier>();
function verifierFor(controlDir: string): ChainVerifier {
  let verifier = verifiers.get(controlDir);
  if (!verifier) verifiers.set(controlDir, (verifier = new ChainVerifier(controlDir)));
  return verifier;
}

function filtersOf(query: URLSearchParams): Map<Filter, string> {
  const filters = new Map<Filter, string>();
  for (const key of [...TEXT_FILTERS, ...EXACT_FILTERS]) {
    const value = query.get(key)?.trim();
    if (value) filters.set(key, value);
  }
  return filters;
}

function matches(record: CallRecord, filters: ReadonlyMap<Filter, string>): boolean {
  for (const [key, wanted] of filters) {
    const value = record[key];
    if ((TEXT_FILTERS as readonly string[]).includes(key) ? !value.toLowerCase().includes(wanted.toLowerCase()) : value !== wanted) return false;
  }
  return true;
}

function durationText(ms: number): string {
  return ms < 1000 ? `${ms} ms` : `${(ms / 1000).toFixed(1)} s`;
}

/** A client names itself (the caller) and a server words its errors: invisible characters are written out. */
const shown = (text: string) => neutralizeInvisible(text);

function row(record: CallRecord) {
  return html`<tr>
<td class="nowrap">${timeText(record.time)}</td>
<td>${shown(record.server)}</td>
<td><code>${shown(record.tool)}</code></td>
<td>${shown(record.caller)}</td>
<td class="decision">${shown(record.decision)}</td>
<td class="outcome-${record.outcome}">${record.outcome}${record.error ? html`<br><span class="muted">${shown(truncateLine(record.error, MAX_ERROR_SHOWN))}</span>` : ''}</td>
<td class="nowrap">${durationText(record.duration_ms)}</td>
<td class="nowrap">${formatBytes(record.bytes_out)}</td>
<td>${record.approval ? html`<code>${shown(record.approval.id)}</code>${record.approval.by ? html`<br><span class="muted">by ${shown(record.approval.by)}</span>` : ''}` : ''}</td>
<td class="muted">${record.chain} #${record.seq}</td>
</tr>`;
}

function selectOf(name: Filter, values: readonly string[], chosen: string | undefined) {
  return html`<select name="${name}" id="filter-${name}"><option value="">any</option>${values.map((value) => html`<option${value === chosen ? html` selected` : ''}>${value}</option>`)}</select>`;
}

function render(sources: ConsoleSources, request: PageRequest) {
  const auditDir = join(sources.controlDir, 'audit');
  const status = verifierFor(sources.controlDir).status();
  const all = recentCalls(auditDir);
  const filters = filtersOf(request.query);
  const shown = all.filter((record) => matches(record, filters));
  const decisions = [...new Set(all.map((record) => record.decision))].sort();
  return html`<section class="card" id="chains">
<h2>Audit chains</h2>
${status.chains.length === 0 && status.other.length === 0
  ? html`<p class="muted">No audit logs in ${auditDir} yet: no call has been audited.</p>`
  : html`<table>
<thead><tr><th>chain</th><th>status</th><th>what the verifier says</th></tr></thead>
<tbody>${status.chains.map((chain) => html`<tr data-chain="${chain.chain}"><td>${chain.chain}</td><td class="chain-status">${chain.verified ? 'verified' : 'broken'}</td><td>${chain.report}</td></tr>`)}
${status.other.map((line) => html`<tr><td></td><td class="chain-status">broken</td><td>${line}</td></tr>`)}</tbody>
</table>`}
</section>
<form method="get" action="${pageHref(request.base, { slug: 'activity' })}" class="filters">
${TEXT_FILTERS.map((key) => html`<label>${key} <input name="${key}" id="filter-${key}" value="${filters.get(key) ?? ''}"></label> `)}
<label>decision ${selectOf('decision', decisions, filters.get('decision'))}</label>
<label>outcome ${selectOf('outcome', OUTCOMES, filters.get('outcome'))}</label>
<button type="submit">Filter</button>
</form>
<p class="muted">${shown.length === 0 ? 'No calls' : `${Math.min(shown.length, ACTIVITY_ROWS)} of the ${shown.length} calls`}${filters.size > 0 ? ' that match' : ''} among the newest ${TAIL_RECORDS} records of each chain, newest first.</p>
${shown.length > 0
  ? html`<table id="activity">
<thead><tr><th>time</th><th>server</th><th>tool</th><th>caller</th><th>decision</th><th>outcome</th><th>duration</th><th>size</th><th>approval</th><th>chain</th></tr></thead>
<tbody>${shown.slice(0, ACTIVITY_ROWS).map(row)}</tbody>
</table>`
  : ''}`;
}

/** Calls as they happen, from the audit logs of the control-plane folder, with each chain's verification. */
export const activityPage: ConsolePage = {
  slug: 'activity',
  title: 'Activity',
  live: true,
  render,
};
