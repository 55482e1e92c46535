/** What every record module needs to turn rows into records and to check values before writing them. */
import { createHash } from 'node:crypto';
import type { Counts } from './records.js';

/** A row as better-sqlite3 returns it. */
export type Row = Record<string, unknown>;

export const SHA256_HEX = /^[0-9a-f]{64}$/;

export function sha256Hex(text: string): string {
  return createHash('sha256').update(text, 'utf8').digest('hex');
}

export function nowIso(): string {
  return new Date().toISOString();
}

export const strOrNull = (v: unknown): string | null => (v == null ? null : String(v));
export const numOrNull = (v: unknown): number | null => (v == null ? null : Number(v));

export function parseJson<T>(text: unknown): T {
  return JSON.parse(String(text)) as T;
}

export function checkUnitInterval(what: string, v: number | null | undefined): void {
  if (v == null) return;
  if (typeof v !== 'number' || !Number.isFinite(v) || v < 0 || v > 1)
    throw new RangeError(`${what} must be a number from 0 to 1, not ${String(v)}`);
}

export function checkCounts(what: string, counts: Counts | null | undefined): void {
  if (counts == null) return;
  for (const [k, v] of Object.entries(counts)) {
    if (typeof v !== 'number' || !Number.isFinite(v))
      throw new RangeError(`${what}.${k} must be a finite number, not ${String(v)}`);
  }
}
