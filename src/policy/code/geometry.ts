/**
 * What the code policies know about object shapes. The policy room may not read the task
 * catalogue (src/tasks), so it keeps its own small table keyed by object kind, with a fallback
 * on the kind's name. Everything here is in the table frame (see src/tasks/geometry.ts): z up,
 * an object's origin at the centre of its base when upright.
 */
import type { PrivilegedObjectState } from '../contract.js';
import { add, dot, scale, sub, type Quat, type Vec3 } from './frames.js';
import { quatRotate } from '../../pose/quaternion.js';

export interface BottleShape {
  /** Body radius and overall height (base to cap). */
  readonly radiusM: number;
  readonly heightM: number;
  /** Where a lying bottle is gripped: distance from the base along the axis (the body's middle, near the mass centre). */
  readonly gripAlongAxisM: number;
}
export interface BinShape {
  /** Outer size, metres: length (x), width (y), height (z) in the bin's own frame. */
  readonly outerM: Vec3;
  readonly wallM: number;
}

/** Shapes by kind id; unknown kinds fall back on their name ("…bottle…", "…bin…"). */
// The catalogue's 0.5 l bottle: Ø65 mm body 165 mm tall, Ø27 mm neck to 205 mm; its bin: a
// 300 × 220 × 180 mm tray with 6 mm walls.
const BOTTLES: Readonly<Record<string, BottleShape>> = {
  'bottle-500ml': { radiusM: 0.0325, heightM: 0.205, gripAlongAxisM: 0.0825 },
};
const BINS: Readonly<Record<string, BinShape>> = {
  bin: { outerM: [0.3, 0.22, 0.18], wallM: 0.006 },
};
const DEFAULT_BOTTLE: BottleShape = BOTTLES['bottle-500ml'];
const DEFAULT_BIN: BinShape = BINS.bin;

export function bottleShape(kind: string): BottleShape | undefined {
  return (
    (Object.hasOwn(BOTTLES, kind) ? BOTTLES[kind] : undefined) ?? (/bottle/i.test(kind) ? DEFAULT_BOTTLE : undefined)
  );
}
export function binShape(kind: string): BinShape | undefined {
  return (Object.hasOwn(BINS, kind) ? BINS[kind] : undefined) ?? (/bin/i.test(kind) ? DEFAULT_BIN : undefined);
}

export type BottlePosture = 'upright' | 'lying' | 'upside-down' | 'tilted';

/** A bottle as the planner sees it. */
export interface BottleView {
  readonly id: string;
  readonly shape: BottleShape;
  /** Origin (centre of the base). */
  readonly base: Vec3;
  /** Unit vector from base to top. */
  readonly axis: Vec3;
  /** Geometric centre. */
  readonly centre: Vec3;
  readonly posture: BottlePosture;
}

export interface BinView {
  readonly id: string;
  readonly shape: BinShape;
  /** Origin (centre of the bottom). */
  readonly base: Vec3;
  readonly quaternion: Quat;
  readonly yawRad: number;
  /** Height of the rim above the table. */
  readonly rimZ: number;
}

/** cos of the largest tilt still called upright (or upside down). */
const UPRIGHT_COS = Math.cos((25 * Math.PI) / 180);
/** |axis.z| below this is lying. */
const LYING_SIN = Math.sin((25 * Math.PI) / 180);

export function viewBottle(o: PrivilegedObjectState, shape: BottleShape): BottleView {
  const axis = quatRotate(o.quaternion, [0, 0, 1]);
  const base: Vec3 = [o.position[0], o.position[1], o.position[2]];
  const posture: BottlePosture =
    axis[2] >= UPRIGHT_COS
      ? 'upright'
      : axis[2] <= -UPRIGHT_COS
        ? 'upside-down'
        : Math.abs(axis[2]) <= LYING_SIN
          ? 'lying'
          : 'tilted';
  return { id: o.id, shape, base, axis, centre: add(base, scale(axis, shape.heightM / 2)), posture };
}

export function viewBin(o: PrivilegedObjectState, shape: BinShape): BinView {
  const xAxis = quatRotate(o.quaternion, [1, 0, 0]);
  return {
    id: o.id,
    shape,
    base: [o.position[0], o.position[1], o.position[2]],
    quaternion: o.quaternion,
    yawRad: Math.atan2(xAxis[1], xAxis[0]),
    rimZ: o.position[2] + shape.outerM[2],
  };
}

/** A table-frame point in the bin's own frame. */
export function inBinFrame(bin: BinView, p: Vec3): Vec3 {
  const d = sub(p, bin.base);
  const c = Math.cos(bin.yawRad);
  const s = Math.sin(bin.yawRad);
  return [c * d[0] + s * d[1], -s * d[0] + c * d[1], d[2]];
}

/** A point of the bin's own frame in the table frame. */
export function fromBinFrame(bin: BinView, p: Vec3): Vec3 {
  const c = Math.cos(bin.yawRad);
  const s = Math.sin(bin.yawRad);
  return [bin.base[0] + c * p[0] - s * p[1], bin.base[1] + s * p[0] + c * p[1], bin.base[2] + p[2]];
}

/**
 * True when the bottle's centre lies inside the bin's inner volume, below the rim — how the task
 * scores it. A bottle that came to rest standing on another one, its centre above the rim, is
 * not in the bin and is picked again.
 */
export function bottleInBin(bin: BinView, b: BottleView): boolean {
  const p = inBinFrame(bin, b.centre);
  const hx = bin.shape.outerM[0] / 2 - bin.shape.wallM;
  const hy = bin.shape.outerM[1] / 2 - bin.shape.wallM;
  return Math.abs(p[0]) <= hx && Math.abs(p[1]) <= hy && p[2] >= bin.shape.wallM && p[2] <= bin.shape.outerM[2];
}

/**
 * True when a path through `points` (an arm's skeleton, table frame) passes within `radiusM` of
 * the bin's walls (its outer box up to the rim), sampled every 2 cm. The code policies have no
 * collision checker; this keeps a planned pose from resting an arm link on the bin and shoving it.
 */
export function pathTouchesBin(bin: BinView, points: readonly Vec3[], radiusM: number): boolean {
  const hx = bin.shape.outerM[0] / 2 + radiusM;
  const hy = bin.shape.outerM[1] / 2 + radiusM;
  const top = bin.shape.outerM[2] + radiusM;
  for (let i = 1; i < points.length; i++) {
    const a = points[i - 1];
    const b = points[i];
    const n = Math.max(1, Math.ceil(Math.hypot(b[0] - a[0], b[1] - a[1], b[2] - a[2]) / 0.02));
    for (let k = 0; k <= n; k++) {
      const t = k / n;
      const p = inBinFrame(bin, [a[0] + (b[0] - a[0]) * t, a[1] + (b[1] - a[1]) * t, a[2] + (b[2] - a[2]) * t]);
      if (Math.abs(p[0]) <= hx && Math.abs(p[1]) <= hy && p[2] <= top) return true;
    }
  }
  return false;
}

/** Horizontal unit vector, or undefined for a (near) vertical one. */
export function horizontal(v: Vec3): Vec3 | undefined {
  const n = Math.hypot(v[0], v[1]);
  return n < 1e-6 ? undefined : [v[0] / n, v[1] / n, 0];
}

export { dot };
