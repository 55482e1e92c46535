/**
 * The compare view's numbers: one policy on one layout set, real vs sim task progress per layout
 * and per tier, from the store's rollout rows. A rollout counts when it is valid and scored (its
 * latest operator score, else its own sim score); the others are listed, never averaged. Tier
 * means and their intervals come from src/analysis (the same numbers as the sweep and the report).
 */
import { summarizeByTier, type TierSummary } from '../analysis/tier-summary.js';
import type { RolloutRecord } from '../store/records.js';
import type { CompareChoice, CompareLayoutRow, CompareSide, CompareTierRow, CompareTierSide, CompareView } from './api-types.js';

/** Bootstrap seed of the compare view's intervals: fixed, so a reload shows the same numbers. */
const INTERVAL_SEED = 0;

const counts = (r: RolloutRecord): boolean => r.status === 'valid' && r.effectiveProgress !== null;

function side(rows: readonly RolloutRecord[]): CompareSide {
  const counted = rows.filter(counts);
  const meanProgress = counted.length ? counted.reduce((s, r) => s + r.effectiveProgress!, 0) / counted.length : null;
  return { rollouts: rows.length, counted: counted.length, meanProgress, notCounted: rows.length - counted.length };
}

function tierSide(t: TierSummary | undefined): CompareTierSide | null {
  if (!t) return null;
  return { layouts: t.layouts, rollouts: t.rollouts, meanProgress: t.meanProgress, lower: t.progressInterval.lower, upper: t.progressInterval.upper };
}

export interface CompareInput {
  readonly policy: CompareView['policy'];
  readonly layoutSet: { readonly sha256: string; readonly task: string; readonly layouts: readonly { readonly index: number; readonly tier: number }[] };
  /** This policy's rollouts on this set, real and sim. */
  readonly rollouts: readonly RolloutRecord[];
  isCellMarker(calibrationSha256: string): boolean;
}

export function compareView(o: CompareInput): CompareView {
  const real = o.rollouts.filter((r) => r.kind === 'real');
  const sim = o.rollouts.filter((r) => r.kind === 'sim');
  const layouts: CompareLayoutRow[] = o.layoutSet.layouts.map((l) => {
    const r = side(real.filter((x) => x.layoutIndex === l.index));
    const s = side(sim.filter((x) => x.layoutIndex === l.index));
    return { layout: l.index, tier: l.tier, real: r, sim: s, gap: r.meanProgress !== null && s.meanProgress !== null ? r.meanProgress - s.meanProgress : null };
  });
  const summary = (rows: readonly RolloutRecord[]): TierSummary[] =>
    summarizeByTier(rows.filter(counts).map((r) => ({ tier: r.tier, progress: r.effectiveProgress!, layoutIndex: r.layoutIndex })), { seed: INTERVAL_SEED });
  const realTiers = summary(real);
  const simTiers = summary(sim);
  const tierKeys: (number | 'all')[] = [...new Set(o.layoutSet.layouts.map((l) => l.tier))].sort((a, b) => a - b);
  tierKeys.push('all');
  const tiers: CompareTierRow[] = tierKeys.map((tier) => ({ tier, real: tierSide(realTiers.find((t) => t.tier === tier)), sim: tierSide(simTiers.find((t) => t.tier === tier)) }));
  return {
    policy: o.policy,
    layoutSet: { sha256: o.layoutSet.sha256, task: o.layoutSet.task, layoutCount: o.layoutSet.layouts.length },
    layouts,
    tiers,
    realOnEmulatedCell: real.some((r) => r.calibrationSha256s.some((h) => o.isCellMarker(h))),
  };
}

/** Every (policy, layout set) with stored rollouts, most recently run first. */
export function compareChoices(rollouts: readonly RolloutRecord[], policyOf: (id: number) => CompareChoice['policy'], taskOf: (sha: string) => string | null): CompareChoice[] {
  const byKey = new Map<string, { policyId: number; sha: string; real: number; sim: number; last: number }>();
  for (const r of rollouts) {
    const key = `${r.policyId}:${r.layoutSetSha256}`;
    const e = byKey.get(key) ?? { policyId: r.policyId, sha: r.layoutSetSha256, real: 0, sim: 0, last: 0 };
    if (r.kind === 'real') e.real += 1;
    else e.sim += 1;
    e.last = Math.max(e.last, r.id);
    byKey.set(key, e);
  }
  return [...byKey.values()].sort((a, b) => b.last - a.last).map((e) => ({ policy: policyOf(e.policyId), layoutSet: e.sha, task: taskOf(e.sha), realRollouts: e.real, simRollouts: e.sim }));
}
