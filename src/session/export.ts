/**
 * What a session leaves: its plan, each planned rollout with its attempts, stored rollout, score,
 * operator seconds and episode file, and the session's operator hours. A blind session's key
 * (which label ran which policy) appears only once the session has ended; until then the plan is
 * shown with labels alone.
 */
import { existsSync } from 'node:fs';
import type { Store } from '../store/store.js';
import { JOURNAL, sessionProgress, slotStates, type SessionProgress } from './journal-state.js';
import type { SessionPlan } from './plan.js';
import { analysisSoFar } from './ab-verdict.js';
import type { AnytimeComparison } from '../analysis/anytime-ab.js';
import { sessionAssists, type PolicyAssists } from './assists.js';

export interface SessionExport {
  readonly session: {
    readonly id: number;
    readonly kind: string;
    readonly startedAt: string;
    readonly endedAt: string | null;
    readonly operator: string | null;
  };
  readonly plan: Omit<SessionPlan, 'policies'> & {
    readonly policies: readonly { readonly label: string; readonly spec?: string }[];
  };
  /** label → spec; null while a blind session runs. */
  readonly blindKey: Readonly<Record<string, string>> | null;
  readonly progress: SessionProgress;
  readonly operatorHours: number;
  readonly rollouts: readonly Record<string, unknown>[];
  /** Per policy label: the operator's takeovers with the leader arm (assists), per hour, and the mean time between them. */
  readonly assists: readonly PolicyAssists[];
  /**
   * The pre-registered analysis (plans with one): the verdict over the scored pairs, whether the
   * session stopped early by it, and the rollouts that saved against the fixed-N plan.
   */
  readonly analysis: {
    readonly verdict: AnytimeComparison;
    readonly stoppedEarly: boolean;
    readonly rolloutsSaved: number;
  } | null;
}

export function sessionExport(store: Store, id: number, plan: SessionPlan, nowMs = Date.now()): SessionExport {
  const session = store.getSession(id);
  if (!session) throw new Error(`there is no session ${id}`);
  const journal = store.listSessionJournal(id);
  const ended = session.endedAt !== null;
  const reveal = !plan.blind || ended;
  const states = slotStates(plan, journal);
  const recordings = store.listRecordings();
  const rollouts = plan.rollouts.map((r, i) => {
    const s = states[i];
    const attempts = [
      ...new Set(journal.filter((e) => e.slot === r.slot && e.action === JOURNAL.running).map((e) => e.attempt ?? 0)),
    ].map((attempt) => {
      const mine = journal.filter((e) => e.slot === r.slot && (e.attempt ?? 0) === attempt);
      const ran = mine.find((e) => e.action === JOURNAL.ran);
      const interrupted = mine.find((e) => e.action === JOURNAL.interrupted);
      const rolloutId = ran?.rolloutId ?? interrupted?.rolloutId ?? null;
      const row = rolloutId !== null ? store.getRollout(rolloutId) : undefined;
      const rec = rolloutId !== null ? recordings.find((x) => x.rolloutId === rolloutId) : undefined;
      const episodeFile =
        row?.episodeFile ?? (typeof ran?.detail.episodeFile === 'string' ? ran.detail.episodeFile : null);
      const scored = mine.find((e) => e.action === JOURNAL.scored);
      const scoreRow =
        scored?.scoreId != null && rolloutId !== null
          ? store.listOperatorScores(rolloutId).find((x) => x.id === scored.scoreId)
          : undefined;
      return {
        attempt,
        rolloutId,
        status:
          row?.status ??
          (interrupted ? 'interrupted' : mine.find((e) => e.action === JOURNAL.runFailed) ? 'not run' : null),
        reason:
          row?.statusReason ??
          (interrupted
            ? String(interrupted.detail.reason)
            : (mine.find((e) => e.action === JOURNAL.runFailed)?.detail.reason ?? null)),
        interrupted: interrupted !== undefined,
        /** A cut-off episode's recovered file(s), named when the session resumed. */
        recoveredFiles: Array.isArray(interrupted?.detail.recovered) ? (interrupted.detail.recovered as string[]) : [],
        finalMode: typeof ran?.detail.finalMode === 'string' ? ran.detail.finalMode : null,
        episodeFile,
        episodeFileExists: episodeFile !== null && existsSync(episodeFile),
        recording: rec
          ? { state: rec.state, file: rec.file, recoveredFile: rec.recoveredFile, problem: rec.problem }
          : null,
        /** The stretches the operator drove with the leader (episode seconds): an assisted rollout. */
        takeovers: rolloutId !== null ? store.listTakeovers(rolloutId) : [],
        score: scoreRow
          ? {
              progress: scoreRow.progress,
              counts: scoreRow.counts,
              endStates: scoreRow.endStates,
              note: scoreRow.note,
              operator: scoreRow.operator,
              enteredAt: scoreRow.enteredAt,
            }
          : null,
      };
    });
    return {
      slot: r.slot,
      block: r.block,
      layoutIndex: r.layoutIndex,
      repeat: r.repeat,
      policy: r.policyLabel,
      ...(reveal ? { spec: plan.policies.find((p) => p.label === r.policyLabel)?.spec } : {}),
      phase: s.phase,
      outcome: s.outcome ?? null,
      scores: journal.filter((e) => e.slot === r.slot && e.action === JOURNAL.scored).length,
      operatorS: s.operatorS,
      attempts,
    };
  });
  const progress = sessionProgress(plan, journal, nowMs);
  return {
    session: {
      id: session.id,
      kind: session.kind,
      startedAt: session.startedAt,
      endedAt: session.endedAt,
      operator: session.operator,
    },
    plan: { ...plan, policies: plan.policies.map((p) => (reveal ? p : { label: p.label })) },
    blindKey: plan.blind ? (ended ? Object.fromEntries(plan.policies.map((p) => [p.label, p.spec])) : null) : null,
    progress,
    operatorHours: Math.round((progress.operatorS / 3600) * 1000) / 1000,
    rollouts,
    assists: sessionAssists(plan, journal, (id) => store.listTakeovers(id).length),
    analysis: analysisOf(plan, journal, progress),
  };
}

function analysisOf(
  plan: SessionPlan,
  journal: Parameters<typeof analysisSoFar>[1],
  progress: SessionProgress,
): SessionExport['analysis'] {
  const verdict = analysisSoFar(plan, journal);
  if (!verdict) return null;
  const stoppedEarly = journal.some((e) => e.action === JOURNAL.stoppedEarly);
  return { verdict, stoppedEarly, rolloutsSaved: stoppedEarly ? progress.total - progress.done : 0 };
}
