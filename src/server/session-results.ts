/**
 * A session's results as the operator reads them at the station: per policy the scored rollouts'
 * task progress, per tier and pooled, with layout-bootstrap intervals (src/analysis, the same
 * numbers the report prints); the live A/B verdict of a two-policy session; each scored episode;
 * and a blind session's key once it has ended. Pure: works on the plan, the journal and the
 * layouts' tiers.
 */
import { summarizeByTier } from '../analysis/tier-summary.js';
import type { SessionJournalRecord } from '../store/store.js';
import { abVerdictSoFar, analysisSoFar } from '../session/ab-verdict.js';
import { JOURNAL } from '../session/journal-state.js';
import { sessionAssists } from '../session/assists.js';
import type { SessionPlan } from '../session/plan.js';
import type { PolicyResult, ScoredEpisode, SessionResults } from './api-types.js';

/** The bootstrap's seed: fixed, so the same scores always print the same intervals. */
const INTERVAL_SEED = 20261203;

export function sessionResults(
  plan: SessionPlan,
  journal: readonly SessionJournalRecord[],
  tierOf: (layoutIndex: number) => number,
  ended: boolean,
  stretchesOf: (rolloutId: number) => number = () => 0,
): SessionResults {
  const reveal = !plan.blind || ended;
  // The latest score of each slot stands (a redone slot is scored once per attempt).
  const last = new Map<number, SessionJournalRecord>();
  for (const e of journal)
    if (e.action === JOURNAL.scored && e.slot !== null && typeof e.detail.progress === 'number') last.set(e.slot, e);
  const episodes: ScoredEpisode[] = [];
  for (const r of plan.rollouts) {
    const e = last.get(r.slot);
    if (!e) continue;
    const ran = journal.find((x) => x.action === JOURNAL.ran && x.slot === r.slot && x.attempt === e.attempt);
    episodes.push({
      slot: r.slot,
      attempt: e.attempt ?? 0,
      label: r.policyLabel,
      layoutIndex: r.layoutIndex,
      tier: tierOf(r.layoutIndex),
      rolloutId: e.rolloutId ?? ran?.rolloutId ?? null,
      progress: e.detail.progress as number,
      summary: typeof e.detail.summary === 'string' ? e.detail.summary : '',
    });
  }
  const policies = plan.policies.map((p): PolicyResult => {
    const mine = episodes.filter((x) => x.label === p.label);
    return {
      label: p.label,
      ...(reveal ? { spec: p.spec } : {}),
      scored: mine.length,
      tiers:
        mine.length === 0
          ? []
          : summarizeByTier(
              mine.map((x) => ({ tier: x.tier, progress: x.progress, layoutIndex: x.layoutIndex })),
              { seed: INTERVAL_SEED },
            ),
    };
  });
  return {
    ended,
    blind: plan.blind,
    policies,
    verdict: abVerdictSoFar(plan, journal) ?? null,
    analysis: plan.analysis
      ? {
          ...analysisSoFar(plan, journal)!,
          analysisSha256: plan.analysis.sha256,
          stoppedEarly: journal.some((e) => e.action === JOURNAL.stoppedEarly),
        }
      : null,
    episodes,
    key: reveal ? Object.fromEntries(plan.policies.map((p) => [p.label, p.spec])) : null,
    assists: sessionAssists(plan, journal, stretchesOf),
  };
}
