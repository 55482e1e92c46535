/**
 * The live, anytime-valid comparison of two policies on paired rollouts, as a pre-registered
 * analysis plan asks for it: after every pair, the running estimate of B − A with a (1 − α)
 * confidence sequence, and a verdict in words — "B is better by X: you may stop", "no difference
 * larger than Y: you may stop", or "about N more pairs".
 *
 * The confidence sequence is the betting one of sequential.ts (Waudby-Smith & Ramdas, "Estimating
 * means of bounded random variables by betting", JRSS-B 2024, hedged capital with the predictable
 * plug-in bet), on the paired differences d = b − a ∈ [−1, 1]. It is valid at every look at once
 * (Ville's inequality), so each stopping rule below may be checked after every pair and acted on
 * the first time it holds: "excludes 0" is a difference found with error ≤ α, and "lies within
 * ±margin" bounds |B − A| by the margin with the same guarantee — one sequence, any stopping time.
 * No npm package implements confidence sequences (none in the registry list this station draws
 * from), and the pure room rules out CommonJS statistics libraries: hence written here, from the
 * paper.
 *
 * "About N more pairs" projects the sequence forward by replaying the pairs seen so far in turn
 * ("if the next pairs look like these") until a rule would hold, capped at the plan's maximum. It
 * is a forecast for planning the hour, not part of any decision.
 */
import { bettingConfidenceSequencePath } from './sequential.js';

/** When the session may stop: on a difference only, or also on "no difference larger than the margin". */
export const STOPPING_RULES = ['difference', 'difference-or-no-difference'] as const;
export type StoppingRule = (typeof STOPPING_RULES)[number];

export interface AnytimeOptions {
  readonly alpha: number;
  /** |B − A| below this is "no difference" (used by 'difference-or-no-difference'). */
  readonly margin: number;
  readonly stoppingRule: StoppingRule;
  /** The fixed-N plan's pairs: the comparison ends there, decided or not. */
  readonly maxPairs: number;
  /** Labels for the sentence, default 'A' and 'B'. */
  readonly names?: { readonly a: string; readonly b: string };
  /** Grid points of the sequence (default 401: B − A to 0.01). */
  readonly grid?: number;
  /** Forecast the pairs still needed (default true); off, the sentence says only "keep going". */
  readonly forecast?: boolean;
  /** The session ended (all run, some unscored, or ended by the operator): no more pairs are coming. */
  readonly ended?: boolean;
}

/**
 * A session's pre-registered analysis as the report shows it: the plan's terms, the verdict over
 * its scored pairs, and what stopping early saved against the fixed-N plan.
 */
export interface PreregisteredAnalysisSummary {
  readonly session: number;
  readonly analysisSha256: string;
  readonly metric: string;
  readonly alpha: number;
  readonly margin: number;
  readonly stoppingRule: StoppingRule;
  readonly a: string;
  readonly b: string;
  readonly verdict: AnytimeComparison;
  readonly stoppedEarly: boolean;
  /** The fixed-N plan's rollouts, those run (done slots), and those stopping early saved. */
  readonly plannedRollouts: number;
  readonly rolloutsRun: number;
  readonly rolloutsSaved: number;
  /** Station time the saved rollouts would have taken, at the session's own mean seconds per rollout. */
  readonly minutesSaved: number;
  readonly sentence: string;
}

/**
 * b-better / a-better: the sequence excludes 0. no-difference: it lies within ±margin.
 * continue: neither yet. undecided: the plan's maximum pairs are done with neither.
 */
export type AnytimeVerdictKind = 'b-better' | 'a-better' | 'no-difference' | 'continue' | 'undecided';

export interface AnytimeComparison {
  readonly kind: AnytimeVerdictKind;
  /** True when a stopping rule holds (the session may stop, or ends itself with --stop-early). */
  readonly stop: boolean;
  readonly pairs: number;
  readonly maxPairs: number;
  /** Mean of b − a so far (NaN with no pairs). */
  readonly estimate: number;
  /** (1 − α) anytime-valid bounds on E[b − a]. */
  readonly lower: number;
  readonly upper: number;
  readonly alpha: number;
  readonly margin: number;
  readonly stoppingRule: StoppingRule;
  /** Forecast of the pairs still needed (continue only); null when the plan's maximum comes first. */
  readonly morePairs: number | null;
  /** Pairs the fixed-N plan would still run: maxPairs − pairs once stopped, else 0. */
  readonly pairsSaved: number;
  readonly sentence: string;
  readonly method: 'betting-confidence-sequence';
}

const signed = (x: number): string => (x >= 0 ? `+${x.toFixed(2)}` : x.toFixed(2));

/** Which rule holds for the bounds [lower, upper] on B − A, if any. */
function ruleHolds(
  lower: number,
  upper: number,
  margin: number,
  rule: StoppingRule,
): 'b-better' | 'a-better' | 'no-difference' | undefined {
  if (lower > 0) return 'b-better';
  if (upper < 0) return 'a-better';
  if (rule === 'difference-or-no-difference' && lower >= -margin && upper <= margin) return 'no-difference';
  return undefined;
}

export function checkAnytimeOptions(o: AnytimeOptions): void {
  if (!(o.alpha > 0 && o.alpha < 0.5)) throw new RangeError(`α must lie between 0 and 0.5, not ${o.alpha}`);
  if (!(o.margin > 0 && o.margin < 1))
    throw new RangeError(`the no-difference margin must lie between 0 and 1, not ${o.margin}`);
  if (!STOPPING_RULES.includes(o.stoppingRule))
    throw new RangeError(`the stopping rule is one of ${STOPPING_RULES.join(', ')}, not ${String(o.stoppingRule)}`);
  if (!Number.isSafeInteger(o.maxPairs) || o.maxPairs < 1)
    throw new RangeError(`the maximum number of pairs must be a whole number of at least 1, not ${o.maxPairs}`);
}

/**
 * The comparison after `diffs` (each pair's b − a in [−1, 1], in the order the pairs completed).
 * Pure; about (maxPairs × grid) operations with the forecast, so cheap enough after every pair.
 */
export function anytimeComparison(diffs: readonly number[], o: AnytimeOptions): AnytimeComparison {
  checkAnytimeOptions(o);
  diffs.forEach((d, i) => {
    if (typeof d !== 'number' || !(d >= -1 && d <= 1))
      throw new RangeError(
        `pair ${i + 1}'s difference is ${String(d)}; a difference of task progress lies from −1 to 1`,
      );
  });
  const names = o.names ?? { a: 'A', b: 'B' };
  const n = diffs.length;
  const level = `${Math.round((1 - o.alpha) * 1000) / 10}%`;
  const base = {
    pairs: n,
    maxPairs: o.maxPairs,
    alpha: o.alpha,
    margin: o.margin,
    stoppingRule: o.stoppingRule,
    method: 'betting-confidence-sequence' as const,
  };
  const toDiff = (cs: { lower: number; upper: number }) => ({ lower: 2 * cs.lower - 1, upper: 2 * cs.upper - 1 });
  const xs = diffs.map((d) => (d + 1) / 2);
  const now = n === 0 ? { lower: -1, upper: 1 } : toDiff(bettingConfidenceSequencePath(xs, o.alpha, o.grid).at(-1)!);
  const estimate = n === 0 ? Number.NaN : diffs.reduce((s, d) => s + d, 0) / n;
  const range = `${level} anytime-valid ${signed(now.lower)} to ${signed(now.upper)}`;
  const held = n === 0 ? undefined : ruleHolds(now.lower, now.upper, o.margin, o.stoppingRule);
  const saved = Math.max(0, o.maxPairs - n);
  if (held === 'b-better' || held === 'a-better') {
    const [w, l] = held === 'b-better' ? [names.b, names.a] : [names.a, names.b];
    const by = Math.abs(estimate);
    return {
      ...base,
      kind: held,
      stop: true,
      estimate,
      ...now,
      morePairs: null,
      pairsSaved: saved,
      sentence: `${w} is better than ${l} by ${by.toFixed(2)} (${range}) after ${n} pair${n === 1 ? '' : 's'}: you may stop.`,
    };
  }
  if (held === 'no-difference') {
    const y = Math.max(Math.abs(now.lower), Math.abs(now.upper));
    return {
      ...base,
      kind: held,
      stop: true,
      estimate,
      ...now,
      morePairs: null,
      pairsSaved: saved,
      sentence: `No difference larger than ${y.toFixed(2)} between ${names.a} and ${names.b} (${range}) after ${n} pair${n === 1 ? '' : 's'}: you may stop.`,
    };
  }
  if (n >= o.maxPairs || o.ended) {
    const done =
      n >= o.maxPairs
        ? o.maxPairs === 1
          ? "The plan's one pair is done"
          : `The plan's ${o.maxPairs} pairs are done`
        : `The session ended after ${n} of the plan's ${o.maxPairs} pair${o.maxPairs === 1 ? '' : 's'}`;
    const where = n === 0 ? 'no pair was scored' : `${names.b} − ${names.a} is ${signed(estimate)} (${range})`;
    return {
      ...base,
      kind: 'undecided',
      stop: true,
      estimate,
      ...now,
      morePairs: null,
      pairsSaved: 0,
      sentence: `${done} without a verdict: ${where}.`,
    };
  }
  const more = o.forecast === false ? null : forecastMorePairs(xs, o);
  const sofar =
    n === 0
      ? 'No pairs yet'
      : `Not clear yet after ${n} pair${n === 1 ? '' : 's'}: ${names.b} − ${names.a} is ${signed(estimate)} (${range})`;
  const left = o.maxPairs - n;
  const tail =
    o.forecast === false
      ? 'keep going'
      : more === null
        ? `more pairs than the plan's ${left} left would be needed if the next pairs look like these`
        : `about ${more} more pair${more === 1 ? '' : 's'}${n < 3 ? ' at the least' : ''}`;
  return {
    ...base,
    kind: 'continue',
    stop: false,
    estimate,
    ...now,
    morePairs: more,
    pairsSaved: 0,
    sentence: `${sofar}; ${tail}.`,
  };
}

/**
 * The first look at which a stopping rule holds over `diffs` (one pass of the sequence), with the
 * verdict's kind; undefined if none does. The same rules as anytimeComparison, for simulating
 * how many pairs a plan needs (tests, docs/evaluation.md's measurements).
 */
export function anytimeStoppingTime(
  diffs: readonly number[],
  o: AnytimeOptions,
): { pairs: number; kind: 'b-better' | 'a-better' | 'no-difference' } | undefined {
  checkAnytimeOptions(o);
  const path = bettingConfidenceSequencePath(
    diffs.slice(0, o.maxPairs).map((d) => (d + 1) / 2),
    o.alpha,
    o.grid,
  );
  for (let t = 0; t < path.length; t++) {
    const kind = ruleHolds(2 * path[t].lower - 1, 2 * path[t].upper - 1, o.margin, o.stoppingRule);
    if (kind) return { pairs: t + 1, kind };
  }
  return undefined;
}

/**
 * Pairs still needed if the coming pairs replay those seen (in turn), or null if the plan's
 * maximum comes first. With fewer than 3 pairs there is too little to replay: the forecast is the
 * best case (every coming pair the largest difference in the direction seen, or +1 with none),
 * said as "at the least".
 */
function forecastMorePairs(xs: readonly number[], o: AnytimeOptions): number | null {
  const n = xs.length;
  const mean = n === 0 ? 1 : xs.reduce((s, x) => s + x, 0) / n;
  const future = (k: number): number => (n >= 3 ? xs[k % n] : mean >= 0.5 ? 1 : 0);
  const path = bettingConfidenceSequencePath(
    [...xs, ...Array.from({ length: o.maxPairs - n }, (_, k) => future(k))],
    o.alpha,
    o.grid,
  );
  for (let t = n; t < path.length; t++) {
    const lower = 2 * path[t].lower - 1;
    const upper = 2 * path[t].upper - 1;
    if (ruleHolds(lower, upper, o.margin, o.stoppingRule)) return t + 1 - n;
  }
  return null;
}
