/**
 * Sim as a control variate for the real mean (prediction-powered inference; Angelopoulos et al.,
 * "Prediction-powered inference", Science 2023, and its power-tuned form PPI++, 2024):
 *
 *   μ̂ = mean_i(F_i − β·G_i) + β·mean_j(G_j)
 *
 * F_i is the real progress on layout i, G_i the sim progress on the same layout (its repeats
 * averaged), and the second mean runs over every layout with a sim result (the paired ones and
 * the sim-only ones). The real rollouts correct sim's bias; sim's many layouts shrink the
 * variance. β = 0 is the real-only mean. β is fitted by K-fold cross-fitting on the paired
 * layouts — each layout's β comes from the other folds, β = Cov(F, G) / ((1 + n/N)·Var(G)) (the
 * PPI++ variance-optimal weight) — so the same F_i never tunes its own correction.
 *
 * The interval is a percentile bootstrap that resamples paired and sim-only layouts separately
 * and refits β in every resample; the real-only interval comes from the same resamples of the
 * paired layouts, so the two widths compare like with like. The gain is said as "equivalent real
 * layouts": how many real rollouts a real-only interval would need to be as narrow
 * (n · (width_real / width_cv)², the usual 1/√n scaling).
 */
import { createRng } from '../layouts/random.js';
import { quantileSorted } from './bootstrap.js';

export interface PairedLayout {
  /** Real progress on this layout (its real rollouts averaged), in [0, 1]. */
  readonly real: number;
  /** Sim progress on this layout (its repeats averaged). */
  readonly sim: number;
}

export interface ControlVariateOptions {
  readonly seed: number;
  readonly resamples?: number;
  readonly confidence?: number;
  /** Cross-fitting folds, default min(5, paired layouts). */
  readonly folds?: number;
}

export interface ControlVariateEstimate {
  readonly method: 'ppi-cross-fit';
  /** Paired layouts (real and sim) and every layout with sim. */
  readonly pairedLayouts: number;
  readonly simLayouts: number;
  readonly folds: number;
  /** The cross-fitted β per fold, and their mean (what the estimate used, on average). */
  readonly betaByFold: readonly number[];
  readonly beta: number;
  readonly estimate: number;
  readonly lower: number;
  readonly upper: number;
  /** The real-only mean and its interval from the same resamples. */
  readonly realOnly: { readonly estimate: number; readonly lower: number; readonly upper: number };
  /** width_cv / width_real (below 1 is a gain). */
  readonly widthRatio: number | null;
  /** Real layouts a real-only interval would need to be this narrow. */
  readonly equivalentRealLayouts: number | null;
  readonly confidence: number;
  readonly resamples: number;
  readonly seed: number;
}

function mean(xs: ArrayLike<number>): number {
  let s = 0;
  for (let i = 0; i < xs.length; i++) s += xs[i];
  return s / xs.length;
}

/** β from the training rows: Cov(F, G) / ((1 + n/N)·Var(G)); 0 when sim has no spread there. */
function fitBeta(real: readonly number[], sim: readonly number[], nOverN: number): number {
  if (real.length < 2) return 0;
  const fm = mean(real);
  const gm = mean(sim);
  let cov = 0;
  let vg = 0;
  for (let i = 0; i < real.length; i++) {
    cov += (real[i] - fm) * (sim[i] - gm);
    vg += (sim[i] - gm) ** 2;
  }
  if (vg <= 1e-12) return 0;
  return cov / ((1 + nOverN) * vg);
}

/** The cross-fitted estimate for one sample; fold of paired row i is i mod K. */
function crossFit(
  paired: readonly PairedLayout[],
  allSimMean: number,
  nOverN: number,
  folds: number,
): { estimate: number; betas: number[] } {
  const n = paired.length;
  const betas: number[] = [];
  let total = 0;
  for (let k = 0; k < folds; k++) {
    const trainF: number[] = [];
    const trainG: number[] = [];
    for (let i = 0; i < n; i++) {
      if (i % folds !== k) {
        trainF.push(paired[i].real);
        trainG.push(paired[i].sim);
      }
    }
    const beta = fitBeta(trainF, trainG, nOverN);
    betas.push(beta);
    for (let i = k; i < n; i += folds) total += paired[i].real - beta * paired[i].sim + beta * allSimMean;
  }
  return { estimate: total / n, betas };
}

/**
 * The control-variate estimate of the real mean. `paired`: layouts with both real and sim results;
 * `simOnly`: sim progress on layouts with no real rollout (the sim sweep's other layouts).
 */
export function controlVariateMean(
  paired: readonly PairedLayout[],
  simOnly: readonly number[],
  options: ControlVariateOptions,
): ControlVariateEstimate {
  const resamples = options.resamples ?? 4000;
  const confidence = options.confidence ?? 0.95;
  const n = paired.length;
  if (n < 2)
    throw new RangeError(
      `a control-variate estimate needs at least 2 layouts with both real and sim results, not ${n}`,
    );
  for (const [i, p] of paired.entries()) {
    if (!(p.real >= 0 && p.real <= 1 && p.sim >= 0 && p.sim <= 1))
      throw new RangeError(`paired layout ${i} has real ${p.real}, sim ${p.sim}; both must lie in [0, 1]`);
  }
  for (const [i, g] of simOnly.entries())
    if (!(g >= 0 && g <= 1)) throw new RangeError(`sim-only layout ${i} has progress ${g}; it must lie in [0, 1]`);
  const folds = Math.max(2, Math.min(options.folds ?? 5, n));
  const N = n + simOnly.length;
  const nOverN = n / N;
  const simAll = (p: readonly PairedLayout[], g: readonly number[]): number =>
    (p.reduce((s, x) => s + x.sim, 0) + g.reduce((s, x) => s + x, 0)) / (p.length + g.length);
  const point = crossFit(paired, simAll(paired, simOnly), nOverN, folds);
  const realMean = mean(paired.map((p) => p.real));

  const rng = createRng(options.seed);
  const cv = new Float64Array(resamples);
  const ro = new Float64Array(resamples);
  const m = simOnly.length;
  const p2: PairedLayout[] = new Array<PairedLayout>(n);
  const g2: number[] = new Array<number>(m);
  for (let b = 0; b < resamples; b++) {
    for (let i = 0; i < n; i++) p2[i] = paired[Math.floor(rng.next() * n)];
    for (let j = 0; j < m; j++) g2[j] = simOnly[Math.floor(rng.next() * m)];
    cv[b] = crossFit(p2, simAll(p2, g2), nOverN, folds).estimate;
    ro[b] = mean(p2.map((p) => p.real));
  }
  cv.sort();
  ro.sort();
  const a = 1 - confidence;
  const clip = (x: number): number => Math.min(1, Math.max(0, x));
  const lower = clip(quantileSorted(cv, a / 2));
  const upper = clip(quantileSorted(cv, 1 - a / 2));
  const rLower = quantileSorted(ro, a / 2);
  const rUpper = quantileSorted(ro, 1 - a / 2);
  const wCv = upper - lower;
  const wReal = rUpper - rLower;
  const widthRatio = wReal > 0 ? wCv / wReal : null;
  return {
    method: 'ppi-cross-fit',
    pairedLayouts: n,
    simLayouts: N,
    folds,
    betaByFold: point.betas,
    beta: mean(point.betas),
    estimate: clip(point.estimate),
    lower,
    upper,
    realOnly: { estimate: realMean, lower: rLower, upper: rUpper },
    widthRatio,
    equivalentRealLayouts: widthRatio === null || widthRatio === 0 ? null : n / widthRatio ** 2,
    confidence,
    resamples,
    seed: options.seed,
  };
}
