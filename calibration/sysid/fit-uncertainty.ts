/**
 * What the Jacobian at the fit's optimum says about each parameter: the full finite-difference
 * Jacobian, how much of the fit's gain a parameter carries (undoneBy), the delete-one-episode
 * jackknife spread and the inflation the residuals' autocorrelation adds to a variance.
 */
import { normalEquations, solveLinear } from './levenberg-marquardt.js';
import { ARM_JOINT_INDICES } from './replay.js';

export function sumSquares(r: Float64Array): number {
  let s = 0;
  for (let i = 0; i < r.length; i++) s += r[i] * r[i];
  return s;
}

/** How much the cost would rise (linearised) if coordinate k moved by du with the others held: ‖r + J_k·du‖² − ‖r‖². */
export function undoneBy(J: Float64Array, r: Float64Array, n: number, k: number, du: number): number {
  let s = 0;
  for (let i = 0; i < r.length; i++) {
    const v = r[i] + J[i * n + k] * du;
    s += v * v - r[i] * r[i];
  }
  return s;
}

/** Every column alone, in one concurrent batch (forward differences, backward at the upper bound). */
export async function fullJacobian(
  residualsAt: (p: readonly Float64Array[]) => Promise<(Float64Array | undefined)[]>,
  u: Float64Array,
  r: Float64Array,
): Promise<Float64Array> {
  const n = u.length;
  const h = 0.03;
  const points = Array.from({ length: n }, (_, k) => {
    const p = Float64Array.from(u);
    p[k] = u[k] + h <= 1 ? u[k] + h : u[k] - h;
    return p;
  });
  const rs = await residualsAt(points);
  const J = new Float64Array(r.length * n);
  rs.forEach((rk, k) => {
    if (!rk) return;
    const d = points[k][k] - u[k];
    for (let i = 0; i < r.length; i++) J[i * n + k] = (rk[i] - r[i]) / d;
  });
  return J;
}

/**
 * Delete-one jackknife standard deviations of the coordinates, each leave-one-out estimate taken
 * as one Gauss–Newton step from the optimum without that episode's rows:
 * δ₋ₑ = −(JᵀJ − JₑᵀJₑ)⁻¹ (Jᵀr − Jₑᵀrₑ), σ² = (E−1)/E · Σ (δ₋ₑ − mean)². Undefined below 3 episodes.
 */
export function jackknifeSigmas(
  J: Float64Array,
  r: Float64Array,
  n: number,
  lengths: readonly number[],
): Float64Array | undefined {
  const E = lengths.length;
  if (E < 3 || lengths.reduce((a, b) => a + b, 0) !== r.length) return undefined;
  const all = normalEquations(J, r, n);
  const deltas: Float64Array[] = [];
  let start = 0;
  for (const len of lengths) {
    const part = normalEquations(J.subarray(start * n, (start + len) * n), r.subarray(start, start + len), n);
    const H = all.H.map((v, i) => v - part.H[i]);
    for (let d = 0; d < n; d++) H[d * n + d] += 1e-9 * (all.H[d * n + d] || 1);
    deltas.push(
      solveLinear(
        H,
        all.g.map((v, i) => -(v - part.g[i])),
        n,
      ),
    );
    start += len;
  }
  const out = new Float64Array(n);
  for (let k = 0; k < n; k++) {
    const mean = deltas.reduce((s, d) => s + d[k], 0) / E;
    out[k] = Math.sqrt(((E - 1) / E) * deltas.reduce((s, d) => s + (d[k] - mean) ** 2, 0));
  }
  return out;
}

/**
 * How much the residuals' autocorrelation inflates a parameter variance computed as if they were
 * independent: (1 + ρ) / (1 − ρ) for the mean lag-one correlation ρ of each joint's error series
 * (an AR(1) approximation), between 1 and 400. Residuals come `width` joints per sample.
 */
export function autocorrelationInflation(
  r: Float64Array,
  perEpisode: readonly number[],
  width = ARM_JOINT_INDICES.length,
): number {
  let num = 0;
  let den = 0;
  let start = 0;
  for (const count of perEpisode) {
    const samples = Math.floor(count / width);
    for (let j = 0; j < width; j++) {
      for (let k = 1; k < samples; k++) {
        num += r[start + k * width + j] * r[start + (k - 1) * width + j];
        den += r[start + (k - 1) * width + j] ** 2;
      }
    }
    start += count;
  }
  const rho = den > 0 ? Math.max(0, Math.min(0.995, num / den)) : 0;
  return Math.min(400, (1 + rho) / (1 - rho));
}
