import { randomBytes } from 'node:crypto';
import type { HistoryEvent } from './work-queue.js';

/** `lane-` or `ask-` plus 10 random hex digits: short enough to type, 40 bits against collisions. */
export function newId(prefix: 'lane' | 'ask' | 'tok'): string {
  return `${prefix}-${randomBytes(5).toString('hex')}`;
}

export function isoTime(ms: number): string {
  return new Date(ms).toISOString();
}

export function isoTimeOrNull(ms: number | null): string | null {
  return ms === null ? null : isoTime(ms);
}

export interface EventRow {
  seq: number;
  at: number;
  actor: string;
  type: string;
  detail: string;
}

export function toHistoryEvent(row: EventRow): HistoryEvent {
  return { seq: row.seq, at: isoTime(row.at), actor: row.actor, type: row.type, detail: JSON.parse(row.detail) as Record<string, unknown> };
}
