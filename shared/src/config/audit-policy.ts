import { z } from 'zod';

export const auditPolicySchema = z.strictObject({
  $schema: z.string().optional().describe('Editor hint; ignored'),
  enabled: z.boolean().default(true).describe('Write one hash-chained JSON line per tool call'),
  receipts: z
    .boolean()
    .default(false)
    .describe('Return an Ed25519-signed receipt in _meta of every successful call (never for denied or failed calls); bulkhead audit key prints the public key'),
  redact_keys: z
    .array(z.string())
    .default([])
    .describe('Extra argument names (case-insensitive substrings) whose values are redacted in the audit log'),
});

export type AuditPolicy = z.output<typeof auditPolicySchema>;
export const AUDIT_POLICY_FILE = 'audit.yaml';
