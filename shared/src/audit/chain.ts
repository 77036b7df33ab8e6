import { createHash } from 'node:crypto';

export const GENESIS_HASH = '0'.repeat(64);

/** JSON with sorted keys, so the same entry always hashes the same. */
export function canonicalJson(value: unknown): string {
  if (value === null || typeof value !== 'object') return JSON.stringify(value) ?? 'null';
  if (Array.isArray(value)) return `[${value.map(canonicalJson).join(',')}]`;
  const entries = Object.entries(value as Record<string, unknown>)
    .filter(([, v]) => v !== undefined)
    .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
  return `{${entries.map(([k, v]) => `${JSON.stringify(k)}:${canonicalJson(v)}`).join(',')}}`;
}

export function sha256(text: string): string {
  return createHash('sha256').update(text).digest('hex');
}

/** Hash of an entry (without its own `hash` field) chained to the previous one. */
export function entryHash(prev: string, body: Record<string, unknown>): string {
  return sha256(`${prev}\n${canonicalJson(body)}`);
}
