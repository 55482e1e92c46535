/**
 * The live A/B verdict of a two-policy session: after each scored rollout, the pairs so far —
 * both policies scored in the same block (one layout, one repeat), taken in the order the later
 * of the two was scored — through the anytime-valid sequential test of src/analysis
 * (sequentialVerdict: valid at every look, so the operator may stop as soon as it says the answer
 * is clear). Pure: works on the plan and the journal. Blind sessions name the labels only.
 */
import { sequentialVerdict, type SequentialVerdict } from '../analysis/sequential.js';
import { anytimeComparison, type AnytimeComparison } from '../analysis/anytime-ab.js';
import { metricValue } from './analysis-plan.js';
import type { SessionJournalRecord } from '../store/store.js';
import { JOURNAL } from './journal-state.js';
import type { SessionPlan } from './plan.js';

/** The verdict so far; undefined unless the plan compares exactly two policies. */
export function abVerdictSoFar(plan: SessionPlan, journal: readonly SessionJournalRecord[]): SequentialVerdict | undefined {
  if (plan.policies.length !== 2) return undefined;
  const [a, b] = plan.policies.map((p) => p.label);
  return sequentialVerdict(scoredPairs(plan, journal), { names: { a, b } });
}

/**
 * The pre-registered analysis so far (a plan with an analysis plan): B − A under the plan's
 * metric, α, margin, stopping rule and maximum pairs. Undefined without an analysis plan.
 */
export function analysisSoFar(plan: SessionPlan, journal: readonly SessionJournalRecord[]): AnytimeComparison | undefined {
  const ap = plan.analysis;
  if (!ap) return undefined;
  const diffs = scoredPairs(plan, journal).map((p) => metricValue(ap.metric, p.b) - metricValue(ap.metric, p.a));
  const ended = journal.some((e) => e.action === JOURNAL.ended);
  return anytimeComparison(diffs, { alpha: ap.alpha, margin: ap.margin, stoppingRule: ap.stoppingRule, maxPairs: ap.maxPairs, names: { a: ap.a, b: ap.b }, ended });
}

/** Both policies' progress per completed block, in the order the later of the two was scored. */
export function scoredPairs(plan: SessionPlan, journal: readonly SessionJournalRecord[]): { a: number; b: number }[] {
  if (plan.policies.length !== 2) return [];
  const [a, b] = plan.policies.map((p) => p.label);
  // The latest score of each slot (a slot is scored once per attempt; the last attempt stands).
  const scored = new Map<number, { progress: number; order: number }>();
  journal.forEach((e, order) => {
    if (e.action === JOURNAL.scored && e.slot !== null && typeof e.detail.progress === 'number') scored.set(e.slot, { progress: e.detail.progress, order });
  });
  const blocks = new Map<number, { a?: { progress: number; order: number }; b?: { progress: number; order: number } }>();
  for (const r of plan.rollouts) {
    const s = scored.get(r.slot);
    if (!s) continue;
    const blk = blocks.get(r.block) ?? {};
    if (r.policyLabel === a) blk.a = s;
    else if (r.policyLabel === b) blk.b = s;
    blocks.set(r.block, blk);
  }
  const pairs = [...blocks.values()]
    .filter((x): x is { a: { progress: number; order: number }; b: { progress: number; order: number } } => x.a !== undefined && x.b !== undefined)
    .sort((x, y) => Math.max(x.a.order, x.b.order) - Math.max(y.a.order, y.b.order))
    .map((x) => ({ a: x.a.progress, b: x.b.progress }));
  return pairs;
}
