/**
 * The evaluation session engine: walks a plan's rollouts through show layout → operator places →
 * confirm → projector blanks → the policy runs its fixed episode on the rig → operator scores per
 * object → reset → next, with pause, break reminders, abort-and-redo and the e-stop. Every step
 * is a journal row committed to the store before the engine moves on (and so before the operator
 * sees the next prompt); the next step is always computed from the journal, never from memory,
 * so a restart after a crash carries on at the exact step the last committed action left.
 */
import type { Store, SessionJournalInput, OperatorScoreInput } from '../store/store.js';
import type { LayoutSet } from '../layouts/layout-set.js';
import type { ObjectEndState, TaskDefinition } from '../tasks/types.js';
import { TaskInputError } from '../tasks/errors.js';
import { endStatesFromCount } from './score-entry.js';
import { episodeFileRecovery } from './recording-recovery.js';
import {
  JOURNAL,
  progressLine,
  sessionProgress,
  slotStates,
  type SessionProgress,
  type SlotState,
} from './journal-state.js';
import { checkPlanLayoutSet, serializeSessionPlan, specOf, type SessionPlan } from './plan.js';
import { abVerdictSoFar, analysisSoFar } from './ab-verdict.js';
import { doneMarksOf } from './done-marks.js';
import type { AnytimeComparison } from '../analysis/anytime-ab.js';
import { placementJournalDetail, placementVerdict, type PlacementCheck } from './placement-gate.js';
import {
  NO_GATE,
  NO_PROJECTOR,
  OPERATOR_STOP,
  type SessionGate,
  type OperatorStep,
  type PlacementGate,
  type SessionOperator,
  type SessionProjector,
  type SessionRolloutRunner,
  type SessionRunOutcome,
  type RecordingRecovery,
} from './ports.js';

export const DEFAULT_BREAK_EVERY_S = 30 * 60;

export interface SessionEngineOptions {
  readonly store: Store;
  readonly sessionId: number;
  readonly plan: SessionPlan;
  readonly set: LayoutSet;
  readonly task: TaskDefinition;
  readonly runner: SessionRolloutRunner;
  readonly operator: SessionOperator;
  readonly projector?: SessionProjector;
  readonly interlocks?: SessionGate;
  /**
   * The placement check before start: after the operator confirms, the overhead camera's frame is
   * compared with the twin's picture of the layout; over the threshold the start is refused with the
   * object named and the operator places again. Without it nothing is checked (nor journalled).
   */
  readonly placement?: PlacementGate;
  /** Recovers a cut-off episode's recording at resume; default the store's recordings on disk (recording-recovery.ts). */
  readonly recordings?: RecordingRecovery;
  /** Ctrl-C: the running rollout stops (the rig holds and damps), the session stays open to resume. */
  readonly signal: AbortSignal;
  /** Break reminder interval; default 30 min. */
  readonly breakEveryS?: number;
  /**
   * End the session by itself once the plan's pre-registered stopping rule holds (journalled as
   * stopped early); needs a plan with an analysis plan. Without it the engine only says so.
   */
  readonly stopEarly?: boolean;
  readonly nowMs?: () => number;
}

export interface SessionRunResult {
  readonly ended: boolean;
  /** Why the session stopped before its end (resume it with 'tandem session resume'). */
  readonly stoppedBecause?: string;
  readonly progress: SessionProgress;
  /** The pre-registered analysis at the end (plans with one): the verdict, and the pairs saved when it stopped early. */
  readonly analysis?: AnytimeComparison;
  /** True when the stopping rule ended the session before its planned end. */
  readonly stoppedEarly?: boolean;
}

/** Creates the session, its stored plan and its first journal row. */
export function startSession(
  store: Store,
  plan: SessionPlan,
  set: LayoutSet,
  operator: string,
  options: { readonly stopEarly?: boolean } = {},
): number {
  checkPlanLayoutSet(plan, set, 'given');
  store.putLayoutSet(set);
  const session = store.createSession({
    kind: plan.blind ? 'ab-test' : 'real-eval',
    operator,
    notes: `plan ${plan.sha256}`,
  });
  store.putSessionPlan({
    sessionId: session.id,
    planSha256: plan.sha256,
    layoutSetSha256: plan.layoutSetSha256,
    planJson: serializeSessionPlan(plan),
  });
  store.appendSessionJournal({
    sessionId: session.id,
    action: JOURNAL.sessionStarted,
    detail: {
      planSha256: plan.sha256,
      ...(plan.analysis ? { analysisSha256: plan.analysis.sha256 } : {}),
      ...(options.stopEarly ? { stopEarly: true } : {}),
    },
  });
  return session.id;
}

function outcomeFromRan(rolloutId: number, d: Readonly<Record<string, unknown>>): SessionRunOutcome {
  return {
    rolloutId,
    status: d.status as SessionRunOutcome['status'],
    ...(typeof d.reason === 'string' ? { reason: d.reason } : {}),
    ...(typeof d.episodeFile === 'string' ? { episodeFile: d.episodeFile } : {}),
    finalMode: String(d.finalMode ?? ''),
    wallS: Number(d.wallS ?? 0),
    ...(Array.isArray(d.tableEndStates) ? { tableEndStates: d.tableEndStates as ObjectEndState[] } : {}),
  };
}

/** The check's numbers kept on the rollout's 'ran' row: checked or not, the worst errors, the calibration. */
function placementSummary(d: Record<string, unknown>): Record<string, unknown> {
  return d.checked
    ? {
        checked: true,
        maxErrorMm: d.maxErrorMm,
        maxErrorDeg: d.maxErrorDeg,
        calibrationSha256: d.calibrationSha256,
        objects: d.objects,
      }
    : { checked: false, reason: d.reason };
}

/** The refusal the operator is placing again after (this attempt's last check, when it refused), for the prompt and the card. */
function lastRefusedPlacement(
  entries: readonly {
    action: string;
    slot: number | null;
    attempt: number | null;
    detail: Readonly<Record<string, unknown>>;
  }[],
  slot: number,
  attempt: number,
): OperatorStep['placementRefused'] {
  const mine = entries.filter(
    (e) =>
      e.slot === slot &&
      (e.attempt ?? 0) === attempt &&
      (e.action === JOURNAL.placementChecked || e.action === JOURNAL.placed),
  );
  const last = mine.at(-1);
  if (!last || last.action !== JOURNAL.placementChecked || last.detail.pass !== false) return undefined;
  return {
    object: String(last.detail.object ?? ''),
    sentence: String(last.detail.sentence ?? ''),
    objects: (last.detail.objects ?? []) as NonNullable<OperatorStep['placementRefused']>['objects'],
  };
}

export async function runSession(o: SessionEngineOptions): Promise<SessionRunResult> {
  const { store, sessionId: id, plan, set, task, runner, operator } = o;
  checkPlanLayoutSet(plan, set, 'given');
  if (o.stopEarly && !plan.analysis) throw new Error('stopping early needs a plan with a pre-registered analysis plan');
  const projector = o.projector ?? NO_PROJECTOR;
  const interlocks = o.interlocks ?? NO_GATE;
  const now = o.nowMs ?? Date.now;
  const breakEveryS = o.breakEveryS ?? DEFAULT_BREAK_EVERY_S;
  const journal = (e: Omit<SessionJournalInput, 'sessionId'>, score?: OperatorScoreInput) =>
    store.appendSessionJournal({ sessionId: id, ...e }, score);
  const progress = (): SessionProgress => sessionProgress(plan, store.listSessionJournal(id), now());
  const analysis = (): { analysis?: AnytimeComparison } => {
    const a = analysisSoFar(plan, store.listSessionJournal(id));
    return a ? { analysis: a } : {};
  };
  const stopped = (why: string): SessionRunResult => {
    // Journalled, so a session stopped on purpose is never mistaken for one a crash cut off.
    journal({ action: JOURNAL.stopped, detail: { reason: why } });
    return { ended: false, stoppedBecause: why, progress: progress(), ...analysis() };
  };
  /** Seconds since t0, or what a simulated operator says it took. */
  const took = (t0: number, a: { simulatedS?: number }): number =>
    Math.round((a.simulatedS ?? (now() - t0) / 1000) * 1000) / 1000;
  /** Pairs the live A/B verdict was last said for (it is said again only when a pair completes). */
  let saidPairs = 0;

  for (;;) {
    if (o.signal.aborted) return stopped('stopped with Ctrl-C');
    const entries = store.listSessionJournal(id);
    if (entries.some((e) => e.action === JOURNAL.ended))
      return {
        ended: true,
        progress: progress(),
        ...analysis(),
        stoppedEarly: entries.some((e) => e.action === JOURNAL.stoppedEarly),
      };
    const s: SlotState | undefined = slotStates(plan, entries).find((x) => x.phase !== 'done');
    if (!s) {
      journal({ action: JOURNAL.ended });
      store.endSession(id);
      const p = progress();
      operator.say(`Session ${id} ended: ${progressLine(p)}.`);
      return { ended: true, progress: p, ...analysis() };
    }
    // The stopping rule is checked before a slot is shown, so a session resumed after the rule held
    // stops too; a decided verdict ends the session here, the rest of the plan saved.
    const verdictNow = o.stopEarly && s.phase === 'show' ? analysisSoFar(plan, entries) : undefined;
    if (verdictNow?.stop && verdictNow.kind !== 'undecided') {
      const rolloutsSaved = plan.rollouts.length - sessionProgress(plan, entries, now()).done;
      journal({
        action: JOURNAL.stoppedEarly,
        detail: {
          analysisSha256: plan.analysis!.sha256,
          kind: verdictNow.kind,
          pairs: verdictNow.pairs,
          maxPairs: verdictNow.maxPairs,
          pairsSaved: verdictNow.pairsSaved,
          rolloutsSaved,
          estimate: verdictNow.estimate,
          lower: verdictNow.lower,
          upper: verdictNow.upper,
          sentence: verdictNow.sentence,
        },
      });
      journal({ action: JOURNAL.ended, detail: { stoppedEarly: true } });
      store.endSession(id);
      const p = progress();
      operator.say(
        `Session ${id} stopped early by its pre-registered rule: ${verdictNow.sentence} ${rolloutsSaved} of the plan's ${plan.rollouts.length} rollouts saved (${verdictNow.pairsSaved} of ${verdictNow.maxPairs} pairs).`,
      );
      return { ended: true, progress: p, analysis: verdictNow, stoppedEarly: true };
    }
    const planned = plan.rollouts[s.slot];
    const layout = set.layouts[planned.layoutIndex];
    const refusedPlacement = lastRefusedPlacement(entries, s.slot, s.attempt);
    const step: OperatorStep = {
      slot: s.slot,
      attempt: s.attempt,
      total: plan.rollouts.length,
      layout,
      task,
      label: planned.policyLabel,
      seed: planned.seed,
      progress: sessionProgress(plan, entries, now()),
      ...(refusedPlacement ? { placementRefused: refusedPlacement } : {}),
    };
    const at = { slot: s.slot, attempt: s.attempt };

    switch (s.phase) {
      case 'show': {
        const blocked = interlocks.blocked();
        if (blocked) {
          operator.say(`The cell is not safe to run: ${blocked}. Clear it, then carry on.`);
          journal({ action: JOURNAL.paused, detail: { reason: blocked } });
          if (!(await operator.paused(progress()))) return stopped(blocked);
          journal({ action: JOURNAL.resumed });
          continue;
        }
        await projector.show(layout, set);
        journal({ ...at, action: JOURNAL.shown, detail: { layoutIndex: layout.index, label: planned.policyLabel } });
        const t0 = now();
        const a = await operator.place(step);
        if (a.action === 'stop') return stopped('stopped by the operator');
        if (a.action === 'pause' || a.action === 'estop') {
          // Nothing moves while placing; an e-stop here is journalled and the session waits.
          journal({ action: a.action === 'pause' ? JOURNAL.paused : JOURNAL.estop, detail: {} });
          if (!(await operator.paused(progress()))) return stopped('stopped by the operator');
          journal({ action: JOURNAL.resumed });
          continue;
        }
        let placement: Record<string, unknown> | undefined;
        if (o.placement) {
          let check: PlacementCheck;
          try {
            check = await o.placement.check(step);
          } catch (e) {
            // A camera or renderer that fails is no reason to stop the session: the gate says why, the rollout runs unchecked.
            check = {
              checked: false,
              reason: `the placement check failed (${e instanceof Error ? e.message : String(e)})`,
            };
          }
          const v = placementVerdict(check, o.placement.thresholds);
          placement = placementJournalDetail(check, o.placement.thresholds, v);
          operator.say(v.sentence);
          if (!v.pass) {
            // Refused before anything moves: the slot stays at 'show', the operator places again (the time spent counts as placing).
            journal({ ...at, action: JOURNAL.placementChecked, operatorS: took(t0, a), detail: placement });
            continue;
          }
          journal({ ...at, action: JOURNAL.placementChecked, detail: placement });
        }
        journal({ ...at, action: JOURNAL.placed, operatorS: took(t0, a) });
        // Blank before the arms move: the projection is no cue the policy should see.
        await projector.blank();
        journal({ ...at, action: JOURNAL.running, detail: { label: planned.policyLabel } });
        const safety = interlocks.armed();
        const signal = AbortSignal.any([safety, o.signal]);
        let run: SessionRunOutcome;
        // The operator's "object done" marks while the rig runs: each journalled at once with its
        // episode second (the time to success the report reads), so a crash keeps them too.
        const watching = new AbortController();
        const tRun = now();
        operator.watchRun?.(
          step,
          (m) => {
            if (watching.signal.aborted) return;
            const tS = Math.min(plan.episodeSeconds, Math.max(0, m.simulatedTS ?? (now() - tRun) / 1000));
            journal({
              ...at,
              action: JOURNAL.objectDone,
              detail: { tS: Math.round(tS * 1000) / 1000, ...(m.objectId ? { objectId: m.objectId } : {}) },
            });
          },
          watching.signal,
        );
        try {
          run = await runner.run({
            sessionId: id,
            ...at,
            task,
            layout,
            spec: specOf(plan, planned.policyLabel),
            label: planned.policyLabel,
            seed: planned.seed,
            episodeSeconds: plan.episodeSeconds,
            signal,
          });
        } catch (e) {
          watching.abort();
          const reason = e instanceof Error ? e.message : String(e);
          journal({ ...at, action: JOURNAL.runFailed, detail: { reason } });
          operator.say(`Rollout ${s.slot + 1} could not run: ${reason}`);
          return stopped(reason);
        }
        watching.abort();
        journal({
          ...at,
          action: JOURNAL.ran,
          rolloutId: run.rolloutId,
          detail: {
            status: run.status,
            ...(run.reason ? { reason: run.reason } : {}),
            ...(run.policyError ? { policyError: run.policyError } : {}),
            ...(run.episodeFile ? { episodeFile: run.episodeFile } : {}),
            finalMode: run.finalMode,
            wallS: run.wallS,
            ...(run.tableEndStates ? { tableEndStates: run.tableEndStates } : {}),
            // The placement the rollout started from (its errors a covariate of the result).
            ...(placement ? { placement: placementSummary(placement) } : {}),
            ...(safety.aborted
              ? safety.reason === OPERATOR_STOP
                ? { stoppedByOperator: true }
                : { estopped: true }
              : {}),
          },
        });
        if (run.status !== 'valid')
          operator.say(
            `Rollout ${s.slot + 1} (${planned.policyLabel}) does not count: ${run.reason ?? run.status}; the rig is ${run.finalMode}.`,
          );
        if (o.signal.aborted) return stopped('stopped with Ctrl-C');
        continue;
      }
      case 'cut-off': {
        // The station died during this episode: its recording is recovered, and a rollout row
        // stored in the last moments (before its 'ran' row) is attached to this attempt.
        const known = new Set(entries.map((e) => e.rolloutId).filter((x) => x !== null));
        const orphan = store.listRollouts({ sessionId: id }).find((r) => !known.has(r.id));
        const recovered = await (o.recordings ?? episodeFileRecovery(store)).recoverCutOff();
        journal({
          ...at,
          action: JOURNAL.interrupted,
          rolloutId: orphan?.id ?? null,
          detail: { reason: 'the station stopped during the episode', recovered },
        });
        operator.say(
          `Rollout ${s.slot + 1} was cut off when the station stopped${recovered.length ? `; its recording was recovered (${recovered.join(', ')})` : ''}.`,
        );
        continue;
      }
      case 'score': {
        const run = outcomeFromRan(s.rolloutId!, s.ran ?? {});
        const t0 = now();
        const a = await operator.score({ ...step, run });
        if (a.action === 'redo') {
          journal({
            ...at,
            action: JOURNAL.abandoned,
            rolloutId: run.rolloutId,
            operatorS: took(t0, a),
            detail: { reason: a.reason },
          });
          continue;
        }
        let p;
        let endStates: readonly ObjectEndState[];
        try {
          endStates = a.action === 'score-count' ? endStatesFromCount(task, layout, a.count) : a.endStates;
          p = task.scoreProgress(layout, endStates);
        } catch (e) {
          if (e instanceof TaskInputError) {
            operator.refused(e.message);
            continue;
          }
          throw e;
        }
        const marks = doneMarksOf(entries, at);
        journal(
          {
            ...at,
            action: JOURNAL.scored,
            operatorS: took(t0, a),
            detail: {
              progress: p.progress,
              counts: p.counts,
              summary: p.summary,
              ...(a.note ? { note: a.note } : {}),
              ...(marks.length ? { doneMarks: marks } : {}),
            },
          },
          {
            rolloutId: run.rolloutId,
            endStates,
            progress: p.progress,
            counts: p.counts,
            operator: operator.name,
            note: a.note ?? null,
          },
        );
        continue;
      }
      case 'reset': {
        const t0 = now();
        const a = await operator.reset(step);
        journal({ ...at, action: JOURNAL.reset, operatorS: took(t0, a) });
        const last = [...store.listSessionJournal(id)]
          .reverse()
          .find(
            (e) =>
              e.action === JOURNAL.breakReminder ||
              e.action === JOURNAL.sessionStarted ||
              e.action === JOURNAL.sessionResumed,
          );
        if (last && (now() - Date.parse(last.at)) / 1000 >= breakEveryS) {
          const p = progress();
          const tb = now();
          const b = await operator.breakReminder(p);
          journal({ action: JOURNAL.breakReminder, operatorS: took(tb, b) });
        }
        operator.say(progressLine(progress()));
        // A two-policy session: whether the A/B answer is already clear, each time a pair completes —
        // by the pre-registered analysis when the plan has one.
        // After the last slot no pair can come: the verdict says the session is over, not "keep going".
        const after = store.listSessionJournal(id);
        const over = slotStates(plan, after).every((x) => x.phase === 'done');
        const pre = analysisSoFar(plan, after, { over });
        const verdict = pre ?? abVerdictSoFar(plan, after, { over });
        if (verdict && verdict.pairs > saidPairs) {
          saidPairs = verdict.pairs;
          operator.say(pre ? `Pre-registered analysis: ${pre.sentence}` : `A/B so far: ${verdict.sentence}`);
        }
        continue;
      }
      case 'decide': {
        const why = s.why!;
        const redo = why.kind === 'abandoned' ? true : await operator.offerRedo(step, why);
        if (redo) journal({ slot: s.slot, attempt: s.attempt + 1, action: JOURNAL.redo, detail: { after: why } });
        else journal({ ...at, action: JOURNAL.closed, detail: { why } });
        continue;
      }
      case 'done':
        continue;
    }
  }
}
