/**
 * How well sim ranks policies the way the real rig does, with SIMPLER's two metrics.
 * Inputs are per-policy pairs `{ policy, sim, real }`, never two bare arrays: MMRV measures
 * violations on the *real* values, so swapping sim and real changes the number, and a named
 * field cannot be swapped by accident.
 */

export interface PolicyPair {
  readonly policy: string;
  /** The policy's mean task progress (or success rate) in sim, in [0, 1]. */
  readonly sim: number;
  /** The same on the real rig, in [0, 1]. */
  readonly real: number;
}

export type PearsonResult =
  | { readonly r: number; readonly undefinedBecause?: undefined }
  /** r is undefined when either side has no spread (every policy scored the same). */
  | { readonly r: null; readonly undefinedBecause: string };

function checkPairs(pairs: readonly PolicyPair[], what: string): void {
  if (pairs.length === 0) throw new RangeError(`${what} needs at least one policy`);
  for (const p of pairs) {
    if (!Number.isFinite(p.sim) || !Number.isFinite(p.real))
      throw new RangeError(`${what}: policy '${p.policy}' has a sim or real value that is not a number`);
  }
}

/**
 * Pearson's r between sim and real: centre both, r = Σ(s·r) / √(Σs²·Σr²).
 * A constant side has no correlation to report: r is null with the reason, never a division by zero.
 */
export function pearson(pairs: readonly PolicyPair[]): PearsonResult {
  checkPairs(pairs, 'Pearson r');
  const n = pairs.length;
  let simMean = 0;
  let realMean = 0;
  for (const p of pairs) {
    simMean += p.sim / n;
    realMean += p.real / n;
  }
  let sr = 0;
  let ss = 0;
  let rr = 0;
  for (const p of pairs) {
    const s = p.sim - simMean;
    const r = p.real - realMean;
    sr += s * r;
    ss += s * s;
    rr += r * r;
  }
  // Spread below rounding noise of the mean counts as none (e.g. three policies all at 0.1).
  const noSpread = (sumSq: number, m: number): boolean => sumSq <= n * (Number.EPSILON * Math.max(1, Math.abs(m))) ** 2;
  const simFlat = noSpread(ss, simMean);
  const realFlat = noSpread(rr, realMean);
  if (simFlat || realFlat) {
    const side = simFlat && realFlat ? 'sim and real both give' : simFlat ? 'sim gives' : 'the real rig gives';
    return { r: null, undefinedBecause: `${side} every policy the same value, so there is no correlation to measure` };
  }
  // Rounding can push |r| a hair past 1 for perfectly linear data.
  return { r: Math.max(-1, Math.min(1, sr / Math.sqrt(ss * rr))) };
}

/**
 * Mean Maximum Rank Violation (SIMPLER): for each policy i, the largest |real_i − real_j| over
 * the policies j with (sim_i > sim_j) ≠ (real_i > real_j); averaged over i. 0 means sim orders
 * the policies exactly as the real rig does. Comparisons are strict, as in SIMPLER's code, so a
 * tie on one side against a strict order on the other counts as a violation.
 */
export function mmrv(pairs: readonly PolicyPair[]): number {
  checkPairs(pairs, 'MMRV');
  let total = 0;
  for (const a of pairs) {
    let worst = 0;
    for (const b of pairs) {
      if (a.sim > b.sim !== a.real > b.real) worst = Math.max(worst, Math.abs(a.real - b.real));
    }
    total += worst;
  }
  return total / pairs.length;
}
