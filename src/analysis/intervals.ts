/**
 * Confidence intervals for a success rate from k successes in n trials — the small-N case
 * a real evaluation session lives in (10–50 rollouts per policy per task).
 * Wilson is the default for reports (good coverage, never outside [0, 1]); Clopper–Pearson is
 * the conservative exact interval, for when a claim must hold at least at the stated level.
 */
import { betaQuantile, normalQuantile } from './special-functions.js';

export interface ProportionInterval {
  readonly method: 'wilson' | 'clopper-pearson';
  readonly successes: number;
  readonly trials: number;
  /** k / n. */
  readonly estimate: number;
  readonly lower: number;
  readonly upper: number;
  /** e.g. 0.95. */
  readonly confidence: number;
}

export interface IntervalOptions {
  /** Two-sided confidence level, default 0.95. */
  readonly confidence?: number;
}

function checkCounts(successes: number, trials: number, confidence: number): void {
  if (!Number.isSafeInteger(trials) || trials < 1)
    throw new RangeError(`trials must be a whole number of at least 1, not ${trials}`);
  if (!Number.isSafeInteger(successes) || successes < 0 || successes > trials) {
    throw new RangeError(`successes must be a whole number from 0 to ${trials} (the trials), not ${successes}`);
  }
  if (!(confidence > 0 && confidence < 1))
    throw new RangeError(`confidence must lie strictly between 0 and 1, not ${confidence}`);
}

/** Wilson score interval: (p̂ + z²/2n ± z·√(p̂(1−p̂)/n + z²/4n²)) / (1 + z²/n). */
export function wilsonInterval(successes: number, trials: number, options: IntervalOptions = {}): ProportionInterval {
  const confidence = options.confidence ?? 0.95;
  checkCounts(successes, trials, confidence);
  const n = trials;
  const p = successes / n;
  const z = normalQuantile(1 - (1 - confidence) / 2);
  const z2 = z * z;
  const denominator = 1 + z2 / n;
  const centre = (p + z2 / (2 * n)) / denominator;
  const halfWidth = (z * Math.sqrt((p * (1 - p)) / n + z2 / (4 * n * n))) / denominator;
  return {
    method: 'wilson',
    successes,
    trials,
    estimate: p,
    // At k = 0 (k = n) the bound is 0 (1) in exact arithmetic; say so exactly, not 1e-17.
    lower: successes === 0 ? 0 : Math.max(0, centre - halfWidth),
    upper: successes === trials ? 1 : Math.min(1, centre + halfWidth),
    confidence,
  };
}

/** Clopper–Pearson exact interval: Beta quantiles (α/2; k, n−k+1) and (1−α/2; k+1, n−k). */
export function clopperPearsonInterval(
  successes: number,
  trials: number,
  options: IntervalOptions = {},
): ProportionInterval {
  const confidence = options.confidence ?? 0.95;
  checkCounts(successes, trials, confidence);
  const alpha = 1 - confidence;
  const k = successes;
  const n = trials;
  return {
    method: 'clopper-pearson',
    successes,
    trials,
    estimate: k / n,
    lower: k === 0 ? 0 : betaQuantile(alpha / 2, k, n - k + 1),
    upper: k === n ? 1 : betaQuantile(1 - alpha / 2, k + 1, n - k),
    confidence,
  };
}
