/**
 * Grasp and carry geometry for bottles: where the tool goes, which way the fingers close, and
 * where to hold a grasped bottle so it falls into the bin. Pure geometry plus the arm's IK.
 */
import type { ArmReach, ToolTarget } from './arm-reach.js';
import type { BinView, BottleView } from './geometry.js';
import { horizontal, pathTouchesBin } from './geometry.js';
import { add, cross, dot, normalize, scale, sub, type Vec3 } from './frames.js';

/** Clearance kept between an arm's link axes and the bin: the thickest link's radius plus a margin. */
const LINK_CLEARANCE_M = 0.06;

/** body: across an upright bottle's body from the side; top-down: across the neck from above; side: across a lying bottle. */
export type GraspStyle = 'body' | 'top-down' | 'side';

/** A grasp one arm can execute: tool targets and the joint angles that reach them. */
export interface BottleGrasp {
  readonly bottleId: string;
  readonly side: ArmReach['side'];
  readonly style: GraspStyle;
  /** Approach tilt from vertical, radians (0 = straight down). */
  readonly tiltRad: number;
  readonly pre: ToolTarget & { closing: Vec3 };
  readonly grasp: ToolTarget & { closing: Vec3 };
  readonly lift: ToolTarget & { closing: Vec3 };
  readonly qPre: Float64Array;
  readonly qGrasp: Float64Array;
  readonly qLift: Float64Array;
  /** The bottle's centre and axis in the tool frame's (approach, closing, approach×closing) basis at grasp. */
  readonly centreInTool: Vec3;
  readonly axisInTool: Vec3;
}

export interface GraspParams {
  /** How far the pre-grasp stands back along the approach axis. */
  readonly preDistanceM: number;
  readonly liftHeightM: number;
  /** How far below the top of an upright bottle the pads' centre closes. */
  readonly topGripDepthM: number;
  /** Widest object the open gripper takes. */
  readonly maxWidthM: number;
  readonly tiltsRad: readonly number[];
  /** Approach tilts (from vertical) tried for body grasps of upright bottles. */
  readonly bodyTiltsRad: readonly number[];
  /** Height along an upright bottle's axis where body grasps close. */
  readonly bodyGripHeightM: number;
  /** How far the pads' middle stops short of the object's axis, so the palm keeps clear. */
  readonly palmClearanceM: number;
  /** How far above a lying bottle's axis the pads' middle closes: the fingertips stay clear of the table. */
  readonly lyingGripAboveAxisM: number;
  /** Turns of the approach about a lying bottle's axis tried after the vertical ones. */
  readonly lyingTurnsRad: readonly number[];
  /** Whether an upright bottle may be taken by its neck from above (default true). */
  readonly topDown?: boolean;
}

export const DEFAULT_GRASP_PARAMS: GraspParams = {
  preDistanceM: 0.08,
  liftHeightM: 0.12,
  topGripDepthM: 0.018,
  maxWidthM: 0.09,
  tiltsRad: [0, 0.35, 0.7],
  bodyTiltsRad: [1.05, 1.3, 1.57],
  bodyGripHeightM: 0.11,
  palmClearanceM: 0.0,
  // Pads closing above a lying bottle's axis push it down out of the grasp (the contact normals
  // point at the axis): at 16 mm above (sin 0.49) lying bottles slid out of the fingers in the
  // carry at one physics step and not another; at 8 mm (sin 0.25, the pads' middle 4 cm above
  // the table) far fewer outcomes depend on the step (docs/code-policies.md).
  lyingGripAboveAxisM: 0.008,
  lyingTurnsRad: [0.35, -0.35, 0.5, -0.5],
};

/** Express v in the tool basis (approach, closing, approach × closing). */
export function toToolBasis(t: ToolTarget & { closing: Vec3 }, v: Vec3): Vec3 {
  const b = cross(t.approach, t.closing);
  return [dot(v, t.approach), dot(v, t.closing), dot(v, b)];
}
export function fromToolBasis(approach: Vec3, closing: Vec3, v: Vec3): Vec3 {
  const b = cross(approach, closing);
  return add(add(scale(approach, v[0]), scale(closing, v[1])), scale(b, v[2]));
}

const DOWN: Vec3 = [0, 0, -1];

/**
 * Candidate grasps of a bottle, most natural first: for an upright bottle the fingers close
 * across it horizontally and the approach tilts from straight down toward the bottle (away from
 * the base); for a lying bottle the fingers close across its axis and the approach tilts along
 * it. Upside-down bottles are grasped like upright ones (their base is up).
 */
export interface GraspCandidate {
  readonly style: GraspStyle;
  readonly tiltRad: number;
  readonly target: ToolTarget & { closing: Vec3 };
  /** Rotation about the approach axis is free (round object grasped across its axis from above). */
  readonly freeRotation?: boolean;
}

export function graspCandidates(
  bottle: BottleView,
  basePosition: Vec3,
  params: GraspParams = DEFAULT_GRASP_PARAMS,
): GraspCandidate[] {
  if (2 * bottle.shape.radiusM > params.maxWidthM) return [];
  const radial = horizontal(sub(bottle.centre, basePosition)) ?? [1, 0, 0];
  const out: GraspCandidate[] = [];
  if (bottle.posture === 'upright' || bottle.posture === 'upside-down') {
    const closing: Vec3 = [-radial[1], radial[0], 0];
    const top = bottle.posture === 'upright' ? add(bottle.base, scale(bottle.axis, bottle.shape.heightM)) : bottle.base;
    // Body grasps first: the pads close across the wide body with the approach tilted ≥ 60° from
    // vertical, so the palm passes beside the neck instead of landing on it.
    if (bottle.posture === 'upright') {
      for (const tilt of params.bodyTiltsRad) {
        const approach = normalize(add(scale(DOWN, Math.cos(tilt)), scale(radial, Math.sin(tilt))));
        // The palm stops 4 cm behind the pads' middle, only 7.5 mm short of the body when the
        // pads centre on the axis: aim the pads a little short so the palm never pushes the bottle.
        const grip = sub(
          add(bottle.base, scale(bottle.axis, params.bodyGripHeightM)),
          scale(approach, params.palmClearanceM),
        );
        out.push({ style: 'body', tiltRad: tilt, target: { position: grip, approach, closing }, freeRotation: false });
      }
    }
    for (const tilt of params.topDown === false ? [] : params.tiltsRad) {
      const approach = normalize(add(scale(DOWN, Math.cos(tilt)), scale(radial, Math.sin(tilt))));
      // The pads close just below the top (on the neck of an upright bottle): deeper, the palm
      // would hit the top.
      const position: Vec3 = [top[0], top[1], top[2] - params.topGripDepthM];
      out.push({ style: 'top-down', tiltRad: tilt, target: { position, approach, closing }, freeRotation: true });
    }
  } else {
    const along = horizontal(bottle.axis) ?? radial;
    const closing: Vec3 = [-along[1], along[0], 0];
    // Tilt the approach along the bottle axis toward the side facing away from the base.
    const away: Vec3 = dot(along, radial) >= 0 ? along : scale(along, -1);
    const grip = add(bottle.base, scale(bottle.axis, bottle.shape.gripAlongAxisM));
    // Slightly above the axis: the pads still straddle the widest chord, the palm clears the top.
    const position: Vec3 = [grip[0], grip[1], grip[2] + params.lyingGripAboveAxisM];
    for (const tilt of params.tiltsRad.filter((t) => t < 0.4)) {
      const approach = normalize(add(scale(DOWN, Math.cos(tilt)), scale(away, Math.sin(tilt))));
      out.push({ style: 'side', tiltRad: tilt, target: { position, approach, closing } });
    }
    // A lying bottle is round about its axis: the approach may also turn about the axis (the pads
    // still straddle it), which reaches many poses a vertical approach cannot — a bottle lying
    // across the arm's reach, or far out. Limited so the lower fingertip stays off the table.
    for (const turn of params.lyingTurnsRad) {
      const approach = normalize(add(scale(DOWN, Math.cos(turn)), scale(closing, Math.sin(turn))));
      const turned = normalize(add(scale(closing, Math.cos(turn)), scale([0, 0, 1], Math.sin(turn))));
      const at = sub(grip, scale(approach, params.lyingGripAboveAxisM));
      out.push({ style: 'side', tiltRad: Math.abs(turn), target: { position: at, approach, closing: turned } });
    }
  }
  return out;
}

/** The first candidate grasp whose pre-grasp, grasp and lift poses the arm reaches, or undefined. */
export function planGrasp(
  bottle: BottleView,
  reach: ArmReach,
  seed: ArrayLike<number>,
  params: GraspParams = DEFAULT_GRASP_PARAMS,
  bin?: BinView,
): BottleGrasp | undefined {
  // Links up to the flange (not the fingers, which may work close to the bin) stay clear of the bin.
  const touchesBin = (q: ArrayLike<number>): boolean =>
    bin !== undefined && pathTouchesBin(bin, reach.skeletonAt(q), LINK_CLEARANCE_M);
  if (bottle.posture === 'tilted') return undefined;
  for (const c of graspCandidates(bottle, reach.basePosition, params)) {
    const qGrasp = reach.solve(
      c.freeRotation ? { position: c.target.position, approach: c.target.approach } : c.target,
      seed,
    );
    if (!qGrasp) continue;
    // From here on the rotation is the one the grasp solution has (fixed, so the wrist stays put).
    const actual = reach.toolAt(qGrasp);
    const t: ToolTarget & { closing: Vec3 } = {
      position: c.target.position,
      approach: c.target.approach,
      closing: actual.closing,
    };
    const pre: ToolTarget & { closing: Vec3 } = {
      ...t,
      position: sub(t.position, scale(t.approach, params.preDistanceM)),
    };
    const qPre = reach.solve(pre, qGrasp);
    if (!qPre) continue;
    const lift: ToolTarget & { closing: Vec3 } = { ...t, position: add(t.position, [0, 0, params.liftHeightM]) };
    const qLift = reach.solve(lift, qGrasp);
    if (!qLift) continue;
    if (touchesBin(qPre) || touchesBin(qGrasp) || touchesBin(qLift)) continue;
    return {
      bottleId: bottle.id,
      side: reach.side,
      style: c.style,
      tiltRad: c.tiltRad,
      pre,
      grasp: t,
      lift,
      qPre,
      qGrasp,
      qLift,
      centreInTool: toToolBasis(t, sub(bottle.centre, t.position)),
      axisInTool: toToolBasis(t, bottle.axis),
    };
  }
  return undefined;
}

export interface CarryPlan {
  readonly target: ToolTarget & { closing: Vec3 };
  readonly q: Float64Array;
  /** How far the hand tilts away from its grasp attitude to release here. */
  readonly turnRad: number;
}
/** Release tilts of the approach from straight down tried besides the grasp's own. */
const CARRY_TILTS_RAD = [0, 30, 45, 60, 75, 90].map((d) => (d * Math.PI) / 180);

/** Rotation of v about the unit axis k by angle a (Rodrigues). */
function rotateAbout(k: Vec3, a: number, v: Vec3): Vec3 {
  const c = Math.cos(a);
  const s = Math.sin(a);
  return add(add(scale(v, c), scale(cross(k, v), s)), scale(k, dot(k, v) * (1 - c)));
}

/**
 * Where to hold a grasped bottle so that releasing it drops it into the bin: the bottle's
 * centre over `dropAt` (default the bin's centre), its lowest point `clearanceM` above the rim. The grasp frame is
 * turned about the vertical to face the bin, then tilted outward until the arm reaches.
 */
export function planCarry(
  grasp: BottleGrasp,
  bottleRadiusM: number,
  bottleHeightM: number,
  bin: BinView,
  reach: ArmReach,
  clearanceM = 0.06,
  dropAt: Vec3 = bin.base,
): CarryPlan | undefined {
  const binCentre: Vec3 = [dropAt[0], dropAt[1], bin.rimZ];
  const radialBin = horizontal(sub(binCentre, reach.basePosition)) ?? [1, 0, 0];
  const radialGrasp = horizontal(sub(grasp.grasp.position, reach.basePosition)) ?? radialBin;
  const yaw = Math.atan2(radialBin[1], radialBin[0]) - Math.atan2(radialGrasp[1], radialGrasp[0]);
  const up: Vec3 = [0, 0, 1];
  const a0 = rotateAbout(up, yaw, grasp.grasp.approach);
  const c0 = rotateAbout(up, yaw, grasp.grasp.closing);
  const k = normalize(cross(DOWN, radialBin));
  // Tilt relative to straight down. A lying bottle keeps the attitude it was lifted in (its
  // grasp's tilt first, then the nearest): turning the hand in the carry tipped a pinched bottle
  // 40° with it, and at the default physics step it slid out mid-swing where the fine reference
  // held it. An upright bottle held across its body is released from straight down first (tried
  // the other way, body-grasped bottles released upright fell out of the bin more often).
  const currentTilt = Math.acos(Math.max(-1, Math.min(1, dot(a0, DOWN))));
  const tilts =
    grasp.style === 'side'
      ? [currentTilt, ...CARRY_TILTS_RAD].sort((a, b) => Math.abs(a - currentTilt) - Math.abs(b - currentTilt))
      : CARRY_TILTS_RAD;
  for (const tilt of tilts) {
    const delta = tilt - currentTilt;
    const approach = normalize(rotateAbout(k, delta, a0));
    const closing = normalize(rotateAbout(k, delta, c0));
    const centreOff = fromToolBasis(approach, closing, grasp.centreInTool);
    const axis = fromToolBasis(approach, closing, grasp.axisInTool);
    const halfLenZ =
      Math.abs(axis[2]) * (bottleHeightM / 2) + Math.sqrt(Math.max(0, 1 - axis[2] * axis[2])) * bottleRadiusM;
    const lowestRel = centreOff[2] - halfLenZ;
    const z = Math.max(bin.rimZ + clearanceM - lowestRel, bin.rimZ + clearanceM + 0.02);
    const position: Vec3 = [binCentre[0] - centreOff[0], binCentre[1] - centreOff[1], z];
    const target = { position, approach, closing };
    const q = reach.solve(target, grasp.qLift);
    // Over the bin the hand is above the rim by design; the links before it must not rest on a wall.
    if (q && !pathTouchesBin(bin, reach.skeletonAt(q).slice(0, -1), LINK_CLEARANCE_M))
      return { target, q, turnRad: Math.abs(delta) };
  }
  return undefined;
}
