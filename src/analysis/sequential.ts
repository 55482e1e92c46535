/**
 * An anytime-valid sequential A/B comparison of two policies on paired rollouts (both run from
 * the same layout, back to back), for bounded task progress in [0, 1] — partial credit, not only
 * success. It can be looked at after every pair, and stopped as soon as it says the answer is
 * clear, without inflating the error rate: that is what "anytime-valid" buys over a fixed-N test
 * peeked at repeatedly.
 *
 * Method: a confidence sequence for the mean difference Δ = E[a − b] by betting (Waudby-Smith &
 * Ramdas, "Estimating means of bounded random variables by betting", JRSS-B 2024; the hedged
 * capital process with the predictable plug-in bet, their eq. (26)–(27)). Each pair's difference
 * d ∈ [−1, 1] is mapped to x = (d + 1)/2 ∈ [0, 1]; for each candidate mean m a gambler bets on
 * x being above and below m; m leaves the set once either bettor's wealth, averaged, reaches 1/α.
 * By Ville's inequality the true mean stays in the set at every n with probability ≥ 1 − α, so
 * "Δ = 0 left the set" is a decision whose type-I error is at most α whenever it is made.
 * Written here from the paper (STEP's published code is non-commercial; nothing is taken from it).
 */

export interface PairedResult {
  /** Policy A's task progress on this layout, in [0, 1]. */
  readonly a: number;
  /** Policy B's, from the same initial condition. */
  readonly b: number;
}

export interface SequentialOptions {
  /** Error level, default 0.05: the verdict is wrong with probability at most α, however often it is looked at. */
  readonly alpha?: number;
  /** Names for the sentence, default 'A' and 'B'. */
  readonly names?: { readonly a: string; readonly b: string };
  /** Grid points for the candidate means (default 401: Δ to 0.005). */
  readonly grid?: number;
}

export interface SequentialVerdict {
  /** True once the confidence sequence excludes Δ = 0: stop, the answer is clear. */
  readonly decided: boolean;
  /** 'a' or 'b' when decided. */
  readonly winner?: 'a' | 'b';
  /** One sentence for the operator. */
  readonly sentence: string;
  readonly pairs: number;
  /** Mean of a − b so far (NaN with no pairs). */
  readonly meanDifference: number;
  /** Anytime-valid (1 − α) bounds on E[a − b]; [−1, 1] before any pair. */
  readonly lower: number;
  readonly upper: number;
  readonly alpha: number;
  readonly method: 'betting-confidence-sequence';
}

/**
 * The confidence sequence's bounds on the mean of x ∈ [0, 1] after each of `xs` in turn, as
 * [lo, hi] on the grid: entry t − 1 holds the set after t observations. Exported for tests (the
 * sup over every look is what anytime-valid promises); sequentialVerdict reads the last entry.
 */
export function bettingConfidenceSequencePath(
  xs: readonly number[],
  alpha: number,
  gridPoints = 401,
): { lower: number; upper: number }[] {
  if (!(alpha > 0 && alpha < 1)) throw new RangeError(`alpha must lie strictly between 0 and 1, not ${alpha}`);
  const g = gridPoints;
  const ms = Array.from({ length: g }, (_, i) => i / (g - 1));
  const logPlus = new Float64Array(g);
  const logMinus = new Float64Array(g);
  const threshold = Math.log(1 / alpha);
  const path: { lower: number; upper: number }[] = [];
  // Plug-in bet: λ_t = √(2 log(2/α) / (σ̂²_{t−1} · t · log(1 + t))), σ̂² a running variance started at 1/4,
  // μ̂ started at 1/2 (the paper's choices). Truncated at c/m (c/(1 − m)) with c = 1/2 so wealth stays positive.
  let sum = 0.5;
  let sumSqDev = 0.25;
  let sumX = 0;
  const c = 0.5;
  for (let t = 1; t <= xs.length; t++) {
    const x = xs[t - 1];
    const muPrev = sum / t;
    const varPrev = sumSqDev / t;
    const lambda = Math.sqrt((2 * Math.log(2 / alpha)) / (varPrev * t * Math.log(1 + t)));
    let lower = Number.NaN;
    let upper = Number.NaN;
    for (let k = 0; k < g; k++) {
      const m = ms[k];
      const lp = Math.min(lambda, m > 0 ? c / m : lambda);
      const lm = Math.min(lambda, m < 1 ? c / (1 - m) : lambda);
      logPlus[k] += Math.log1p(lp * (x - m));
      logMinus[k] += Math.log1p(-lm * (x - m));
      // Hedged capital: (K⁺ + K⁻)/2 ≥ 1/α rejects m. The set is an interval; take its grid hull.
      const a = logPlus[k];
      const b = logMinus[k];
      const hi = Math.max(a, b);
      const logHedge = hi + Math.log1p(Math.exp(Math.min(a, b) - hi)) - Math.LN2;
      if (logHedge < threshold) {
        if (Number.isNaN(lower)) lower = m;
        upper = m;
      }
    }
    sum += x;
    sumX += x;
    sumSqDev += (x - muPrev) ** 2;
    if (Number.isNaN(lower)) {
      // Every grid point rejected happens only between grid points: the observed mean then.
      path.push({ lower: sumX / t, upper: sumX / t });
    } else {
      // Widen by one grid step each way so grid rounding never makes the set narrower than it is.
      path.push({ lower: Math.max(0, lower - 1 / (g - 1)), upper: Math.min(1, upper + 1 / (g - 1)) });
    }
  }
  return path;
}

const f2 = (x: number): string => (x >= 0 ? `+${x.toFixed(2)}` : x.toFixed(2));

/**
 * The session engine's live A/B check: call it with every pair so far (in the order they ran);
 * it says whether the comparison is already decided, who wins, and one sentence for the operator.
 * Pure and cheap (a few thousand operations per pair), so it can run after every rollout.
 */
export function sequentialVerdict(
  pairsSoFar: readonly PairedResult[],
  options: SequentialOptions = {},
): SequentialVerdict {
  const alpha = options.alpha ?? 0.05;
  const names = options.names ?? { a: 'A', b: 'B' };
  pairsSoFar.forEach((p, i) => {
    for (const side of ['a', 'b'] as const) {
      const v = p[side];
      if (typeof v !== 'number' || !(v >= 0 && v <= 1))
        throw new RangeError(`pair ${i + 1} has ${side} = ${String(v)}; task progress must be a number from 0 to 1`);
    }
  });
  const n = pairsSoFar.length;
  const base = { pairs: n, alpha, method: 'betting-confidence-sequence' as const };
  if (n === 0) {
    return {
      ...base,
      decided: false,
      sentence: `No pairs yet: run ${names.a} and ${names.b} back to back on the same layout.`,
      meanDifference: Number.NaN,
      lower: -1,
      upper: 1,
    };
  }
  const xs = pairsSoFar.map((p) => (p.a - p.b + 1) / 2);
  const cs = bettingConfidenceSequencePath(xs, alpha, options.grid).at(-1)!;
  const lower = 2 * cs.lower - 1;
  const upper = 2 * cs.upper - 1;
  const meanDifference = pairsSoFar.reduce((s, p) => s + p.a - p.b, 0) / n;
  const level = `${Math.round((1 - alpha) * 1000) / 10}%`;
  const range = `the difference in mean progress lies in [${f2(lower)}, ${f2(upper)}] (${level}, valid at every look)`;
  if (lower > 0 || upper < 0) {
    const winner = lower > 0 ? 'a' : 'b';
    const [w, l] = winner === 'a' ? [names.a, names.b] : [names.b, names.a];
    return {
      ...base,
      decided: true,
      winner,
      meanDifference,
      lower,
      upper,
      sentence: `Decided after ${n} pair${n === 1 ? '' : 's'}: ${w} beats ${l}; ${range}. You can stop.`,
    };
  }
  return {
    ...base,
    decided: false,
    meanDifference,
    lower,
    upper,
    sentence: `Not clear yet after ${n} pair${n === 1 ? '' : 's'} (mean difference ${f2(meanDifference)}): ${range}. Keep going.`,
  };
}
