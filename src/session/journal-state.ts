/**
 * A session's state is its journal replayed: which planned rollout is next and at which step,
 * which ran, which were scored, what the operator's time was. Nothing else holds session state,
 * so a station killed at any moment resumes exactly where its last committed action left it.
 * Pure: works on journal records.
 */
import type { SessionJournalRecord } from '../store/store.js';
import { rolloutSeconds, type SessionPlan } from './plan.js';

/** The journal's actions, in the order a rollout goes through them. */
export const JOURNAL = {
  sessionStarted: 'session-started',
  sessionResumed: 'session-resumed',
  shown: 'shown',
  /** The placement check's measurement before start (refused: the slot stays at 'show'; passed or unchecked: 'placed' follows). */
  placementChecked: 'placement-checked',
  placed: 'placed',
  running: 'running',
  /** The operator marked an object done while the rig ran the rollout (its episode second): the object's time to success. */
  objectDone: 'object-done',
  ran: 'ran',
  runFailed: 'run-failed',
  interrupted: 'interrupted',
  scored: 'scored',
  abandoned: 'abandoned',
  reset: 'reset',
  redo: 'redo',
  closed: 'closed',
  estop: 'estop',
  paused: 'paused',
  resumed: 'resumed',
  breakReminder: 'break-reminder',
  /** The engine stopped the session, knowing it (the operator's "stop for now", Ctrl-C, a failure): resumable, not interrupted. */
  stopped: 'stopped',
  /** The pre-registered stopping rule held and the session was run with --stop-early: it ends here. */
  stoppedEarly: 'stopped-early',
  ended: 'ended',
} as const;

/**
 * Where a slot stands. show: (re)show the layout and place; cut-off: the station died during the
 * episode; score: ran, awaiting the score; reset: clear the table; decide: ended without a score,
 * redo or close it; done: scored or closed.
 */
export type SlotPhase = 'show' | 'cut-off' | 'score' | 'reset' | 'decide' | 'done';

/**
 * Why an attempt ended without a score: the policy failed (timeout, disconnect: its result), the
 * rig faulted (not the policy's doing), the station stopped mid-episode, the operator abandoned it
 * (abort-and-redo) or pressed the e-stop, or the rig could not run it at all.
 */
export type UnscoredKind =
  | 'policy-failed'
  | 'rig-fault'
  | 'interrupted'
  | 'abandoned'
  | 'estopped'
  | 'stopped'
  | 'not-run';

export interface SlotState {
  readonly slot: number;
  readonly attempt: number;
  readonly phase: SlotPhase;
  /** For done slots: scored once, or closed without a score (failed, skipped). */
  readonly outcome?: 'scored' | 'closed';
  readonly rolloutId?: number;
  /** The last 'ran' entry's detail for this attempt (status, reason, table end states). */
  readonly ran?: Readonly<Record<string, unknown>>;
  /** Why the attempt ended without a score (for decide). */
  readonly why?: { readonly kind: UnscoredKind; readonly reason: string };
  /** Seconds of operator time on this slot, every attempt: place, score, reset. */
  readonly operatorS: { readonly place: number; readonly score: number; readonly reset: number };
  /** Wall seconds from the slot's first 'shown' to its closing entry (done slots). */
  readonly wallS?: number;
}

export interface SessionProgress {
  readonly total: number;
  readonly done: number;
  readonly scored: number;
  readonly closed: number;
  /** The next slot to work on, undefined when every slot is done. */
  readonly current?: number;
  readonly elapsedS: number;
  /** Remaining slots × this session's mean slot time (the plan's estimate before any is done). */
  readonly etaS: number;
  readonly operatorS: number;
  readonly ended: boolean;
}

const ms = (iso: string): number => Date.parse(iso);

/** Replays the journal into one state per planned slot. */
export function slotStates(plan: SessionPlan, journal: readonly SessionJournalRecord[]): SlotState[] {
  return plan.rollouts.map((r) =>
    slotState(
      r.slot,
      journal.filter((e) => e.slot === r.slot),
    ),
  );
}

function slotState(slot: number, entries: readonly SessionJournalRecord[]): SlotState {
  const op = { place: 0, score: 0, reset: 0 };
  for (const e of entries) {
    const s = e.operatorS ?? 0;
    if (e.action === JOURNAL.placed || e.action === JOURNAL.placementChecked) op.place += s;
    else if (e.action === JOURNAL.scored) op.score += s;
    else if (e.action === JOURNAL.reset) op.reset += s;
  }
  const attempt = entries.reduce((a, e) => Math.max(a, e.attempt ?? 0), 0);
  const mine = entries.filter((e) => (e.attempt ?? 0) === attempt);
  const has = (a: string): SessionJournalRecord | undefined => [...mine].reverse().find((e) => e.action === a);
  const first = entries.find((e) => e.action === JOURNAL.shown);
  const base = { slot, attempt, operatorS: op };
  const closed = has(JOURNAL.closed);
  const scored = has(JOURNAL.scored);
  const reset = has(JOURNAL.reset);
  const ran = has(JOURNAL.ran);
  const rolloutId = ran?.rolloutId ?? has(JOURNAL.interrupted)?.rolloutId ?? undefined;
  const wallS = (end: SessionJournalRecord): number | undefined =>
    first ? (ms(end.at) - ms(first.at)) / 1000 : undefined;
  if (closed)
    return {
      ...base,
      phase: 'done',
      outcome: 'closed',
      ...(rolloutId != null ? { rolloutId } : {}),
      wallS: wallS(closed),
      why: closed.detail.why as SlotState['why'],
    };
  if (scored && reset)
    return {
      ...base,
      phase: 'done',
      outcome: 'scored',
      rolloutId: scored.rolloutId ?? undefined,
      ran: ran?.detail,
      wallS: wallS(reset),
    };
  if (scored) return { ...base, phase: 'reset', rolloutId: scored.rolloutId ?? undefined, ran: ran?.detail };
  // Ended without a score: why, from the latest of the ways an attempt ends.
  const abandoned = has(JOURNAL.abandoned);
  const interrupted = has(JOURNAL.interrupted);
  const failed = has(JOURNAL.runFailed);
  let why: SlotState['why'];
  if (abandoned) why = { kind: 'abandoned', reason: String(abandoned.detail.reason ?? '') };
  else if (interrupted) why = { kind: 'interrupted', reason: String(interrupted.detail.reason ?? '') };
  else if (failed) why = { kind: 'not-run', reason: String(failed.detail.reason ?? '') };
  else if (ran && ran.detail.status !== 'valid') {
    const kind = ran.detail.estopped
      ? 'estopped'
      : ran.detail.stoppedByOperator
        ? 'stopped'
        : ran.detail.status === 'invalid'
          ? 'rig-fault'
          : 'policy-failed';
    why = { kind, reason: String(ran.detail.reason ?? ran.detail.status) };
  }
  if (why)
    return {
      ...base,
      phase: reset ? 'decide' : 'reset',
      why,
      ...(rolloutId != null ? { rolloutId } : {}),
      ...(ran ? { ran: ran.detail } : {}),
    };
  if (ran) return { ...base, phase: 'score', rolloutId: ran.rolloutId ?? undefined, ran: ran.detail };
  if (has(JOURNAL.running)) return { ...base, phase: 'cut-off' };
  return { ...base, phase: 'show' };
}

/** Progress, elapsed time and ETA at `nowMs`: always computable from the plan and the journal. */
export function sessionProgress(
  plan: SessionPlan,
  journal: readonly SessionJournalRecord[],
  nowMs: number,
): SessionProgress {
  const states = slotStates(plan, journal);
  const done = states.filter((s) => s.phase === 'done');
  const startedAt = journal.find((e) => e.action === JOURNAL.sessionStarted)?.at;
  const endedAt = journal.find((e) => e.action === JOURNAL.ended)?.at;
  const elapsedS = startedAt ? Math.max(0, ((endedAt ? ms(endedAt) : nowMs) - ms(startedAt)) / 1000) : 0;
  const walls = done.map((s) => s.wallS).filter((w): w is number => w !== undefined);
  const perSlotS =
    walls.length > 0
      ? walls.reduce((a, b) => a + b, 0) / walls.length
      : rolloutSeconds(plan.fit.cost, plan.episodeSeconds);
  const current = states.find((s) => s.phase !== 'done')?.slot;
  return {
    total: states.length,
    done: done.length,
    scored: done.filter((s) => s.outcome === 'scored').length,
    closed: done.filter((s) => s.outcome === 'closed').length,
    ...(current !== undefined ? { current } : {}),
    elapsedS,
    // An ended session (all done, ended by the operator, or stopped early) has nothing left to run.
    etaS: endedAt !== undefined ? 0 : (states.length - done.length) * perSlotS,
    operatorS: states.reduce((a, s) => a + s.operatorS.place + s.operatorS.score + s.operatorS.reset, 0),
    ended: endedAt !== undefined,
  };
}

/** "3 of 8 rollouts done (3 scored), 12 min elapsed, about 25 min left". */
export function progressLine(p: SessionProgress): string {
  const min = (s: number): string => `${Math.round(s / 60)} min`;
  return `${p.done} of ${p.total} rollouts done (${p.scored} scored${p.closed ? `, ${p.closed} closed unscored` : ''}), ${min(p.elapsedS)} elapsed, about ${min(p.etaS)} left`;
}

/**
 * Where an open session was when the station stopped without stopping it (killed, crashed, power
 * lost): its journal neither ends nor ends in a 'stopped' row. Undefined for an ended session and
 * for one stopped knowingly. `slot`/`phase`: the slot it was on and how far that slot had got.
 */
export function interruption(
  plan: SessionPlan,
  journal: readonly SessionJournalRecord[],
): { readonly at: string; readonly slot?: number; readonly phase?: SlotPhase } | undefined {
  const last = journal.at(-1);
  if (!last || last.action === JOURNAL.stopped || journal.some((e) => e.action === JOURNAL.ended)) return undefined;
  const current = slotStates(plan, journal).find((s) => s.phase !== 'done');
  return { at: last.at, ...(current ? { slot: current.slot, phase: current.phase } : {}) };
}
