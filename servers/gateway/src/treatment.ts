import type { GateMode } from '@bulkhead/core';
import type { CatalogEntry, QuarantinedTool } from './catalog.js';

const VERDICT_WORDS = { allow: 'runs without asking', ask: 'asks before running', deny: 'refused' } as const;

/** What a third-party tool's annotations count for, in words. */
function annotationWords(entry: CatalogEntry): string {
  if (entry.annotationsTrusted) return `third-party tool, ${entry.risk} risk by its annotations (bulkhead.yaml trusts them)`;
  const claims = entry.definition.annotations;
  const ignored = claims?.readOnlyHint === true ? 'readOnlyHint ignored; ' : '';
  return `third-party tool, its annotations are not trusted (${ignored}\`trust: annotations\` in bulkhead.yaml to use them)`;
}

/**
 * How the gateway will treat a call of a third-party tool, and why, for search results: a model (or
 * a user) who sees a tool ask or refuse learns whether bulkhead.yaml's trust or permissions.yaml
 * decided it. Undefined for built-ins (their tier is their own) and behind another gate.
 */
export function treatmentOf(entry: CatalogEntry, gate: GateMode): string | undefined {
  if (!entry.thirdParty || gate.kind !== 'self') return undefined;
  const decision = gate.permissions.decide({ qualifiedName: entry.qualified, risk: entry.risk, args: {} });
  const byAutonomy = decision.reason.startsWith(`${entry.qualified} is ${entry.risk} risk and autonomy is `);
  const why = byAutonomy ? `${annotationWords(entry)}; autonomy is ${gate.permissions.autonomy}` : decision.reason;
  const destructive = !entry.annotationsTrusted && entry.definition.annotations?.destructiveHint === true ? '; note: its server marks it destructive (destructiveHint)' : '';
  return `${VERDICT_WORDS[decision.verdict]}: ${why}${destructive}`;
}

/** Why a definition (a tool's or a prompt's: `noun`) is held, in the words of the quarantine notes. */
export function quarantineReason(reason: QuarantinedTool['reason'], findings: readonly string[], noun: 'tool' | 'prompt'): string {
  const suspicious = findings.join('; ');
  return reason === 'changed'
    ? `its definition changed since it was approved${suspicious ? `; the new one is suspicious: ${suspicious}` : ''}`
    : reason === 'suspicious'
      ? `suspicious definition: ${suspicious}`
      : `a new third-party ${noun}, and approve_new_tools in bulkhead.yaml holds new ${noun}s back`;
}

/** Why a tool waits for a human and how the human lets it through, in one line. */
export function describeQuarantine({ entry, reason }: QuarantinedTool): string {
  const name = entry.qualified;
  return `${name} is quarantined (${quarantineReason(reason, entry.findings, 'tool')}); a human approves it with \`bulkhead approve ${name}\``;
}
