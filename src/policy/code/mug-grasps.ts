/**
 * Grasp and place geometry for mugs: where the hand takes a mug (lying: from above across its
 * body, turned so the finger on the handle's side passes over the handle; upside down: from the
 * side across its body, the handle on the far side), and where the hand must be for the held mug
 * to stand upright — or lie on its side — at a spot on the table. Pure geometry plus the arm's IK.
 */
import type { ArmReach, ToolTarget } from './arm-reach.js';
import { add, cross, dot, normalize, scale, sub, type Vec3 } from './frames.js';
import { horizontal } from './geometry.js';
import { toToolBasis } from './bottle-grasps.js';
import { dirInMugFrame, fromFrame, inMugFrame, pathTouchesMugs, type MugView } from './mug-geometry.js';

export type MugGraspStyle = 'lying-top' | 'upside-down-top' | 'upside-down-side';

export interface MugGraspParams {
  /** How far the pre-grasp stands back along the approach. */
  readonly preDistanceM: number;
  /**
   * How far the grasp lifts the mug straight up before turning it, highest first: an approach
   * tilted back toward the arm's base reaches the grasp but not always 15 cm above it.
   */
  readonly liftHeightsM: readonly number[];
  /**
   * How far the pads' middle stops short of the mug's axis, toward the palm: the palm's face is
   * 4 cm behind the pads, and the body is 41 mm in radius, so pads on the axis would put the palm
   * into the mug.
   */
  readonly padOffsetM: number;
  /**
   * Turns of the approach about a lying mug's axis, lifting the finger on the handle's side. The
   * handle lies level at the axis' height and reaches 69 mm out; a finger coming straight down
   * beside the body lands on it. At 0.5 rad the finger clears the handle's top by ≈ 7 mm and the
   * other fingertip stays ≈ 9 mm above the table.
   */
  readonly lyingTurnsRad: readonly number[];
  /**
   * Where along a lying mug's axis (from its base) the pads close, tried in order: the body's
   * middle holds it nearest its mass centre; higher up, the hand stands the mug with the pads
   * higher above the table, which the arm reaches more often with its approach level.
   */
  readonly lyingGripsAlongAxisM: readonly number[];
  /** How far below an upside-down mug's (upturned) base the pads' middle closes: deeper, the palm would land on the base. */
  readonly topGripDepthM: number;
  /** Approach tilts from vertical tried for an upside-down mug. */
  readonly upsideDownTiltsRad: readonly number[];
}

export const DEFAULT_MUG_GRASP_PARAMS: MugGraspParams = {
  preDistanceM: 0.08,
  liftHeightsM: [0.15, 0.11, 0.07],
  padOffsetM: 0.012,
  lyingTurnsRad: [0.5, 0.42, 0.58],
  lyingGripsAlongAxisM: [0.0475, 0.065],
  topGripDepthM: 0.02,
  upsideDownTiltsRad: [0, 0.3],
};

/** Clearance kept between the arm's link axes and the other mugs. */
const LINK_CLEARANCE_M = 0.05;
/** Clearance kept between the hand's outline and the other mugs, and the table. */
const HAND_CLEARANCE_M = 0.01;
const TABLE_CLEARANCE_M = 0.004;

/** The gripper's outline in the tool basis (approach, closing, approach × closing), open: palm corners and fingertips. */
function handOutline(openHalfM: number): Vec3[] {
  const pts: Vec3[] = [];
  for (const s of [-1, 1])
    for (const t of [-1, 1]) {
      // Palm: 4 to 12 cm behind the pads' middle, 6 cm either side along the closing, 3 cm across.
      pts.push([-0.04, 0.06 * s, 0.03 * t], [-0.12, 0.06 * s, 0.03 * t]);
      // Fingers: from the palm to 2 cm past the pads' middle, 12 mm thick beyond the opening, 24 mm wide.
      pts.push(
        [0.02, (openHalfM + 0.012) * s, 0.012 * t],
        [0.02, openHalfM * s, 0.012 * t],
        [-0.04, (openHalfM + 0.012) * s, 0.012 * t],
      );
    }
  return pts;
}
/** Half the gap between the fingers when the policy opens them for a mug (0.93 of the 96 mm stroke). */
export const MUG_OPEN_GRIPPER = 0.93;
/** Half the open fingers' gap, m. */
export const MUG_OPEN_HALF_M = (0.096 * MUG_OPEN_GRIPPER) / 2;
const OUTLINE = handOutline(MUG_OPEN_HALF_M);

/** The hand's outline at a tool target, table frame. */
export function handPoints(t: ToolTarget & { closing: Vec3 }): Vec3[] {
  const b = cross(t.approach, t.closing);
  return OUTLINE.map((p) => add(t.position, add(add(scale(t.approach, p[0]), scale(t.closing, p[1])), scale(b, p[2]))));
}

type Target = ToolTarget & { closing: Vec3 };

/** The tool frame in the mug's own frame at the grasp: what stays fixed while the mug is held. */
export interface ToolInMug {
  readonly position: Vec3;
  readonly approach: Vec3;
  readonly closing: Vec3;
}

/** The hand holding a mug whose frame is f by the grasp `t` (table frame). */
export function toolFromMug(f: MugFrame, t: ToolInMug): Target {
  return {
    position: add(f.origin, fromFrame(f.x, f.y, f.z, t.position)),
    approach: normalize(fromFrame(f.x, f.y, f.z, t.approach)),
    closing: normalize(fromFrame(f.x, f.y, f.z, t.closing)),
  };
}

/**
 * Whether the arm at q closes the way `closing` asks. The IK treats the two fingers as alike; for
 * a held mug they are not: closing the other way round is the hand turned half a circle.
 */
export function closingMatches(reach: ArmReach, q: ArrayLike<number>, closing: Vec3): boolean {
  return dot(reach.toolAt(q).closing, closing) >= 0.9;
}

export interface MugGrasp {
  readonly mugId: string;
  readonly side: ArmReach['side'];
  readonly style: MugGraspStyle;
  readonly pre: Target;
  readonly grasp: Target;
  readonly lift: Target;
  readonly qPre: Float64Array;
  readonly qGrasp: Float64Array;
  readonly qLift: Float64Array;
  readonly toolInMug: ToolInMug;
  /** The mug's centre in the tool basis (approach, closing, approach × closing): where it should hang after the lift. */
  readonly centreInTool: Vec3;
}

const DOWN: Vec3 = [0, 0, -1];
const UP: Vec3 = [0, 0, 1];

/** Candidate grasps of a lying or upside-down mug, in the order tried. */
export function mugGraspCandidates(
  mug: MugView,
  basePosition: Vec3,
  params: MugGraspParams = DEFAULT_MUG_GRASP_PARAMS,
): { style: MugGraspStyle; target: Target }[] {
  const radial = horizontal(sub(mug.centre, basePosition)) ?? [1, 0, 0];
  const out: { style: MugGraspStyle; target: Target }[] = [];
  if (mug.posture === 'lying') {
    // The handle's side, across the axis on the table plane.
    const across = horizontal(cross(mug.z, UP)) ?? [0, 1, 0];
    const h = dot(across, mug.y) >= 0 ? across : scale(across, -1);
    for (const along of params.lyingGripsAlongAxisM)
      for (const turn of params.lyingTurnsRad) {
        const approach = normalize(add(scale(DOWN, Math.cos(turn)), scale(h, Math.sin(turn))));
        const closing = normalize(add(scale(h, Math.cos(turn)), scale(UP, Math.sin(turn))));
        const position = sub(add(mug.base, scale(mug.z, along)), scale(approach, params.padOffsetM));
        // The fingers are alike, the wrist is not: the same grasp with the hand turned half a circle
        // about its approach is another wrist configuration, and the YAM's wrist roll (±120°) lets
        // only one of the two turn the mug upright later. The one whose approach × closing points
        // from rim to base is tried first (standing the mug up then needs the wrist's natural roll).
        const first = dot(cross(approach, closing), mug.z) < 0 ? closing : scale(closing, -1);
        for (const c of [first, scale(first, -1)])
          out.push({ style: 'lying-top', target: { position, approach, closing: c } });
      }
  } else if (mug.posture === 'upside-down') {
    // From above across the body just below the (upturned) base, the fingers closing along the
    // mug's own x so they straddle the body beside the handle, not on it. Turned a quarter about
    // the closing, the mug then lies in the hand with the approach along its axis.
    const top = add(mug.base, scale(mug.z, params.topGripDepthM));
    const across = horizontal(mug.x) ?? [1, 0, 0];
    for (const tilt of params.upsideDownTiltsRad) {
      // Tilted about the closing (along the handle's line), away from the arm's base first.
      const handle = horizontal(mug.y) ?? radial;
      const lean = dot(handle, radial) >= 0 ? handle : scale(handle, -1);
      const approach = normalize(add(scale(DOWN, Math.cos(tilt)), scale(lean, Math.sin(tilt))));
      for (const c of [across, scale(across, -1)])
        out.push({ style: 'upside-down-top', target: { position: top, approach, closing: c } });
    }
  }
  return out;
}

/** True when the arm at q, or the hand at target t, comes too close to any of `others` (or the hand to the table). */
export function poseTouches(reach: ArmReach, q: ArrayLike<number>, t: Target, others: readonly MugView[]): boolean {
  const hand = handPoints(t);
  if (hand.some((p) => p[2] < TABLE_CLEARANCE_M)) return true;
  if (others.length === 0) return false;
  if (pathTouchesMugs(others, reach.skeletonAt(q), LINK_CLEARANCE_M)) return true;
  return hand.some((p) => pathTouchesMugs(others, [p], HAND_CLEARANCE_M));
}

/**
 * The candidate grasps whose pre-grasp, grasp and lift the arm reaches clear of the other mugs,
 * in the order tried, each with the closing it was asked for (see mugGraspCandidates).
 */
export function* planMugGrasps(
  mug: MugView,
  others: readonly MugView[],
  reach: ArmReach,
  seed: ArrayLike<number>,
  params: MugGraspParams = DEFAULT_MUG_GRASP_PARAMS,
  candidates: readonly { style: MugGraspStyle; target: Target }[] = mugGraspCandidates(mug, reach.basePosition, params),
): Generator<MugGrasp> {
  for (const c of candidates) {
    const qGrasp = reach.solve(c.target, seed);
    if (!qGrasp || !closingMatches(reach, qGrasp, c.target.closing)) continue;
    const actual = reach.toolAt(qGrasp);
    const t: Target = { ...c.target, closing: actual.closing };
    const pre: Target = { ...t, position: sub(t.position, scale(t.approach, params.preDistanceM)) };
    const qPre = reach.solve(pre, qGrasp);
    if (!qPre || !closingMatches(reach, qPre, t.closing)) continue;
    let lift: Target | undefined;
    let qLift: Float64Array | undefined;
    for (const dz of params.liftHeightsM) {
      lift = { ...t, position: add(t.position, [0, 0, dz]) };
      qLift = reach.solve(lift, qGrasp);
      if (qLift && closingMatches(reach, qLift, t.closing)) break;
      qLift = undefined;
    }
    if (!lift || !qLift) continue;
    // The hand may touch the mug it takes, never the others; at the grasp it must be off the table.
    if (
      poseTouches(reach, qPre, pre, others) ||
      poseTouches(reach, qGrasp, t, others) ||
      pathTouchesMugs(others, reach.skeletonAt(qLift), LINK_CLEARANCE_M)
    )
      continue;
    yield {
      mugId: mug.id,
      side: reach.side,
      style: c.style,
      pre,
      grasp: t,
      lift,
      qPre,
      qGrasp,
      qLift,
      toolInMug: {
        position: inMugFrame(mug, t.position),
        approach: dirInMugFrame(mug, t.approach),
        closing: dirInMugFrame(mug, t.closing),
      },
      centreInTool: toToolBasis(t, sub(mug.centre, t.position)),
    };
  }
}

/** The first of planMugGrasps, or undefined. */
export function planMugGrasp(
  mug: MugView,
  others: readonly MugView[],
  reach: ArmReach,
  seed: ArrayLike<number>,
  params: MugGraspParams = DEFAULT_MUG_GRASP_PARAMS,
): MugGrasp | undefined {
  for (const g of planMugGrasps(mug, others, reach, seed, params)) return g;
  return undefined;
}

/** A mug's own axes in the table frame (x, y toward the handle, z base → rim) and its base centre. */
export interface MugFrame {
  readonly x: Vec3;
  readonly y: Vec3;
  readonly z: Vec3;
  readonly origin: Vec3;
}

/** How the held mug is to end: standing on its base, or lying on its side. */
export type PlaceGoal = 'upright' | 'lying';

export interface MugPlace {
  readonly goal: PlaceGoal;
  /** The hand where it lets go, and its joints. */
  readonly target: Target;
  readonly q: Float64Array;
  /** Above the release, the same attitude: the arm turns the mug there and goes straight down. */
  readonly above: Target;
  readonly qAbove: Float64Array;
  /** Where the mug's base centre will be on the table. */
  readonly spotXY: Vec3;
}

export interface PlaceParams {
  /** How far above the table the mug is let go. */
  readonly dropM: number;
  /** How far above the release the hand turns the mug. */
  readonly aboveM: number;
  /** Closest a new spot may come to another mug's body. */
  readonly spotClearanceM: number;
}
export const DEFAULT_PLACE_PARAMS: PlaceParams = { dropM: 0.012, aboveM: 0.12, spotClearanceM: 0.02 };

/** Tilts of a lying mug's axis at its release. */
const LYING_PITCHES_RAD = [0, 0.3, -0.3, 0.5, -0.5];
const YAWS = Array.from({ length: 16 }, (_, i) => (i * Math.PI) / 8);
/** Spots tried around the mug's own: it leaves its footprint free when lifted. */
const SPOT_OFFSETS: readonly Vec3[] = [
  [0, 0, 0],
  ...[0, 1, 2, 3, 4, 5, 6, 7].map(
    (k): Vec3 => [0.07 * Math.cos((k * Math.PI) / 4), 0.07 * Math.sin((k * Math.PI) / 4), 0],
  ),
];

/**
 * Where to put the hand so the held mug ends in `goal` on the table: the mug's final frame is
 * tried at every yaw about the vertical (a standing mug is round; a lying one may point any way)
 * and the hand follows it rigidly (the grasp's tool-in-mug frame). The release is ranked by how
 * naturally the arm holds it — the approach pointing away from the base. Spots are tried around
 * each of `centres` in turn (default: where the mug is).
 */
export function planMugPlace(
  grasp: Pick<MugGrasp, 'toolInMug' | 'qLift'>,
  mug: MugView,
  others: readonly MugView[],
  reach: ArmReach,
  goal: PlaceGoal,
  params: PlaceParams = DEFAULT_PLACE_PARAMS,
  accept: (final: MugFrame, spot: Vec3) => boolean = () => true,
  centres: readonly Vec3[] = [mug.centre],
): MugPlace | undefined {
  const r = mug.shape.radiusM;
  const h = mug.shape.heightM;
  const clear = (spot: Vec3): boolean =>
    others.every((o) => {
      // The new mug's body (its axis up to the rim at the spot) stays clear of every other mug.
      for (const z of [0.01, h / 2, h - 0.01]) {
        if (distanceFromBody(o, [spot[0], spot[1], z]) < r + params.spotClearanceM) return false;
      }
      return true;
    });
  for (const centre of centres)
    for (const off of SPOT_OFFSETS) {
      const spot: Vec3 = [centre[0] + off[0], centre[1] + off[1], 0];
      if (!clear(spot)) continue;
      const options: { target: Target; score: number; spot: Vec3 }[] = [];
      for (const yaw of YAWS) {
        const frames: MugFrame[] = [];
        if (goal === 'upright') {
          const y: Vec3 = [Math.cos(yaw), Math.sin(yaw), 0];
          frames.push({ x: cross(y, UP), y, z: UP, origin: [spot[0], spot[1], params.dropM] });
        } else {
          // Lying: the axis level or tilted (the mug then falls flat on its side when let go), the
          // handle level either way or pointing up (it rolls onto its side).
          for (const pitch of LYING_PITCHES_RAD) {
            const z: Vec3 = [Math.cos(yaw) * Math.cos(pitch), Math.sin(yaw) * Math.cos(pitch), Math.sin(pitch)];
            const level = normalize(cross(UP, z));
            const centreZ = r * Math.cos(pitch) + (h / 2) * Math.abs(Math.sin(pitch)) + params.dropM;
            const origin: Vec3 = [spot[0] - z[0] * (h / 2), spot[1] - z[1] * (h / 2), centreZ - z[2] * (h / 2)];
            for (const y of [level, scale(level, -1), normalize(cross(z, level))])
              frames.push({ x: cross(y, z), y, z, origin });
          }
        }
        for (const f of frames) {
          if (!accept(f, spot)) continue;
          const target = toolFromMug(f, grasp.toolInMug);
          const radial = horizontal(sub(target.position, reach.basePosition)) ?? [1, 0, 0];
          options.push({ target, score: dot(target.approach, radial) - 0.5 * Math.max(0, target.approach[2]), spot });
        }
      }
      options.sort((a, b) => b.score - a.score);
      for (const o of options) {
        if (handPoints(o.target).some((p) => p[2] < TABLE_CLEARANCE_M)) continue;
        const q = reach.solve(o.target, grasp.qLift);
        // The IK treats the two fingers as alike; for a held mug they are not: closing the other
        // way round would be the hand turned half a circle, and the mug with it (upside down).
        if (!q || !closingMatches(reach, q, o.target.closing)) continue;
        const above: Target = { ...o.target, position: add(o.target.position, [0, 0, params.aboveM]) };
        const qAbove = reach.solve(above, q);
        if (!qAbove || !closingMatches(reach, qAbove, o.target.closing)) continue;
        if (
          poseTouches(reach, q, o.target, others) ||
          pathTouchesMugs(others, reach.skeletonAt(qAbove), LINK_CLEARANCE_M)
        )
          continue;
        return { goal, target: o.target, q, above, qAbove, spotXY: o.spot };
      }
    }
  return undefined;
}

/** Distance from p to a mug's body (axis capsule of the body's radius, handle left out). */
function distanceFromBody(m: MugView, p: Vec3): number {
  const local = inMugFrame(m, p);
  const along = Math.max(0, Math.min(m.shape.heightM, local[2]));
  return Math.max(0, Math.hypot(Math.max(0, Math.hypot(local[0], local[1]) - m.shape.radiusM), local[2] - along));
}
