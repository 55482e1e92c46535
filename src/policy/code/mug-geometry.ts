/**
 * What the mug policy knows about mugs: their shape (the policy room may not read the task
 * catalogue, so it keeps the numbers it needs), and a mug as the planner sees it — its own
 * frame, its posture and the space it takes on the table. Table frame, z up; a mug's origin is
 * the centre of its base, its own z the axis from base to rim, its own +y the handle's side.
 */
import type { PrivilegedObjectState } from '../contract.js';
import { add, scale, sub, type Vec3 } from './frames.js';
import { quatRotate } from '../../pose/quaternion.js';

export interface MugShape {
  readonly radiusM: number;
  readonly heightM: number;
  /** How far the handle reaches from the axis. */
  readonly handleReachM: number;
}

// The catalogue's 350 ml mug: Ø82 mm, 95 mm tall, a 12 × 28 × 65 mm handle along its own +y
// from the body's surface (41 mm) out to 69 mm.
const MUGS: Readonly<Record<string, MugShape>> = {
  'mug-350ml': { radiusM: 0.041, heightM: 0.095, handleReachM: 0.069 },
};

export function mugShape(kind: string): MugShape | undefined {
  return (Object.hasOwn(MUGS, kind) ? MUGS[kind] : undefined) ?? (/mug/i.test(kind) ? MUGS['mug-350ml'] : undefined);
}

export type MugPosture = 'upright' | 'lying' | 'upside-down' | 'tilted';

export interface MugView {
  readonly id: string;
  readonly shape: MugShape;
  /** Origin: the centre of the base. */
  readonly base: Vec3;
  /** The mug's own axes in the table frame: x, y (toward the handle), z (base → rim). */
  readonly x: Vec3;
  readonly y: Vec3;
  readonly z: Vec3;
  /** Middle of the body on the axis. */
  readonly centre: Vec3;
  readonly posture: MugPosture;
}

/** The task's own rule: upright when the axis is within 20° of vertical. */
const UPRIGHT_COS = Math.cos((20 * Math.PI) / 180);
/** Within 25° of horizontal counts as lying (what the policy knows how to pick up). */
const LYING_SIN = Math.sin((25 * Math.PI) / 180);

export function viewMug(o: PrivilegedObjectState, shape: MugShape): MugView {
  const x = quatRotate(o.quaternion, [1, 0, 0]);
  const y = quatRotate(o.quaternion, [0, 1, 0]);
  const z = quatRotate(o.quaternion, [0, 0, 1]);
  const base: Vec3 = [o.position[0], o.position[1], o.position[2]];
  const posture: MugPosture =
    z[2] >= UPRIGHT_COS
      ? 'upright'
      : z[2] <= -UPRIGHT_COS
        ? 'upside-down'
        : Math.abs(z[2]) <= LYING_SIN
          ? 'lying'
          : 'tilted';
  return { id: o.id, shape, base, x, y, z, centre: add(base, scale(z, shape.heightM / 2)), posture };
}

/** A table-frame point in the mug's own frame (relative to its base). */
export function inMugFrame(m: Pick<MugView, 'base' | 'x' | 'y' | 'z'>, p: Vec3): Vec3 {
  const d = sub(p, m.base);
  return [
    d[0] * m.x[0] + d[1] * m.x[1] + d[2] * m.x[2],
    d[0] * m.y[0] + d[1] * m.y[1] + d[2] * m.y[2],
    d[0] * m.z[0] + d[1] * m.z[1] + d[2] * m.z[2],
  ];
}

/** A table-frame direction in the mug's own frame. */
export function dirInMugFrame(m: Pick<MugView, 'x' | 'y' | 'z'>, v: Vec3): Vec3 {
  return [
    v[0] * m.x[0] + v[1] * m.x[1] + v[2] * m.x[2],
    v[0] * m.y[0] + v[1] * m.y[1] + v[2] * m.y[2],
    v[0] * m.z[0] + v[1] * m.z[1] + v[2] * m.z[2],
  ];
}

/** A direction of a frame with axes (x, y, z) in the table frame. */
export function fromFrame(x: Vec3, y: Vec3, z: Vec3, v: Vec3): Vec3 {
  return add(add(scale(x, v[0]), scale(y, v[1])), scale(z, v[2]));
}

/**
 * Distance from p to the space a mug takes: a capsule along its axis through the body, as wide
 * as the handle reaches (so the handle's side is covered whichever way it points).
 */
export function distanceToMug(m: MugView, p: Vec3): number {
  const local = inMugFrame(m, p);
  const along = Math.max(0, Math.min(m.shape.heightM, local[2]));
  const radial = Math.hypot(local[0], local[1]);
  const dz = local[2] - along;
  return Math.max(0, Math.hypot(Math.max(0, radial - m.shape.handleReachM), dz));
}

/**
 * Whether `test` holds at some point of the path through `points`, sampled every 1 cm along each
 * segment (a lone point is its own path). Stops at the first point that passes.
 */
export function somePathPoint(points: readonly Vec3[], test: (p: Vec3) => boolean): boolean {
  for (let i = 0; i < points.length; i++) {
    const a = points[i === 0 ? 0 : i - 1];
    const b = points[i];
    const n = Math.max(1, Math.ceil(Math.hypot(b[0] - a[0], b[1] - a[1], b[2] - a[2]) / 0.01));
    for (let k = 0; k <= n; k++) {
      const t = k / n;
      if (test([a[0] + (b[0] - a[0]) * t, a[1] + (b[1] - a[1]) * t, a[2] + (b[2] - a[2]) * t])) return true;
    }
  }
  return false;
}

/**
 * True when a path through `points` (an arm's skeleton or a hand's outline, table frame) passes
 * within `radiusM` of any of the mugs, sampled every 1 cm. The code policies have no collision
 * checker; this keeps a planned pose from sweeping a mug it is not handling.
 */
export function pathTouchesMugs(mugs: readonly MugView[], points: readonly Vec3[], radiusM: number): boolean {
  if (mugs.length === 0) return false;
  return somePathPoint(points, (p) => mugs.some((m) => distanceToMug(m, p) < radiusM));
}
