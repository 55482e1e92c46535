/**
 * A session's assists (PhAIL's term for the operator taking over with the leader arm): per policy
 * label, how many stretches the operator drove across the session's rollouts that ran, in how many
 * rollouts, per hour of policy running time, and the mean time between assists. The running time
 * is each rollout's planned episode length: a stretch is counted whatever the rollout's outcome,
 * scored or not, because the operator had to step in either way. Pure.
 */
import type { SessionJournalRecord } from '../store/store.js';
import { JOURNAL } from './journal-state.js';
import type { SessionPlan } from './plan.js';

export interface PolicyAssists {
  readonly label: string;
  /** Rollouts of this policy that ran (stored), scored or not. */
  readonly rollouts: number;
  readonly assists: number;
  readonly assistedRollouts: number;
  /** Hours the policy was meant to run in them (their episode lengths). */
  readonly hours: number;
  /** Assists per hour of running; null before any rollout ran. */
  readonly assistsPerHour: number | null;
  /** Mean time between assists, hours; null with no assist. */
  readonly mtbaHours: number | null;
}

/**
 * Per label of the plan. `stretchesOf` gives the stored stretches of a rollout (the store's
 * rollout_takeovers rows); every stored rollout of the session's journal counts once.
 */
export function sessionAssists(
  plan: SessionPlan,
  journal: readonly SessionJournalRecord[],
  stretchesOf: (rolloutId: number) => number,
): PolicyAssists[] {
  const labelOf = new Map(plan.rollouts.map((r) => [r.slot, r.policyLabel]));
  const seen = new Set<number>();
  const by = new Map<string, { rollouts: number; assists: number; assisted: number }>();
  for (const p of plan.policies) by.set(p.label, { rollouts: 0, assists: 0, assisted: 0 });
  for (const e of journal) {
    if (e.action !== JOURNAL.ran && e.action !== JOURNAL.interrupted) continue;
    if (e.rolloutId === null || e.slot === null || seen.has(e.rolloutId)) continue;
    const label = labelOf.get(e.slot);
    const tally = label === undefined ? undefined : by.get(label);
    if (!tally) continue;
    seen.add(e.rolloutId);
    const n = stretchesOf(e.rolloutId);
    tally.rollouts += 1;
    tally.assists += n;
    if (n > 0) tally.assisted += 1;
  }
  return [...by].map(([label, t]) => {
    const hours = (t.rollouts * plan.episodeSeconds) / 3600;
    return {
      label,
      rollouts: t.rollouts,
      assists: t.assists,
      assistedRollouts: t.assisted,
      hours,
      assistsPerHour: hours > 0 ? t.assists / hours : null,
      mtbaHours: t.assists > 0 ? hours / t.assists : null,
    };
  });
}
