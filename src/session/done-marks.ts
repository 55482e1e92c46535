/**
 * The operator's "object done" marks of a session: journalled while the rig ran a rollout (the
 * engine's `object-done` rows), each with the episode second it was pressed at. On a rig with no
 * table watcher they are its objects' times to success; the score of the attempt carries them,
 * and the report reads them per rollout. Pure: works on journal records.
 */
import type { SessionJournalRecord } from '../store/store.js';
import { JOURNAL } from './journal-state.js';

export interface DoneMarkRecord {
  /** Episode seconds. */
  readonly tS: number;
  readonly objectId?: string;
}

/** The marks of one slot attempt, in the order they were pressed. */
export function doneMarksOf(
  journal: readonly SessionJournalRecord[],
  at: { readonly slot: number; readonly attempt: number },
): DoneMarkRecord[] {
  return journal
    .filter(
      (e) =>
        e.action === JOURNAL.objectDone &&
        e.slot === at.slot &&
        (e.attempt ?? 0) === at.attempt &&
        typeof e.detail.tS === 'number',
    )
    .map((e) => ({
      tS: e.detail.tS as number,
      ...(typeof e.detail.objectId === 'string' ? { objectId: e.detail.objectId } : {}),
    }));
}

/** Every rollout the journal ran, with the marks of the attempt that ran it (empty when none was pressed). */
export function doneMarksByRollout(journal: readonly SessionJournalRecord[]): Map<number, DoneMarkRecord[]> {
  const out = new Map<number, DoneMarkRecord[]>();
  for (const e of journal) {
    if (e.action !== JOURNAL.ran || e.rolloutId === null || e.slot === null) continue;
    out.set(e.rolloutId, doneMarksOf(journal, { slot: e.slot, attempt: e.attempt ?? 0 }));
  }
  return out;
}
