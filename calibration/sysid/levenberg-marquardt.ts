/**
 * Bounded Levenberg–Marquardt on a residual vector whose every evaluation is a batch of sim
 * replays, with the finite-difference Jacobian's evaluations run concurrently.
 *
 * Hand-written, not `ml-levenberg-marquardt` (npm) or `fmin`'s Nelder–Mead: both call the model
 * synchronously, one point at a time, so they cannot hand the Jacobian's independent evaluations
 * to worker threads, and each evaluation here is seconds of physics. Nothing on npm offers an
 * asynchronous batch optimiser (no CMA-ES package is listed). What it adds beyond the textbook
 * method (Nocedal & Wright §10.3, Marquardt's diagonal scaling):
 * - coordinates in [0, 1] per parameter, bounds by clamping;
 * - *grouped* Jacobian columns: parameters that act on disjoint residuals (joint 1's damping on
 *   joint 1's error, joint 2's on joint 2's, …) are moved together in one evaluation and each
 *   takes the change of its own residuals — 26 parameters cost 6 evaluations, not 26 (Curtis–
 *   Powell–Reid colouring). Coupling between joints is left out of the Jacobian only; every step is
 *   accepted on the true cost, so it can slow the fit but not mislead it;
 * - trial steps for several damping values evaluated in one concurrent batch.
 */

export interface LmProblem {
  readonly dimension: number;
  /** Residuals at each point (unit coordinates), concurrently; undefined where the model failed (treated as infinitely bad). */
  evaluate(points: readonly Float64Array[]): Promise<(Float64Array | undefined)[]>;
  /** Parameter indices moved together in one Jacobian evaluation (default: each alone). */
  readonly groups?: readonly (readonly number[])[];
  /** For a grouped column: whether residual i belongs to parameter k (default true: the whole column). */
  owns?(k: number, i: number): boolean;
}

export interface LmOptions {
  readonly maxIterations?: number;
  /** Stop when an accepted step lowers the cost by less than this fraction (default 1%: below, the replays' own noise decides). */
  readonly relativeTolerance?: number;
  /** Finite-difference step in unit coordinates. */
  readonly step?: number;
  /** Damping values tried at once per iteration (×4 apart). */
  readonly trials?: number;
  /** Called after every iteration (progress). */
  readonly onIteration?: (i: LmIteration) => void;
}

export interface LmIteration {
  readonly iteration: number;
  readonly cost: number;
  readonly evaluations: number;
  readonly lambda: number;
}

export interface LmResult {
  readonly u: Float64Array;
  readonly residuals: Float64Array;
  /** Sum of squared residuals at u. */
  readonly cost: number;
  /** The (grouped) Jacobian at u: residuals × dimension, row-major. */
  readonly jacobian: Float64Array;
  readonly iterations: number;
  readonly evaluations: number;
  readonly history: readonly number[];
  /** Why it stopped, in words. */
  readonly stopped: string;
}

const sumSq = (r: Float64Array): number => {
  let s = 0;
  for (let i = 0; i < r.length; i++) s += r[i] * r[i];
  return s;
};

export async function levenbergMarquardt(
  problem: LmProblem,
  u0: ArrayLike<number>,
  options: LmOptions = {},
): Promise<LmResult> {
  const n = problem.dimension;
  const maxIterations = options.maxIterations ?? 12;
  const tol = options.relativeTolerance ?? 1e-2;
  const h = options.step ?? 0.03;
  const trials = Math.max(1, options.trials ?? 2);
  const groups = problem.groups ?? Array.from({ length: n }, (_, k) => [k]);
  const owns = problem.owns ?? (() => true);
  let u = Float64Array.from(u0, (x) => clamp01(x));
  let evaluations = 1;
  const [r0] = await problem.evaluate([u]);
  if (!r0) throw new Error('the model cannot be evaluated at the starting point');
  let r = r0;
  let cost = sumSq(r);
  const history = [cost];
  let lambda = 1e-2;
  let J = new Float64Array(r.length * n);
  let stopped = `${maxIterations} iterations`;
  let rejected = 0;
  let iteration = 0;
  for (; iteration < maxIterations; iteration++) {
    // Jacobian by grouped forward differences (backward at the upper bound).
    const signs = new Float64Array(n).map((_, k) => (u[k] + h <= 1 ? 1 : -1));
    const points = groups.map((g) => {
      const p = Float64Array.from(u);
      for (const k of g) p[k] = u[k] + signs[k] * h;
      return p;
    });
    const rs = await problem.evaluate(points);
    evaluations += points.length;
    J = new Float64Array(r.length * n);
    groups.forEach((g, gi) => {
      const rg = rs[gi];
      if (!rg) return; // a failed evaluation leaves its columns zero: those parameters do not move this iteration
      for (const k of g) {
        const inv = 1 / (signs[k] * h);
        for (let i = 0; i < r.length; i++) if (g.length === 1 || owns(k, i)) J[i * n + k] = (rg[i] - r[i]) * inv;
      }
    });
    const { H, g } = normalEquations(J, r, n);
    // Several damping values at once: the batch costs one round of evaluations.
    const lambdas = Array.from({ length: trials }, (_, t) => lambda * Math.pow(4, t));
    const candidates = lambdas.map((lam) => {
      const d = solveDamped(H, g, n, lam);
      return Float64Array.from(u, (x, k) => clamp01(x + d[k]));
    });
    const results = await problem.evaluate(candidates);
    evaluations += candidates.length;
    let best = -1;
    let bestCost = cost;
    results.forEach((rr, t) => {
      if (!rr) return;
      const c = sumSq(rr);
      if (c < bestCost) [best, bestCost] = [t, c];
    });
    options.onIteration?.({
      iteration: iteration + 1,
      cost: best >= 0 ? bestCost : cost,
      evaluations,
      lambda: best >= 0 ? lambdas[best] : lambda,
    });
    if (best < 0) {
      lambda *= Math.pow(4, trials);
      history.push(cost);
      rejected += 1;
      // Two rounds of ever shorter steps that all fail: at the noise floor of the data.
      if (rejected >= 2 || lambda > 1e6) {
        stopped = 'no step lowers the error any more';
        iteration++;
        break;
      }
      continue;
    }
    rejected = 0;
    const gain = (cost - bestCost) / cost;
    u = candidates[best];
    r = results[best]!;
    cost = bestCost;
    history.push(cost);
    lambda = Math.max(1e-6, lambdas[best] / 3);
    if (gain < tol) {
      stopped = `the error fell by less than ${(tol * 100).toFixed(1)}% in a step`;
      iteration++;
      break;
    }
  }
  return { u, residuals: r, cost, jacobian: J, iterations: iteration, evaluations, history, stopped };
}

/** JᵀJ and Jᵀr. */
export function normalEquations(J: Float64Array, r: Float64Array, n: number): { H: Float64Array; g: Float64Array } {
  const H = new Float64Array(n * n);
  const g = new Float64Array(n);
  const m = r.length;
  for (let i = 0; i < m; i++) {
    const row = i * n;
    for (let a = 0; a < n; a++) {
      const ja = J[row + a];
      if (ja === 0) continue;
      g[a] += ja * r[i];
      for (let b = a; b < n; b++) H[a * n + b] += ja * J[row + b];
    }
  }
  for (let a = 0; a < n; a++) for (let b = 0; b < a; b++) H[a * n + b] = H[b * n + a];
  return { H, g };
}

/** Solves (H + λ·diag(H) + ε·I) d = −g (Marquardt's scaling; ε keeps untouched parameters still). */
function solveDamped(H: Float64Array, g: Float64Array, n: number, lambda: number): Float64Array {
  const A = Float64Array.from(H);
  let maxDiag = 0;
  for (let k = 0; k < n; k++) maxDiag = Math.max(maxDiag, H[k * n + k]);
  const eps = 1e-9 * (maxDiag || 1);
  for (let k = 0; k < n; k++) A[k * n + k] += lambda * H[k * n + k] + eps;
  return solveLinear(
    A,
    Float64Array.from(g, (x) => -x),
    n,
  );
}

/** Gaussian elimination with partial pivoting (n ≤ a few dozen). */
export function solveLinear(A: Float64Array, b: Float64Array, n: number): Float64Array {
  const M = Float64Array.from(A);
  const x = Float64Array.from(b);
  for (let c = 0; c < n; c++) {
    let p = c;
    for (let rI = c + 1; rI < n; rI++) if (Math.abs(M[rI * n + c]) > Math.abs(M[p * n + c])) p = rI;
    if (p !== c) {
      for (let k = 0; k < n; k++) [M[c * n + k], M[p * n + k]] = [M[p * n + k], M[c * n + k]];
      [x[c], x[p]] = [x[p], x[c]];
    }
    const piv = M[c * n + c];
    if (piv === 0) continue;
    for (let rI = c + 1; rI < n; rI++) {
      const f = M[rI * n + c] / piv;
      if (f === 0) continue;
      for (let k = c; k < n; k++) M[rI * n + k] -= f * M[c * n + k];
      x[rI] -= f * x[c];
    }
  }
  for (let c = n - 1; c >= 0; c--) {
    let s = x[c];
    for (let k = c + 1; k < n; k++) s -= M[c * n + k] * x[k];
    x[c] = M[c * n + c] === 0 ? 0 : s / M[c * n + c];
  }
  return x;
}

/** Standard deviation of each coordinate from the Jacobian: sqrt(diag((JᵀJ)⁻¹) · cost / (m − n)); Infinity where a column is empty. */
export function coordinateSigmas(J: Float64Array, r: Float64Array, n: number): Float64Array {
  const { H } = normalEquations(J, r, n);
  const s2 = sumSq(r) / Math.max(1, r.length - n);
  const out = new Float64Array(n);
  for (let k = 0; k < n; k++) {
    if (H[k * n + k] <= 0) {
      out[k] = Infinity;
      continue;
    }
    const e = new Float64Array(n);
    e[k] = 1;
    // Tiny ridge so an exactly collinear pair reads as a huge σ instead of NaN.
    const A = Float64Array.from(H);
    for (let d = 0; d < n; d++) A[d * n + d] += 1e-12 * (H[d * n + d] || 1);
    const col = solveLinear(A, e, n);
    out[k] = col[k] > 0 ? Math.sqrt(col[k] * s2) : Infinity;
  }
  return out;
}

function clamp01(x: number): number {
  return x < 0 ? 0 : x > 1 ? 1 : x;
}
