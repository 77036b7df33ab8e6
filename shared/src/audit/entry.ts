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
  /** The pending approval a human decided for this call (or that it waits for), and who decided. */
  approval: z.strictObject({ id: z.string(), by: z.string().optional() }).optional(),
  prev: z.string(),
  hash: z.string(),
});

export type AuditEntry = z.output<typeof auditEntrySchema>;

/** What a call contributes; the log adds seq, time, prev and hash. */
export type AuditRecord = Omit<AuditEntry, 'v' | 'seq' | 'time' | 'prev' | 'hash' | 'args_sha256'>;

const HEX_SHA256 = z.string().regex(/^[0-9a-f]{64}$/);

/**
 * Closes a torn last line (a writer that died mid-write): the next writer appends a newline and
 * this record, which names the torn bytes by length and hash and chains on from the last whole
 * entry, so the chain goes on in the same file and the verifier can tell a crash from an edit.
 */
export const tornRecordSchema = z.strictObject({
  v: z.literal(1),
  seq: z.number().int().positive(),
  time: z.string(),
  kind: z.literal('torn'),
  torn_bytes: z.number().int().positive(),
  torn_sha256: HEX_SHA256,
  prev: z.string(),
  hash: z.string(),
});

/**
 * Written when a writer opens a chain while other chains of the namespace exist: their heads
 * (file name: last seq and hash) as they were, so deleting one chain with its head record is
 * found from another.
 */
export const anchorRecordSchema = z.strictObject({
  v: z.literal(1),
  seq: z.number().int().positive(),
  time: z.string(),
  kind: z.literal('anchor'),
  chains: z.record(z.string(), z.strictObject({ seq: z.number().int().nonnegative(), hash: z.string() })),
  prev: z.string(),
  hash: z.string(),
});

export type TornRecord = z.output<typeof tornRecordSchema>;
export type AnchorRecord = z.output<typeof anchorRecordSchema>;
/** Any line of a chain: a call's entry or one of the log's own records. */
export type ChainRecord = AuditEntry | TornRecord | AnchorRecord;
