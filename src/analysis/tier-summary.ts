/**
 * Report data per tier: mean task progress with a layout bootstrap interval, and full-success
 * counts with Wilson and Clopper–Pearson intervals. The sim sweep, the session report and the
 * station UI all call this, so one policy's numbers read the same everywhere.
 */
import { bootstrapMeanOverLayouts, type BootstrapInterval } from './bootstrap.js';
import { clopperPearsonInterval, wilsonInterval, type ProportionInterval } from './intervals.js';

export interface TierRollout {
  readonly tier: number;
  /** Task progress in [0, 1]. */
  readonly progress: number;
  /**
   * The layout the rollout ran on (e.g. its index in the layout set). Rollouts sharing a layout
   * are resampled together; without it each rollout counts as its own layout.
   */
  readonly layoutIndex?: number;
  /** Whether it counts as a success; default: progress === 1 (the whole task done). */
  readonly success?: boolean;
}

export interface TierSummary {
  /** The tier, or 'all' for every tier pooled. */
  readonly tier: number | 'all';
  readonly rollouts: number;
  readonly layouts: number;
  readonly meanProgress: number;
  readonly progressInterval: BootstrapInterval;
  readonly successes: number;
  readonly successRate: number;
  /**
   * Bootstrap over layouts of the success rate. Wilson and Clopper–Pearson treat every rollout as
   * an independent trial, which sim repeats of one layout are not; when layouts < rollouts this is
   * the interval to read.
   */
  readonly successRateInterval: BootstrapInterval;
  readonly successWilson: ProportionInterval;
  readonly successClopperPearson: ProportionInterval;
}

export interface TierSummaryOptions {
  /** Bootstrap seed: the same rollouts and seed give the same intervals. */
  readonly seed: number;
  readonly resamples?: number;
  readonly confidence?: number;
}

function summarize(tier: number | 'all', rollouts: readonly TierRollout[], options: TierSummaryOptions): TierSummary {
  const isSuccess = (r: TierRollout): boolean => r.success ?? r.progress === 1;
  const byLayout = new Map<string, TierRollout[]>();
  rollouts.forEach((r, i) => {
    const key = r.layoutIndex === undefined ? `rollout:${i}` : `layout:${r.tier}:${r.layoutIndex}`;
    const list = byLayout.get(key);
    if (list) list.push(r);
    else byLayout.set(key, [r]);
  });
  const groups = [...byLayout.values()];
  const progressInterval = bootstrapMeanOverLayouts(groups.map((g) => g.map((r) => r.progress)), options);
  const successRateInterval = bootstrapMeanOverLayouts(groups.map((g) => g.map((r) => (isSuccess(r) ? 1 : 0))), options);
  const successes = rollouts.filter(isSuccess).length;
  const intervalOptions = { confidence: options.confidence ?? 0.95 };
  return {
    tier,
    rollouts: rollouts.length,
    layouts: byLayout.size,
    meanProgress: progressInterval.estimate,
    progressInterval,
    successes,
    successRate: successes / rollouts.length,
    successRateInterval,
    successWilson: wilsonInterval(successes, rollouts.length, intervalOptions),
    successClopperPearson: clopperPearsonInterval(successes, rollouts.length, intervalOptions),
  };
}

/**
 * One summary per tier present (ascending), then one for all tiers pooled.
 * Throws a RangeError naming the rollout when a progress value is not a number in [0, 1].
 */
export function summarizeByTier(rollouts: readonly TierRollout[], options: TierSummaryOptions): TierSummary[] {
  if (rollouts.length === 0) return [];
  rollouts.forEach((r, i) => {
    if (typeof r.progress !== 'number' || !(r.progress >= 0 && r.progress <= 1)) throw new RangeError(`rollout ${i} has progress ${String(r.progress)}; it must be a number from 0 to 1`);
    if (!Number.isSafeInteger(r.tier)) throw new RangeError(`rollout ${i} has tier ${String(r.tier)}; it must be a whole number`);
  });
  const tiers = [...new Set(rollouts.map((r) => r.tier))].sort((a, b) => a - b);
  // Each tier gets its own stream derived from the seed, so adding a tier does not move another's interval.
  const perTier = tiers.map((tier) => summarize(tier, rollouts.filter((r) => r.tier === tier), { ...options, seed: options.seed + tier }));
  return [...perTier, summarize('all', rollouts, options)];
}
