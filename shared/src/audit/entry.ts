import { z } from 'zod';

export const OUTCOMES = ['ok', 'error', 'denied', 'cancelled'] as const;
export type Outcome = (typeof OUTCOMES)[number];

export const auditEntrySchema = z.object({
  v: z.literal(1),
  seq: z.number().int().positive(),
  time: z.string(),
  server: z.string(),
  tool: z.string(),
  caller: z.string(),
  args_sha256: z.string(),
  args: z.unknown(),
  decision: z.string(),
  outcome: z.enum(OUTCOMES),
  error: z.string().optional(),
  duration_ms: z.number(),
  bytes_out: z.number().int().nonnegative(),
  prev: z.string(),
  hash: z.string(),
});

export type AuditEntry = z.output<typeof auditEntrySchema>;

/** What a call contributes; the log adds seq, time, prev and hash. */
export type AuditRecord = Omit<AuditEntry, 'v' | 'seq' | 'time' | 'prev' | 'hash' | 'args_sha256'>;
