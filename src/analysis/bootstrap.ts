/**
 * Seeded percentile bootstrap for mean task progress. Progress is continuous (0.5 for half the
 * bottles), so binomial intervals do not apply; the bootstrap makes no distributional claim.
 *
 * Resampling is over *layouts*, not rollouts: sim repeats each layout many times, and those
 * repeats are not independent draws of the tier distribution. Each resample draws layouts with
 * replacement and averages their per-layout means; with one rollout per layout this is the
 * ordinary bootstrap of the mean. The seed makes the interval reproducible to the last digit.
 */
import { createRng } from '../layouts/random.js';

export interface BootstrapOptions {
  readonly seed: number;
  /** Number of bootstrap resamples, default 10 000. */
  readonly resamples?: number;
  /** Two-sided confidence level, default 0.95. */
  readonly confidence?: number;
}

export interface BootstrapInterval {
  readonly method: 'percentile-bootstrap';
  /** Mean over layouts of each layout's mean progress. */
  readonly estimate: number;
  readonly lower: number;
  readonly upper: number;
  readonly confidence: number;
  /** Layouts (resampling units) the interval rests on; 1 gives a zero-width interval that means nothing. */
  readonly layouts: number;
  /** Rollouts behind the layouts. */
  readonly rollouts: number;
  readonly resamples: number;
  readonly seed: number;
}

/** The q-quantile of sorted values, linear interpolation between order statistics (R's type 7). */
export function quantileSorted(sorted: ArrayLike<number>, q: number): number {
  if (sorted.length === 0) throw new RangeError('the quantile of no values is undefined');
  const h = (sorted.length - 1) * q;
  const lo = Math.floor(h);
  const hi = Math.min(sorted.length - 1, lo + 1);
  return sorted[lo] + (h - lo) * (sorted[hi] - sorted[lo]);
}

function mean(values: readonly number[]): number {
  let s = 0;
  for (const v of values) s += v;
  return s / values.length;
}

/**
 * Percentile-bootstrap interval for mean progress, resampling layouts.
 * `layouts[i]` holds the progress values of every rollout on layout i.
 */
export function bootstrapMeanOverLayouts(
  layouts: readonly (readonly number[])[],
  options: BootstrapOptions,
): BootstrapInterval {
  let rollouts = 0;
  const layoutMeans = layouts.map((values, i) => {
    if (values.length === 0) throw new RangeError(`layout ${i} has no results to bootstrap`);
    rollouts += values.length;
    return mean(values);
  });
  return bootstrapLayoutMeans(layoutMeans, rollouts, options);
}

/**
 * The same bootstrap from each layout's mean alone (what a store aggregate gives): the resamples
 * only ever need per-layout means, so this is exact, not an approximation.
 */
export function bootstrapLayoutMeans(
  layoutMeans: readonly number[],
  rollouts: number,
  options: BootstrapOptions,
): BootstrapInterval {
  const resamples = options.resamples ?? 10_000;
  const confidence = options.confidence ?? 0.95;
  if (layoutMeans.length === 0) throw new RangeError('a bootstrap needs at least one layout with a result');
  if (!Number.isSafeInteger(resamples) || resamples < 1)
    throw new RangeError(`resamples must be a whole number of at least 1, not ${resamples}`);
  if (!(confidence > 0 && confidence < 1))
    throw new RangeError(`confidence must lie strictly between 0 and 1, not ${confidence}`);
  layoutMeans.forEach((m, i) => {
    if (!Number.isFinite(m)) throw new RangeError(`layout ${i} has a progress value that is not a number (${m})`);
  });
  const rng = createRng(options.seed);
  const n = layoutMeans.length;
  const means = new Float64Array(resamples);
  for (let b = 0; b < resamples; b++) {
    let s = 0;
    for (let i = 0; i < n; i++) s += layoutMeans[Math.floor(rng.next() * n)];
    means[b] = s / n;
  }
  means.sort();
  const alpha = 1 - confidence;
  return {
    method: 'percentile-bootstrap',
    estimate: mean(layoutMeans),
    lower: quantileSorted(means, alpha / 2),
    upper: quantileSorted(means, 1 - alpha / 2),
    confidence,
    layouts: n,
    rollouts,
    resamples,
    seed: options.seed,
  };
}

/** Percentile-bootstrap interval for the mean of independent values (one rollout per layout). */
export function bootstrapMean(values: readonly number[], options: BootstrapOptions): BootstrapInterval {
  return bootstrapMeanOverLayouts(
    values.map((v) => [v]),
    options,
  );
}
