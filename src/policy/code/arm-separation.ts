/**
 * Keeping two arms that work at once apart, without a collision checker in the loop: the space
 * an arm's planned motion sweeps (its skeleton sampled along the motion, the tool point added)
 * against the space the other arm's remaining motion sweeps, or the pose it holds. Conservative:
 * time is ignored, so two motions pass only when they never come near wherever each arm is.
 */
import type { ArmReach } from './arm-reach.js';
import { add, dot, scale, sub, type Vec3 } from './frames.js';
import type { ArmMotion } from './motion.js';

/** An arm's skeleton at some instants: each a polyline base → links → flange → tool point. */
export type SweptArm = readonly (readonly Vec3[])[];

/** Samples of a motion this far apart (a joint at the free speed moves ≤ 0.4 rad between them). */
const SAMPLE_S = 0.25;

function skeletonWithTool(reach: ArmReach, q: ArrayLike<number>): Vec3[] {
  return [...reach.skeletonAt(q), reach.toolAt(q).position];
}

/** The skeletons `motion` passes through from `fromS` (seconds from its start) to its end. */
export function sweptByMotion(reach: ArmReach, motion: ArmMotion, fromS = 0, toS = motion.durationS): Vec3[][] {
  const out: Vec3[][] = [];
  const q = new Float64Array(6);
  const end = Math.min(toS, motion.durationS);
  for (let t = Math.max(0, fromS); ; t += SAMPLE_S) {
    const at = Math.min(t, end);
    motion.sample(at, q);
    out.push(skeletonWithTool(reach, q));
    if (at >= end) break;
  }
  return out;
}

/** The skeleton of an arm holding still at q. */
export function sweptAtPose(reach: ArmReach, q: ArrayLike<number>): Vec3[][] {
  return [skeletonWithTool(reach, q)];
}

/** The smallest distance between any link of `a` at any of its instants and any link of `b` at any of its. */
export function sweptDistance(a: SweptArm, b: SweptArm): number {
  let best = Infinity;
  const boxA = a.map(box);
  const boxB = b.map(box);
  for (let i = 0; i < a.length; i++) {
    for (let j = 0; j < b.length; j++) {
      // Bounding boxes farther apart than the best so far cannot improve it.
      if (boxGap(boxA[i], boxB[j]) >= best) continue;
      const pa = a[i];
      const pb = b[j];
      for (let k = 1; k < pa.length; k++) {
        for (let m = 1; m < pb.length; m++) best = Math.min(best, segmentDistance(pa[k - 1], pa[k], pb[m - 1], pb[m]));
      }
    }
  }
  return best;
}

interface Box {
  readonly lo: Vec3;
  readonly hi: Vec3;
}
function box(points: readonly Vec3[]): Box {
  const lo: [number, number, number] = [Infinity, Infinity, Infinity];
  const hi: [number, number, number] = [-Infinity, -Infinity, -Infinity];
  for (const p of points) {
    for (let i = 0; i < 3; i++) {
      lo[i] = Math.min(lo[i], p[i]);
      hi[i] = Math.max(hi[i], p[i]);
    }
  }
  return { lo, hi };
}
function boxGap(a: Box, b: Box): number {
  let s = 0;
  for (let i = 0; i < 3; i++) {
    const g = Math.max(0, a.lo[i] - b.hi[i], b.lo[i] - a.hi[i]);
    s += g * g;
  }
  return Math.sqrt(s);
}

/** Distance between segments p0p1 and q0q1 (closest points, clamped to the segments). */
export function segmentDistance(p0: Vec3, p1: Vec3, q0: Vec3, q1: Vec3): number {
  const d1 = sub(p1, p0);
  const d2 = sub(q1, q0);
  const r = sub(p0, q0);
  const a = dot(d1, d1);
  const e = dot(d2, d2);
  const f = dot(d2, r);
  let s: number;
  let t: number;
  if (a <= 1e-12 && e <= 1e-12) return Math.hypot(r[0], r[1], r[2]);
  if (a <= 1e-12) {
    s = 0;
    t = clamp01(f / e);
  } else {
    const c = dot(d1, r);
    if (e <= 1e-12) {
      t = 0;
      s = clamp01(-c / a);
    } else {
      const b = dot(d1, d2);
      const denom = a * e - b * b;
      s = denom > 1e-12 ? clamp01((b * f - c * e) / denom) : 0;
      t = (b * s + f) / e;
      if (t < 0) {
        t = 0;
        s = clamp01(-c / a);
      } else if (t > 1) {
        t = 1;
        s = clamp01((b - c) / a);
      }
    }
  }
  const d = sub(add(p0, scale(d1, s)), add(q0, scale(d2, t)));
  return Math.hypot(d[0], d[1], d[2]);
}
function clamp01(x: number): number {
  return x < 0 ? 0 : x > 1 ? 1 : x;
}
