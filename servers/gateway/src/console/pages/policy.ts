import { html } from 'hono/html';
import { errorMessage, loadYamlFile, neutralizeInvisible, PERMISSIONS_FILE, permissionsSchema, type PermissionGate } from '@bulkhead/core';
import type { CatalogEntry } from '../../catalog.js';
import { pageHref } from '../layout.js';
import type { ConsolePage, ConsoleSources, Html, PageRequest } from '../page.js';

/** The lists in the order the gate tries them: deny wins over always_ask and ask, which win over allow. */
const LISTS = ['deny', 'always_ask', 'ask', 'allow'] as const;

interface PolicyFile {
  readonly file: string;
  /** Where autonomy is set: a line of the file, or that it is the default. */
  readonly autonomySource: string;
  readonly rules: readonly { readonly list: (typeof LISTS)[number]; readonly rule: string; readonly line: number | undefined }[];
}

/** permissions.yaml as written, for the lines of its rules and of autonomy. */
function readPolicyFile(controlDir: string): PolicyFile {
  const loaded = loadYamlFile(controlDir, PERMISSIONS_FILE, permissionsSchema);
  const autonomyLine = loaded.sets(['autonomy']) ? loaded.lineOf(['autonomy']) : undefined;
  return {
    file: loaded.file,
    autonomySource: autonomyLine ? `${loaded.file} line ${autonomyLine}` : loaded.exists ? `the default; ${loaded.file} does not set autonomy` : `the default; there is no ${loaded.file}`,
    rules: LISTS.flatMap((list) => loaded.value[list].map((rule, index) => ({ list, rule, line: loaded.lineOf([list, index]) }))),
  };
}

/** Where a tool's risk tier comes from, in words. */
function tierSource(entry: CatalogEntry): string {
  if (!entry.thirdParty) return 'declared by the built-in server';
  if (entry.annotationsTrusted) return 'from its annotations (bulkhead.yaml trusts them)';
  return 'third-party: medium, its annotations are not trusted (trust: annotations in bulkhead.yaml)';
}

const VERDICT_WORDS = { allow: 'runs without asking', ask: 'asks the human', deny: 'refused' } as const;

function toolRow(entry: CatalogEntry, permissions: PermissionGate): Html {
  const decision = permissions.decide({ qualifiedName: entry.qualified, risk: entry.risk, args: {}, ...(entry.subjectArg ? { subjectArg: entry.subjectArg } : {}) });
  return html`<tr data-tool="${entry.qualified}">
<td><code>${neutralizeInvisible(entry.qualified)}</code></td>
<td class="tier">${entry.risk}<br><span class="muted">${tierSource(entry)}</span></td>
<td class="verdict verdict-${decision.verdict}">${decision.verdict}<br><span class="muted">${VERDICT_WORDS[decision.verdict]}</span></td>
<td class="reason">${decision.reason}</td>
</tr>`;
}

function rulesTable(policy: PolicyFile): Html {
  if (policy.rules.length === 0) return html`<p>${policy.file} lists no rules: every call is decided by its risk tier and autonomy.</p>`;
  return html`<table id="rules">
<thead><tr><th>list</th><th>rule</th><th>where</th></tr></thead>
<tbody>${policy.rules.map((rule) => html`<tr><td>${rule.list}</td><td><code>${rule.rule}</code></td><td>${rule.line ? `${policy.file} line ${rule.line}` : policy.file}</td></tr>`)}</tbody>
</table>`;
}

function render(sources: ConsoleSources, request: PageRequest): Html {
  let policy: PolicyFile;
  try {
    policy = readPolicyFile(sources.controlDir);
  } catch (error) {
    return html`<p class="outcome refused">${errorMessage(error)}</p>`;
  }
  const permissions = sources.permissions;
  const entries = sources.gateway?.catalog.entries() ?? [];
  const held = sources.gateway?.catalog.quarantinedTools().length ?? 0;
  const tools = sources.gateway
    ? html`<h2>Tools</h2>
<p class="muted">The decision for a call whose arguments no argument rule (<code>tool(glob)</code>) names; a rule with an argument decides the calls it matches.</p>
${held > 0 ? html`<p>${held} quarantined tool${held === 1 ? ' is' : 's are'} not listed: ${held === 1 ? 'it is' : 'they are'} refused until approved on the <a href="${pageHref(request.base, { slug: 'quarantine' })}">Quarantine</a> page.</p>` : ''}
<table id="policy">
<thead><tr><th>tool</th><th>risk tier</th><th>decision</th><th>what decides it</th></tr></thead>
<tbody>${entries.map((entry) => toolRow(entry, permissions))}</tbody>
</table>`
    : html`<p class="muted">No gateway serves this console, so its tools are not known here: these are the rules of ${policy.file}. Start the gateway (<code>bulkhead start</code>) to see the decision for each tool.</p>`;
  return html`<section class="card" id="autonomy">
<dl>
<dt>autonomy</dt><dd><strong>${permissions.autonomy}</strong> (${policy.autonomySource})</dd>
<dt>what it means</dt><dd>read_only: low-risk tools run, the rest are refused; supervised: low-risk tools run, medium ask, high are refused; full: all run. deny, always_ask, ask and allow entries decide first.</dd>
</dl>
</section>
${tools}
<h2>Rules of ${PERMISSIONS_FILE}</h2>
${rulesTable(policy)}`;
}

/** Each tool's risk tier and the decision the gate would make, with the file and line that decide it. */
export const policyPage: ConsolePage = {
  slug: 'policy',
  title: 'Policy',
  render,
};
