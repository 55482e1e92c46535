/**
 * Operator seconds per real rollout, from a session's journal: placing the layout (shown →
 * placed, the operator's confirm), standing by while the rig runs it (placed → ran: the rig comes
 * up, runs the episode and goes down, with the e-stop in reach), scoring it (ran → scored, or →
 * abandoned) and resetting the table (→ reset), for the slot and attempt that ran the rollout. The engine journals each as the
 * seconds from prompt to answer (`operator_s`; the scripted operator's simulated seconds); a row
 * without them is timed from the journal's own timestamps. Pure: works on journal records — the
 * cost ledger's operator time, measured instead of assumed.
 */
import type { SessionJournalRecord } from '../store/store.js';
import { JOURNAL } from './journal-state.js';

export interface RolloutOperatorTime {
  readonly rolloutId: number;
  readonly sessionId: number;
  readonly slot: number;
  readonly attempt: number;
  readonly placeS: number;
  /** placed → ran, from the journal's timestamps: the operator supervises the rig. */
  readonly superviseS: number;
  readonly scoreS: number;
  readonly resetS: number;
  readonly totalS: number;
  /** Journal rows of it timed from timestamps because they carry no operator seconds. */
  readonly fromTimestamps: readonly string[];
  /** The journal row ids it was read from. */
  readonly journalIds: readonly number[];
}

const ms = (iso: string): number => Date.parse(iso);

/** Every rollout the journal ran (one per slot attempt that reached 'ran' or was cut off), with its operator seconds. */
export function operatorTimeByRollout(journal: readonly SessionJournalRecord[]): Map<number, RolloutOperatorTime> {
  const out = new Map<number, RolloutOperatorTime>();
  const attempts = new Map<string, SessionJournalRecord[]>();
  for (const e of journal) {
    if (e.slot === null) continue;
    const k = `${e.slot}/${e.attempt ?? 0}`;
    let list = attempts.get(k);
    if (!list) attempts.set(k, (list = []));
    list.push(e);
  }
  for (const entries of attempts.values()) {
    const ran = entries.find(
      (e) => (e.action === JOURNAL.ran || e.action === JOURNAL.interrupted) && e.rolloutId !== null,
    );
    if (!ran) continue;
    const fromTimestamps: string[] = [];
    const ids: number[] = [];
    /** One operator step: its journalled seconds, else the time since the row it answers. */
    const step = (action: string, after: readonly string[]): number => {
      const row = entries.find((e) => e.action === action);
      if (!row) return 0;
      ids.push(row.id);
      if (row.operatorS !== null) return row.operatorS;
      const before = [...entries].reverse().find((e) => e.id < row.id && after.includes(e.action));
      if (!before) return 0;
      fromTimestamps.push(action);
      return Math.max(0, (ms(row.at) - ms(before.at)) / 1000);
    };
    const placeS = step(JOURNAL.placed, [JOURNAL.shown]);
    const placed = entries.find((e) => e.action === JOURNAL.placed);
    const superviseS = placed && ran.id > placed.id ? Math.max(0, (ms(ran.at) - ms(placed.at)) / 1000) : 0;
    const scoreS = entries.some((e) => e.action === JOURNAL.scored)
      ? step(JOURNAL.scored, [JOURNAL.ran])
      : step(JOURNAL.abandoned, [JOURNAL.ran]);
    const resetS = step(JOURNAL.reset, [JOURNAL.scored, JOURNAL.abandoned, JOURNAL.ran, JOURNAL.interrupted]);
    out.set(ran.rolloutId!, {
      rolloutId: ran.rolloutId!,
      sessionId: ran.sessionId,
      slot: ran.slot!,
      attempt: ran.attempt ?? 0,
      placeS,
      superviseS,
      scoreS,
      resetS,
      totalS: placeS + superviseS + scoreS + resetS,
      fromTimestamps,
      journalIds: ids,
    });
  }
  return out;
}
