import * as crypto from 'node:crypto';
import { auditEntrySchema } from './entry.js';

export const GENESIS_HASH = '0'.repeat(64);

/**
 * JSON with sorted keys, so the same entry always hashes the same. Objects are built in one
 * string with a plain loop: it runs for every audited call, and the entry/filter/map arrays of
 * the obvious version were most of its cost.
 */
export function canonicalJson(value: unknown): string {
  if (value === null || typeof value !== 'object') return JSON.stringify(value) ?? 'null';
  if (Array.isArray(value)) return `[${value.map(canonicalJson).join(',')}]`;
  return canonicalObject(value as Record<string, unknown>);
}

/** `canonicalJson` of an object, with `known` canonical texts used as they are for those keys. */
function canonicalObject(value: Record<string, unknown>, known?: Readonly<Record<string, string>>): string {
  // The default sort compares UTF-16 code units, the order canonical JSON has always used.
  const keys = Object.keys(value).sort();
  let out = '{';
  for (const key of keys) {
    const inner = value[key];
    if (inner === undefined) continue;
    if (out.length > 1) out += ',';
    out += `${JSON.stringify(key)}:${known?.[key] ?? canonicalJson(inner)}`;
  }
  return `${out}}`;
}

/**
 * Hex SHA-256 of a text. Node 20.12+ hashes in one call, at about half the cost of a Hash object
 * (it runs twice per audit line); Node 20.11, which the engines range still admits, lacks it, so it
 * is looked up on the module rather than imported by name.
 */
export const sha256: (text: string) => string =
  typeof crypto.hash === 'function' ? (text) => crypto.hash('sha256', text) : (text) => crypto.createHash('sha256').update(text).digest('hex');

/** The fields of an entry's body (all but `hash`) in canonical order, each with its quoted name. */
const BODY_FIELDS = Object.keys(auditEntrySchema.shape)
  .filter((key) => key !== 'hash')
  .sort()
  .map((key) => ({ key, quoted: `${JSON.stringify(key)}:` }));
const BODY_KEYS: ReadonlySet<string> = new Set(BODY_FIELDS.map((field) => field.key));

/**
 * `canonicalJson(body)` for a body with no fields but an entry's, walking the fields in their
 * known order rather than sorting its keys for every line; undefined for any other body.
 */
function canonicalBody(body: Record<string, unknown>, canonicalArgs: string): string | undefined {
  for (const key in body) if (!BODY_KEYS.has(key)) return undefined;
  let out = '{';
  for (const { key, quoted } of BODY_FIELDS) {
    const value = body[key];
    if (value === undefined) continue;
    if (out.length > 1) out += ',';
    out += quoted + (key === 'args' ? canonicalArgs : canonicalJson(value));
  }
  return `${out}}`;
}

/**
 * Hash of an entry (without its own `hash` field) chained to the previous one. `canonicalArgs`
 * is `canonicalJson(body.args)` when the caller already has it (it hashed the arguments).
 */
export function entryHash(prev: string, body: Record<string, unknown>, canonicalArgs?: string): string {
  const canonical = canonicalArgs === undefined ? canonicalObject(body) : (canonicalBody(body, canonicalArgs) ?? canonicalObject(body, { args: canonicalArgs }));
  return sha256(`${prev}\n${canonical}`);
}
