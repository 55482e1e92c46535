/**
 * Whether the open hand fits where a sort-from-tote grasp puts it. The YAM hand is large next to
 * the parts: a 120 mm wide palm whose underside sits 60 mm above the fingertips, and two 24 mm wide
 * fingers that, opened round a 35 mm ring, stand 65 mm apart. Taken straight down with the fingers
 * closing along a tote wall's normal, or across a neighbouring part, the palm lands on the wall or
 * a fingertip on the neighbour, and the fingers close 15–120 mm above the part. So each candidate
 * grasp (approach, closing direction, opening) is scored by its clearance: the least distance from
 * points on the fingers and the palm to the tote's walls and to the other parts.
 *
 * Table frame, z up. Hand frame as in arm-reach.ts: approach −z, fingers open along ±y, tool point
 * (where the pads meet) 0.12 m from the flange.
 */
import type { PartView } from './part-geometry.js';
import { TOTE_INSIDE_HALF_M } from './part-geometry.js';
import { add, cross, dot, normalize, scale, sub, type Quat, type Vec3 } from './frames.js';
import { quatRotate, quatConj } from '../../pose/quaternion.js';

/**
 * The hand's collision boxes in the gripper frame: the sim twin's GRIPPER_GEOMETRY (src/sim/arm/geometry.ts),
 * which models the real hand (a test keeps the two equal).
 */
export const HAND_BOXES = {
  palmHalfM: [0.03, 0.06, 0.04] as Vec3,
  palmCentreZM: -0.04,
  fingerHalfM: [0.012, 0.006, 0.03] as Vec3,
  fingerCentreZM: -0.11,
  toolZM: -0.12,
} as const;

/** Tote wall height above the table, m. */
const TOTE_RIM_Z_M = 0.12;
const TOTE_WALL_M = 0.005;

export interface HandPose {
  /** Tool point, table frame. */
  readonly tool: Vec3;
  /** Unit approach (flange → fingers). */
  readonly approach: Vec3;
  /** Unit closing direction (perpendicular to the approach after projection). */
  readonly closing: Vec3;
  /** Each finger's inner face from the tool point, m. */
  readonly halfOpeningM: number;
}

/** Sample points of the fingers and the palm in the table frame. */
export function handPoints(pose: HandPose): Vec3[] {
  const z = scale(normalize(pose.approach), -1);
  const y = normalize(sub(pose.closing, scale(z, dot(pose.closing, z))));
  const x = cross(y, z);
  const toWorld = (l: Vec3): Vec3 =>
    add(pose.tool, add(add(scale(x, l[0]), scale(y, l[1])), scale(z, l[2] - HAND_BOXES.toolZM)));
  const pts: Vec3[] = [];
  const box = (c: Vec3, h: Vec3, n: readonly [number, number, number]): void => {
    for (let i = 0; i < n[0]; i++)
      for (let j = 0; j < n[1]; j++)
        for (let k = 0; k < n[2]; k++) {
          const f = (m: number, N: number): number => (N === 1 ? 0 : -1 + (2 * m) / (N - 1));
          pts.push(toWorld([c[0] + h[0] * f(i, n[0]), c[1] + h[1] * f(j, n[1]), c[2] + h[2] * f(k, n[2])]));
        }
  };
  const f = HAND_BOXES.fingerHalfM;
  for (const sign of [1, -1]) box([0, sign * (pose.halfOpeningM + f[1]), HAND_BOXES.fingerCentreZM], f, [3, 2, 4]);
  box([0, 0, HAND_BOXES.palmCentreZM], HAND_BOXES.palmHalfM, [3, 5, 2]);
  return pts;
}

export interface ClearanceScene {
  readonly tote?: { readonly position: Vec3; readonly quaternion: Quat };
  /** Every part but the one grasped. */
  readonly others: readonly PartView[];
}

/**
 * The least clearance, m, between the hand's points and the tote's walls and the other parts
 * (negative: inside one). Parts are capsules along their axis (screws and bolts with their head's
 * radius, about 0.9 × the shank's diameter).
 */
export function handClearance(pose: HandPose, scene: ClearanceScene): number {
  let least = Infinity;
  const pts = handPoints(pose);
  const tote = scene.tote;
  const inv: Quat | undefined = tote ? quatConj(tote.quaternion) : undefined;
  for (const p of pts) {
    if (tote && inv) {
      const l = quatRotate(inv, sub(p, tote.position));
      const ax = Math.abs(l[0]);
      const ay = Math.abs(l[1]);
      const [hx, hy] = TOTE_INSIDE_HALF_M;
      if (ax < hx + TOTE_WALL_M + 0.03 && ay < hy + TOTE_WALL_M + 0.03) {
        // Inside the tote's footprint: the walls bound it sideways below the rim.
        const side = Math.min(hx - ax, hy - ay);
        const d = l[2] >= TOTE_RIM_Z_M ? Math.max(side, l[2] - TOTE_RIM_Z_M) : side;
        least = Math.min(least, d);
      }
    }
    for (const o of scene.others) {
      const radius =
        o.shape.category === 'screw' || o.shape.category === 'bolt' ? 0.9 * o.shape.widthM : o.shape.widthM / 2;
      const a = o.origin;
      const b = add(o.origin, scale(o.axis, o.shape.lengthM));
      least = Math.min(least, segmentDistance(p, a, b) - radius);
    }
  }
  return least;
}

function segmentDistance(p: Vec3, a: Vec3, b: Vec3): number {
  const ab = sub(b, a);
  const L = dot(ab, ab);
  const t = L > 0 ? Math.max(0, Math.min(1, dot(sub(p, a), ab) / L)) : 0;
  const c = add(a, scale(ab, t));
  return Math.hypot(p[0] - c[0], p[1] - c[1], p[2] - c[2]);
}
