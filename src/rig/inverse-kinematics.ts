/**
 * Damped-least-squares inverse kinematics of one YAM arm on kinematics.ts's chain: joint limits
 * enforced, several seeds, failure reported with its residual. Pure math, no Node built-ins.
 */
import { YAM_JOINT_LIMITS_RAD } from './yam.js';
import { ARM_JOINT_COUNT, LINK_NAMES, jacobianOfFrames, linkFrames, newFrame, type Frame } from './kinematics.js';

const SCRATCH_LINKS: Frame[] = LINK_NAMES.map(() => newFrame());
const ZERO3: readonly number[] = [0, 0, 0];
const TMP_R = new Float64Array(9);

/**
 * What to reach, in the arm's base frame.
 * - `rotation` (row-major 3×3): full pose.
 * - `approach` (unit vector): only the gripper's approach axis (−z of the gripper frame) must
 *   point this way; rotation about it is free (top-down grasps of round objects).
 * - neither: position only.
 */
export interface IkTarget {
  readonly position: ArrayLike<number>;
  readonly rotation?: ArrayLike<number>;
  readonly approach?: ArrayLike<number>;
}

export interface IkOptions {
  /** First seed (e.g. the current joint angles); then the home pose, then deterministic spread seeds. */
  readonly seed?: ArrayLike<number>;
  /** Total number of seeds to try, including the ones above. Default 12. */
  readonly seeds?: number;
  readonly maxIterations?: number;
  /** Converged when the position error is below this. Default 0.5 mm. */
  readonly positionToleranceM?: number;
  /** Converged when the orientation error is below this. Default 0.005 rad. */
  readonly orientationToleranceRad?: number;
  /** Joint limits to respect [min, max] per joint; default the bench limits. */
  readonly limitsRad?: readonly (readonly [number, number])[];
  /** The point to place at `target.position`, in the gripper frame (e.g. the fingertip centre). */
  readonly toolOffsetM?: ArrayLike<number>;
}

export type IkResult =
  | {
      readonly ok: true;
      readonly q: Float64Array;
      readonly positionErrorM: number;
      readonly orientationErrorRad: number;
      readonly iterations: number;
    }
  | {
      readonly ok: false;
      readonly reason: string;
      readonly positionErrorM: number;
      readonly orientationErrorRad: number;
      readonly iterations: number;
    };

/** Weight of a radian of orientation error against a metre of position error. */
const ORIENTATION_WEIGHT_M_PER_RAD = 0.2;
const MAX_STEP_RAD = 0.25;
/**
 * A descent that gains less than 10% over 10 iterations is creeping toward a target it will not
 * reach (converging solves finish in a handful): it stops and the next seed starts. Failing
 * solves ran ~1100 iterations each, most of the code policies' IK time.
 */
const STALL_WINDOW = 10;
const STALL_RATIO = 0.9;

/**
 * Damped least squares with an adaptive damping factor, joint limits enforced by clamping every
 * iterate, several seeds. Reports failure (with the best residual) instead of returning a
 * configuration that does not reach the target.
 */
export function solveIk(target: IkTarget, options: IkOptions = {}): IkResult {
  const limits = options.limitsRad ?? YAM_JOINT_LIMITS_RAD;
  const seedCount = Math.max(1, options.seeds ?? 12);
  const maxIter = options.maxIterations ?? 150;
  const posTol = options.positionToleranceM ?? 5e-4;
  const oriTol = options.orientationToleranceRad ?? 5e-3;
  const tool = options.toolOffsetM ?? ZERO3;
  for (const v of [target.position, target.rotation, target.approach, options.seed]) {
    if (v !== undefined)
      for (let i = 0; i < v.length; i++)
        if (!Number.isFinite(v[i])) {
          return {
            ok: false,
            reason: 'The IK target contains a non-finite number.',
            positionErrorM: NaN,
            orientationErrorRad: NaN,
            iterations: 0,
          };
        }
  }
  let approach: Float64Array | undefined;
  if (target.approach && !target.rotation) {
    const n = Math.hypot(target.approach[0], target.approach[1], target.approach[2]);
    if (n < 1e-9)
      return {
        ok: false,
        reason: 'The IK approach axis is a zero vector.',
        positionErrorM: NaN,
        orientationErrorRad: NaN,
        iterations: 0,
      };
    approach = new Float64Array([target.approach[0] / n, target.approach[1] / n, target.approach[2] / n]);
  }

  const q = new Float64Array(6);
  const best = { q: new Float64Array(6), cost: Infinity, pos: Infinity, ori: Infinity };
  let iterations = 0;
  const rng = lcg(0x9e3779b9);
  for (let s = 0; s < seedCount; s++) {
    seedFor(s, options.seed, limits, rng, q);
    for (let i = 0; i < 6; i++) q[i] = clamp(q[i], limits[i][0], limits[i][1]);
    const r = descend(q, target, approach, tool, limits, maxIter, posTol, oriTol);
    iterations += r.iterations;
    const cost = r.pos + ORIENTATION_WEIGHT_M_PER_RAD * r.ori;
    if (cost < best.cost) {
      best.cost = cost;
      best.pos = r.pos;
      best.ori = r.ori;
      best.q.set(q);
    }
    if (r.pos <= posTol && r.ori <= oriTol) {
      return { ok: true, q: Float64Array.from(q), positionErrorM: r.pos, orientationErrorRad: r.ori, iterations };
    }
  }
  return {
    ok: false,
    reason: `No joint configuration within limits reaches the target: best miss ${(best.pos * 1000).toFixed(1)} mm and ${best.ori.toFixed(3)} rad after ${seedCount} seeds.`,
    positionErrorM: best.pos,
    orientationErrorRad: best.ori,
    iterations,
  };
}

const E = new Float64Array(6);
const E_SAVE = new Float64Array(6);
const J = new Float64Array(36);
const A = new Float64Array(36);
const Y = new Float64Array(6);
const DQ = new Float64Array(6);
const QTRY = new Float64Array(6);

/** Pose error of q (weighted 6-vector into E, Jacobian rows into J); returns [pos, ori] norms. */
function poseError(
  q: Float64Array,
  target: IkTarget,
  approach: Float64Array | undefined,
  tool: ArrayLike<number>,
  withJacobian: boolean,
): [number, number] {
  const frames = linkFrames(q, SCRATCH_LINKS);
  const EE = frames[ARM_JOINT_COUNT];
  const R = EE.rotation;
  const px = EE.position[0] + R[0] * tool[0] + R[1] * tool[1] + R[2] * tool[2];
  const py = EE.position[1] + R[3] * tool[0] + R[4] * tool[1] + R[5] * tool[2];
  const pz = EE.position[2] + R[6] * tool[0] + R[7] * tool[1] + R[8] * tool[2];
  E[0] = target.position[0] - px;
  E[1] = target.position[1] - py;
  E[2] = target.position[2] - pz;
  if (withJacobian) jacobianOfFrames(frames, J, tool);
  let ori = 0;
  if (target.rotation) {
    rotationErrorVector(target.rotation, R, E, 3);
    ori = Math.hypot(E[3], E[4], E[5]);
  } else if (approach) {
    // Current approach axis = R · (0,0,−1); error = a × a* (rotation taking a toward a*).
    const ax = -R[2],
      ay = -R[5],
      az = -R[8];
    E[3] = ay * approach[2] - az * approach[1];
    E[4] = az * approach[0] - ax * approach[2];
    E[5] = ax * approach[1] - ay * approach[0];
    const dot = ax * approach[0] + ay * approach[1] + az * approach[2];
    ori = Math.atan2(Math.hypot(E[3], E[4], E[5]), dot);
    if (dot < 0) {
      // Near-opposite axes: the cross product vanishes; push along a perpendicular so we still turn.
      const k = Math.hypot(E[3], E[4], E[5]);
      if (k < 1e-6) {
        E[3] = -az;
        E[4] = 0;
        E[5] = ax;
      }
    }
    if (withJacobian) {
      // Rotation about the approach axis is free: project it out of the angular rows.
      for (let c = 0; c < 6; c++) {
        const wx = J[18 + c],
          wy = J[24 + c],
          wz = J[30 + c];
        const d = wx * ax + wy * ay + wz * az;
        J[18 + c] = wx - d * ax;
        J[24 + c] = wy - d * ay;
        J[30 + c] = wz - d * az;
      }
    }
  } else {
    E[3] = E[4] = E[5] = 0;
    if (withJacobian) for (let k = 18; k < 36; k++) J[k] = 0;
  }
  const pos = Math.hypot(E[0], E[1], E[2]);
  for (let k = 3; k < 6; k++) E[k] *= ORIENTATION_WEIGHT_M_PER_RAD;
  if (withJacobian) for (let k = 18; k < 36; k++) J[k] *= ORIENTATION_WEIGHT_M_PER_RAD;
  return [pos, ori];
}

/** Axis-angle vector of Rt·Rcᵀ (the rotation that takes the current frame to the target), into out[offset..offset+2]. */
export function rotationErrorVector(Rt: ArrayLike<number>, Rc: ArrayLike<number>, out: Float64Array, offset = 0): void {
  // M = Rt · Rcᵀ
  const m = TMP_R;
  for (let i = 0; i < 3; i++)
    for (let j = 0; j < 3; j++)
      m[i * 3 + j] = Rt[i * 3] * Rc[j * 3] + Rt[i * 3 + 1] * Rc[j * 3 + 1] + Rt[i * 3 + 2] * Rc[j * 3 + 2];
  let x = m[7] - m[5],
    y = m[2] - m[6],
    z = m[3] - m[1];
  const s = Math.hypot(x, y, z);
  // atan2, not acos: acos loses half the digits near angle 0, where IK converges.
  const angle = Math.atan2(s / 2, clamp((m[0] + m[4] + m[8] - 1) / 2, -1, 1));
  if (s < 1e-12 && angle < 1) {
    out[offset] = out[offset + 1] = out[offset + 2] = 0;
    return;
  }
  if (s < 1e-9) {
    // angle ≈ π: axis from the diagonal.
    x = Math.sqrt(Math.max(0, (m[0] + 1) / 2));
    y = Math.sqrt(Math.max(0, (m[4] + 1) / 2)) * (m[1] >= 0 ? 1 : -1);
    z = Math.sqrt(Math.max(0, (m[8] + 1) / 2)) * (m[2] >= 0 ? 1 : -1);
    const n = Math.hypot(x, y, z) || 1;
    out[offset] = (x / n) * angle;
    out[offset + 1] = (y / n) * angle;
    out[offset + 2] = (z / n) * angle;
    return;
  }
  out[offset] = (x / s) * angle;
  out[offset + 1] = (y / s) * angle;
  out[offset + 2] = (z / s) * angle;
}

function descend(
  q: Float64Array,
  target: IkTarget,
  approach: Float64Array | undefined,
  tool: ArrayLike<number>,
  limits: readonly (readonly [number, number])[],
  maxIter: number,
  posTol: number,
  oriTol: number,
): { pos: number; ori: number; iterations: number } {
  let lambda = 0.01;
  let [pos, ori] = poseError(q, target, approach, tool, true);
  let cost = weightedNorm();
  let checkpoint = cost;
  let it = 0;
  for (; it < maxIter; it++) {
    if (pos <= posTol && ori <= oriTol) break;
    if (it > 0 && it % STALL_WINDOW === 0) {
      if (cost > STALL_RATIO * checkpoint) break;
      checkpoint = cost;
    }
    // dq = Jᵀ (J Jᵀ + λ² I)⁻¹ e
    for (let i = 0; i < 6; i++) {
      for (let j = 0; j < 6; j++) {
        let s = 0;
        for (let k = 0; k < 6; k++) s += J[i * 6 + k] * J[j * 6 + k];
        A[i * 6 + j] = s + (i === j ? lambda * lambda : 0);
      }
      Y[i] = E[i];
    }
    if (!solve6(A, Y)) {
      lambda *= 10;
      continue;
    }
    let scale = 1;
    for (let c = 0; c < 6; c++) {
      let s = 0;
      for (let r = 0; r < 6; r++) s += J[r * 6 + c] * Y[r];
      DQ[c] = s;
      if (Math.abs(s) * scale > MAX_STEP_RAD) scale = MAX_STEP_RAD / Math.abs(s);
    }
    for (let c = 0; c < 6; c++) QTRY[c] = clamp(q[c] + DQ[c] * scale, limits[c][0], limits[c][1]);
    E_SAVE.set(E);
    poseError(QTRY, target, approach, tool, false);
    if (weightedNorm() < cost) {
      q.set(QTRY);
      lambda = Math.max(1e-4, lambda * 0.5);
      [pos, ori] = poseError(q, target, approach, tool, true);
      cost = weightedNorm();
    } else {
      E.set(E_SAVE);
      lambda *= 4;
      if (lambda > 10) break; // stuck in a local minimum (often against a limit): next seed
    }
  }
  return { pos, ori, iterations: it };
}

function weightedNorm(): number {
  return Math.hypot(E[0], E[1], E[2], E[3], E[4], E[5]);
}

/** Solves A x = b in place (x into b) for a 6×6 system by Gaussian elimination with partial pivoting. */
function solve6(a: Float64Array, b: Float64Array): boolean {
  const n = 6;
  for (let col = 0; col < n; col++) {
    let piv = col;
    for (let r = col + 1; r < n; r++) if (Math.abs(a[r * n + col]) > Math.abs(a[piv * n + col])) piv = r;
    if (Math.abs(a[piv * n + col]) < 1e-14) return false;
    if (piv !== col) {
      for (let k = 0; k < n; k++) {
        const t = a[col * n + k];
        a[col * n + k] = a[piv * n + k];
        a[piv * n + k] = t;
      }
      const t = b[col];
      b[col] = b[piv];
      b[piv] = t;
    }
    for (let r = col + 1; r < n; r++) {
      const f = a[r * n + col] / a[col * n + col];
      if (f === 0) continue;
      for (let k = col; k < n; k++) a[r * n + k] -= f * a[col * n + k];
      b[r] -= f * b[col];
    }
  }
  for (let r = n - 1; r >= 0; r--) {
    let s = b[r];
    for (let k = r + 1; k < n; k++) s -= a[r * n + k] * b[k];
    b[r] = s / a[r * n + r];
  }
  return true;
}

/** Seed order: the caller's seed, home (all zeros), the middle of the limits, then spread seeds. */
function seedFor(
  s: number,
  given: ArrayLike<number> | undefined,
  limits: readonly (readonly [number, number])[],
  rng: () => number,
  q: Float64Array,
): void {
  const k = given ? s : s + 1;
  for (let i = 0; i < 6; i++) {
    const [lo, hi] = limits[i];
    if (k === 0 && given) q[i] = given[i];
    else if (k === 1) q[i] = 0;
    else if (k === 2) q[i] = (lo + hi) / 2;
    else q[i] = lo + rng() * (hi - lo);
  }
}

function clamp(x: number, lo: number, hi: number): number {
  return x < lo ? lo : x > hi ? hi : x;
}

/** Small deterministic generator so IK is reproducible across processes (the sim must be). */
function lcg(seed: number): () => number {
  let s = seed >>> 0;
  return () => {
    s = (Math.imul(s, 1664525) + 1013904223) >>> 0;
    return s / 4294967296;
  };
}
