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

/**
 * Whether more pairs can still come: `over` when given (the engine knows before it journals the
 * end that no slot is left), else whether the journal says the session ended.
 */
const isOver = (journal: readonly SessionJournalRecord[], over: boolean | undefined): boolean =>
  over ?? journal.some((e) => e.action === JOURNAL.ended);

const f2 = (x: number): string => (x >= 0 ? `+${x.toFixed(2)}` : x.toFixed(2));

/**
 * The verdict so far; undefined unless the plan compares exactly two policies. Once the session is
 * over its sentence says so and what the data shows — never "keep going", as no pair can come.
 */
export function abVerdictSoFar(
  plan: SessionPlan,
  journal: readonly SessionJournalRecord[],
  opts: { readonly over?: boolean } = {},
): SequentialVerdict | undefined {
  if (plan.policies.length !== 2) return undefined;
  const [a, b] = plan.policies.map((p) => p.label);
  const v = sequentialVerdict(scoredPairs(plan, journal), { names: { a, b } });
  if (!isOver(journal, opts.over)) return v;
  const n = v.pairs;
  const pairs = `${n} pair${n === 1 ? '' : 's'}`;
  const bounds = `${Math.round((1 - v.alpha) * 1000) / 10}% bounds ${f2(v.lower)} to ${f2(v.upper)}, valid at every look`;
  if (n === 0)
    return { ...v, sentence: `The session is over with no pair scored: there is nothing to compare ${a} and ${b} on.` };
  if (v.decided) {
    const [w, l] = v.winner === 'a' ? [a, b] : [b, a];
    return {
      ...v,
      sentence: `The session is over: after ${pairs}, ${w} beats ${l} (${a} − ${b} ${f2(v.meanDifference)}, ${bounds}).`,
    };
  }
  return {
    ...v,
    sentence: `The session is over: after ${pairs} no difference between ${a} and ${b} is clear (${a} − ${b} ${f2(v.meanDifference)}, ${bounds}). Telling them apart needs more pairs, in a new session.`,
  };
}

/**
 * The pre-registered analysis so far (a plan with an analysis plan): B − A under the plan's
 * metric, α, margin, stopping rule and maximum pairs. Undefined without an analysis plan.
 */
export function analysisSoFar(
  plan: SessionPlan,
  journal: readonly SessionJournalRecord[],
  opts: { readonly over?: boolean } = {},
): AnytimeComparison | undefined {
  const ap = plan.analysis;
  if (!ap) return undefined;
  const diffs = scoredPairs(plan, journal).map((p) => metricValue(ap.metric, p.b) - metricValue(ap.metric, p.a));
  const ended = isOver(journal, opts.over);
  return anytimeComparison(diffs, {
    alpha: ap.alpha,
    margin: ap.margin,
    stoppingRule: ap.stoppingRule,
    maxPairs: ap.maxPairs,
    names: { a: ap.a, b: ap.b },
    ended,
  });
}

/** Both policies' progress per completed block, in the order the later of the two was scored. */
export function scoredPairs(plan: SessionPlan, journal: readonly SessionJournalRecord[]): { a: number; b: number }[] {
  if (plan.policies.length !== 2) return [];
  const [a, b] = plan.policies.map((p) => p.label);
  // The latest score of each slot (a slot is scored once per attempt; the last attempt stands).
  const scored = new Map<number, { progress: number; order: number }>();
  journal.forEach((e, order) => {
    if (e.action === JOURNAL.scored && e.slot !== null && typeof e.detail.progress === 'number')
      scored.set(e.slot, { progress: e.detail.progress, order });
  });
  const blocks = new Map<
    number,
    { a?: { progress: number; order: number }; b?: { progress: number; order: number } }
  >();
  for (const r of plan.rollouts) {
    const s = scored.get(r.slot);
    if (!s) continue;
    const blk = blocks.get(r.block) ?? {};
    if (r.policyLabel === a) blk.a = s;
    else if (r.policyLabel === b) blk.b = s;
    blocks.set(r.block, blk);
  }
  const pairs = [...blocks.values()]
    .filter(
      (x): x is { a: { progress: number; order: number }; b: { progress: number; order: number } } =>
        x.a !== undefined && x.b !== undefined,
    )
    .sort((x, y) => Math.max(x.a.order, x.b.order) - Math.max(y.a.order, y.b.order))
    .map((x) => ({ a: x.a.progress, b: x.b.progress }));
  return pairs;
}
