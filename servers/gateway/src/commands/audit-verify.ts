import { join } from 'node:path';
import { AUDIT_POLICY_FILE, auditPolicySchema, ConfigError, loadYamlFile, verifyAuditFolder, type AuditReport } from '@bulkhead/core';

/**
 * `bulkhead audit verify [FILE...]`: the hash chain of each named file, or of every log in the
 * control-plane folder's audit/. No logs yet is an answer, not a failure (exit 0, one line): the
 * folder is made by the first audited call.
 */
export function auditVerify(controlDir: string, files: readonly string[]): AuditReport {
  const report = verifyAuditFolder(join(controlDir, 'audit'), files);
  if (report.checked > 0 || !auditingOff(controlDir)) return report;
  return { ...report, lines: report.lines.map((line) => `${line} (auditing is off: ${AUDIT_POLICY_FILE} has enabled: false)`) };
}

/**
 * Whether audit.yaml turns auditing off, for the hint above only: a broken audit.yaml is reported
 * by the commands that run with it (start, doctor), not by this one.
 */
function auditingOff(controlDir: string): boolean {
  try {
    return !loadYamlFile(controlDir, AUDIT_POLICY_FILE, auditPolicySchema).value.enabled;
  } catch (error) {
    if (error instanceof ConfigError) return false;
    throw error;
  }
}
