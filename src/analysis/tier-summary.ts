/**
 * Report data per tier: mean task progress with a layout bootstrap interval, and full-success
 * counts with Wilson and Clopper–Pearson intervals. The sim sweep, the session report and the
 * station UI all call this, so one policy's numbers read the same everywhere.
 */
import { bootstrapLayoutMeans, type BootstrapInterval } from './bootstrap.js';
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

/** What one layout's rollouts came to: enough for every number in a tier summary. */
export interface LayoutOutcome {
  readonly tier: number;
  /** Rollouts counted on this layout (at least 1). */
  readonly rollouts: number;
  /** Mean task progress over them. */
  readonly meanProgress: number;
  /** How many of them were successes. */
  readonly successes: number;
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

function summarize(tier: number | 'all', layouts: readonly LayoutOutcome[], options: TierSummaryOptions): TierSummary {
  let rollouts = 0;
  let successes = 0;
  for (const l of layouts) {
    rollouts += l.rollouts;
    successes += l.successes;
  }
  const progressInterval = bootstrapLayoutMeans(
    layouts.map((l) => l.meanProgress),
    rollouts,
    options,
  );
  const successRateInterval = bootstrapLayoutMeans(
    layouts.map((l) => l.successes / l.rollouts),
    rollouts,
    options,
  );
  const intervalOptions = { confidence: options.confidence ?? 0.95 };
  return {
    tier,
    rollouts,
    layouts: layouts.length,
    meanProgress: progressInterval.estimate,
    progressInterval,
    successes,
    successRate: successes / rollouts,
    successRateInterval,
    successWilson: wilsonInterval(successes, rollouts, intervalOptions),
    successClopperPearson: clopperPearsonInterval(successes, rollouts, intervalOptions),
  };
}

/**
 * One summary per tier present (ascending), then one for all tiers pooled, from per-layout
 * outcomes (e.g. Store.layoutOutcomes, which aggregates in SQL).
 */
export function summarizeLayoutsByTier(layouts: readonly LayoutOutcome[], options: TierSummaryOptions): TierSummary[] {
  layouts.forEach((l, i) => {
    if (!Number.isSafeInteger(l.tier))
      throw new RangeError(`layout ${i} has tier ${String(l.tier)}; it must be a whole number`);
    if (!Number.isSafeInteger(l.rollouts) || l.rollouts < 1)
      throw new RangeError(`layout ${i} has ${String(l.rollouts)} rollouts; it needs at least 1`);
    if (!(l.meanProgress >= 0 && l.meanProgress <= 1))
      throw new RangeError(`layout ${i} has mean progress ${String(l.meanProgress)}; it must be a number from 0 to 1`);
    if (!Number.isSafeInteger(l.successes) || l.successes < 0 || l.successes > l.rollouts)
      throw new RangeError(`layout ${i} has ${String(l.successes)} successes of ${l.rollouts}`);
  });
  if (layouts.length === 0) return [];
  const tiers = [...new Set(layouts.map((l) => l.tier))].sort((a, b) => a - b);
  // Each tier gets its own stream derived from the seed, so adding a tier does not move another's interval.
  const perTier = tiers.map((tier) =>
    summarize(
      tier,
      layouts.filter((l) => l.tier === tier),
      { ...options, seed: options.seed + tier },
    ),
  );
  return [...perTier, summarize('all', layouts, options)];
}

/**
 * One summary per tier present (ascending), then one for all tiers pooled, from single rollouts.
 * Throws a RangeError naming the rollout when a progress value is not a number in [0, 1].
 */
export function summarizeByTier(rollouts: readonly TierRollout[], options: TierSummaryOptions): TierSummary[] {
  rollouts.forEach((r, i) => {
    if (typeof r.progress !== 'number' || !(r.progress >= 0 && r.progress <= 1))
      throw new RangeError(`rollout ${i} has progress ${String(r.progress)}; it must be a number from 0 to 1`);
    if (!Number.isSafeInteger(r.tier))
      throw new RangeError(`rollout ${i} has tier ${String(r.tier)}; it must be a whole number`);
  });
  const byLayout = new Map<string, TierRollout[]>();
  rollouts.forEach((r, i) => {
    const key = r.layoutIndex === undefined ? `rollout:${i}` : `layout:${r.tier}:${r.layoutIndex}`;
    const list = byLayout.get(key);
    if (list) list.push(r);
    else byLayout.set(key, [r]);
  });
  const layouts = [...byLayout.values()].map((group): LayoutOutcome => {
    let progressSum = 0;
    for (const r of group) progressSum += r.progress;
    return {
      tier: group[0].tier,
      rollouts: group.length,
      meanProgress: progressSum / group.length,
      successes: group.filter((r) => r.success ?? r.progress === 1).length,
    };
  });
  return summarizeLayoutsByTier(layouts, options);
}
