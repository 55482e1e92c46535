/**
 * The two-arm in-air handover of an upside-down mug (the reference lab's way): the giver takes
 * it from the side across the body, away from the handle (sideGraspCandidates: held near its mass
 * centre the mug keeps its attitude; the lay-down's top grasp by the upturned base let it slip or
 * pivot), lifts it and presents it between the arms, axis near level, rim toward the other arm;
 * the receiver takes it by the rim (one finger inside the cup, one outside), the giver lets go and
 * backs straight out of its grip, and the receiver sets the mug down standing. The YAM wrist
 * cannot turn a mug half a circle; between them the two arms do, each turning it a quarter. Pure:
 * geometry plus each arm's IK.
 */
import type { ArmReach, ToolTarget } from './arm-reach.js';
import { add, cross, dot, normalize, scale, sub, type Vec3 } from './frames.js';
import { horizontal } from './geometry.js';
import { fromToolBasis, toToolBasis } from './bottle-grasps.js';
import { dirInMugFrame, pathTouchesMugs, somePathPoint, type MugView } from './mug-geometry.js';
import {
  closingMatches,
  handPoints,
  MUG_OPEN_HALF_M,
  planMugGrasps,
  planMugPlace,
  toolFromMug,
  DEFAULT_MUG_GRASP_PARAMS,
  DEFAULT_PLACE_PARAMS,
  type MugFrame,
  type MugGrasp,
  type MugGraspParams,
  type MugGraspStyle,
  type MugPlace,
  type PlaceParams,
  type ToolInMug,
} from './mug-grasps.js';

type Target = ToolTarget & { closing: Vec3 };

export interface HandoverParams {
  /** How far below the rim the receiver's pads' middle closes on the wall. */
  readonly rimDepthM: number;
  /** The cup's wall: the receiver's pads' middle sits in the middle of it. */
  readonly wallM: number;
  /** Leans of the receiver's approach from the mug's axis along the rim (about its closing). */
  readonly rimLeansRad: readonly number[];
  /** How far the receiver's pre-grasp stands back from the rim grasp, along the mug's axis. */
  readonly takePreM: number;
  /** How far the giver backs off along its approach after letting go. */
  readonly giverBackM: number;
  /** Mug centres tried for the handover, x (from the arms' bases toward the far edge) and height; y is midway between the bases. */
  readonly spotsXZ: readonly (readonly [number, number])[];
  /** Turns of the mug's axis about the vertical from the giver → receiver line. */
  readonly yawsRad: readonly number[];
  /**
   * Tilts of the rim above level (the receiver then comes a little from above), rim up first.
   */
  readonly pitchesRad: readonly number[];
  /** Where along the axis (from the base) the giver's pads close across the body. */
  readonly sideGripAlongAxisM: number;
  /** Tilts of the giver's approach below level. */
  readonly sidePitchesRad: readonly number[];
  /** How far the giver's pads' middle stops short of the axis, toward the palm. */
  readonly sidePadOffsetM: number;
  /** Closest the two arms' link axes may come (the hands excepted). */
  readonly armClearanceM: number;
}

export const DEFAULT_HANDOVER_PARAMS: HandoverParams = {
  rimDepthM: 0.02,
  wallM: 0.005,
  rimLeansRad: [0, 0.4, -0.4],
  takePreM: 0.1,
  giverBackM: 0.08,
  spotsXZ: [
    [-0.15, 0.3],
    [-0.15, 0.25],
    [-0.25, 0.3],
    [-0.05, 0.3],
    [-0.25, 0.25],
    [-0.15, 0.35],
    [0.05, 0.3],
  ],
  yawsRad: [0, 0.3, -0.3],
  pitchesRad: [0.3, 0, -0.3],
  sideGripAlongAxisM: 0.03,
  sidePitchesRad: [0, 0.35, 0.6],
  sidePadOffsetM: 0.012,
  armClearanceM: 0.06,
};

export interface HandoverTake {
  readonly pre: Target;
  readonly grasp: Target;
  readonly qPre: Float64Array;
  readonly qGrasp: Float64Array;
  readonly toolInMug: ToolInMug;
  /** The mug's centre in the receiver's tool basis: where it should hang once the giver lets go. */
  readonly centreInTool: Vec3;
}

export interface HandoverTask {
  readonly kind: 'handover';
  readonly mugId: string;
  /** The giver: it picks the mug, lifts and presents it. */
  readonly side: ReachSide;
  readonly receiver: ReachSide;
  readonly grasp: MugGrasp;
  /** The giver's hand holding the mug at the handover, and its joints. */
  readonly present: Target;
  readonly qPresent: Float64Array;
  /** The giver's hand after letting go and backing off along its approach. */
  readonly giverBack: Target;
  readonly take: HandoverTake;
  /** The receiver's release: the mug standing on the table. */
  readonly place: MugPlace;
}
type ReachSide = ArmReach['side'];

const UP: Vec3 = [0, 0, 1];
const LINK_CLEARANCE_M = 0.05;
/**
 * Where on the rim the receiver takes the mug, about its axis from its own x (the handle is at
 * +90°): opposite the handle first, then where the giver's fingers are at the other end.
 */
const RIM_ANGLES_RAD = [-Math.PI / 2, -Math.PI / 4, (-3 * Math.PI) / 4, 0, Math.PI];

/** Turns of the mug about its own axis at the handover (0: its own x up, toward the vertical). */
const ROLLS_RAD = [Math.PI / 2, -Math.PI / 2, 0, Math.PI];

/** The mug's frame at the handover: centre c, axis (base → rim) along `z`, turned `roll` about it from its own x pointing up. */
function handoverFrame(c: Vec3, z: Vec3, roll: number, h: number): MugFrame {
  const v = normalize(sub(UP, scale(z, dot(UP, z))));
  const x = normalize(add(scale(v, Math.cos(roll)), scale(cross(z, v), Math.sin(roll))));
  const y = cross(z, x);
  return { x, y, z, origin: sub(c, scale(z, h / 2)) };
}

/** The mug's frame from the hand holding it (the inverse of toolFromMug). */
export function mugFromTool(t: Target, inMug: ToolInMug): MugFrame {
  const b = cross(inMug.approach, inMug.closing);
  const axis = (k: 0 | 1 | 2): Vec3 =>
    normalize(fromToolBasis(t.approach, t.closing, [inMug.approach[k], inMug.closing[k], b[k]]));
  const x = axis(0);
  const y = axis(1);
  const z = axis(2);
  const origin = sub(
    t.position,
    add(add(scale(x, inMug.position[0]), scale(y, inMug.position[1])), scale(z, inMug.position[2])),
  );
  return { x, y, z, origin };
}

/** Smallest distance between two polylines, sampled every 1 cm along `a`. */
export function polylineDistance(a: readonly Vec3[], b: readonly Vec3[]): number {
  let best = Infinity;
  somePathPoint(a, (p) => {
    for (let j = 1; j < b.length; j++) best = Math.min(best, pointSegment(p, b[j - 1], b[j]));
    return false;
  });
  return best;
}
function pointSegment(p: Vec3, a: Vec3, b: Vec3): number {
  const ab = sub(b, a);
  const l2 = dot(ab, ab);
  const t = l2 > 0 ? Math.max(0, Math.min(1, dot(sub(p, a), ab) / l2)) : 0;
  const d = sub(p, add(a, scale(ab, t)));
  return Math.hypot(d[0], d[1], d[2]);
}

/**
 * The giver's grasps: from the side across the body, the pads' middle 12 mm short of the axis (the
 * palm clears the body), the hand coming from the side away from the handle (turned up to 0.9 rad
 * about the vertical, away from the arm's base first), its closing level. Held there, near its
 * mass centre and with the pads' width along its axis, the mug keeps its attitude in the hand when
 * turned level; the top grasp near the upturned base let it slip or pivot.
 */
export function sideGraspCandidates(
  mug: MugView,
  basePosition: Vec3,
  params: HandoverParams = DEFAULT_HANDOVER_PARAMS,
): { style: MugGraspStyle; target: Target }[] {
  const handleAway = horizontal(mug.y);
  if (!handleAway) return [];
  const radial = horizontal(sub(mug.centre, basePosition)) ?? [1, 0, 0];
  const axisPoint = add(mug.base, scale(mug.z, params.sideGripAlongAxisM));
  const out: { style: MugGraspStyle; target: Target }[] = [];
  for (const turn of [0, 0.45, -0.45, 0.9, -0.9]) {
    const level: Vec3 = [
      handleAway[0] * Math.cos(turn) - handleAway[1] * Math.sin(turn),
      handleAway[0] * Math.sin(turn) + handleAway[1] * Math.cos(turn),
      0,
    ];
    if (dot(level, radial) < 0.2) continue;
    const closing = normalize(cross(UP, level));
    // Tilted down about the closing: the arm reaches a low level approach only near its base.
    for (const pitch of params.sidePitchesRad) {
      const approach = normalize(add(scale(level, Math.cos(pitch)), [0, 0, -Math.sin(pitch)]));
      const position = sub(axisPoint, scale(approach, params.sidePadOffsetM));
      out.push(
        { style: 'upside-down-side', target: { position, approach, closing } },
        { style: 'upside-down-side', target: { position, approach, closing: scale(closing, -1) } },
      );
    }
  }
  // Most natural first: the approach pointing away from the base, then the least tilted.
  const rank = (t: Target): number =>
    Math.round(dot(horizontal(t.approach) ?? radial, radial) * 4) * 10 - Math.abs(t.approach[2]);
  return out.sort((a, b) => rank(b.target) - rank(a.target));
}

/** Boxes a hand takes in its tool basis (approach, closing, approach × closing), open: two fingers and the palm, each [lo, hi] per axis. */
const HAND_BOXES: readonly (readonly [Vec3, Vec3])[] = [
  [
    [-0.04, MUG_OPEN_HALF_M - 0.002, -0.013],
    [0.022, MUG_OPEN_HALF_M + 0.014, 0.013],
  ],
  [
    [-0.04, -MUG_OPEN_HALF_M - 0.014, -0.013],
    [0.022, -MUG_OPEN_HALF_M + 0.002, 0.013],
  ],
  [
    [-0.13, -0.065, -0.035],
    [-0.035, 0.065, 0.035],
  ],
];
/** Points sampled over the hand boxes' surfaces and insides, tool basis. */
const HAND_SAMPLES: readonly Vec3[] = HAND_BOXES.flatMap(([lo, hi]) => {
  const pts: Vec3[] = [];
  const n = [4, 2, 2];
  for (let i = 0; i <= n[0]; i++)
    for (let j = 0; j <= n[1]; j++)
      for (let k = 0; k <= n[2]; k++) {
        pts.push([
          lo[0] + ((hi[0] - lo[0]) * i) / n[0],
          lo[1] + ((hi[1] - lo[1]) * j) / n[1],
          lo[2] + ((hi[2] - lo[2]) * k) / n[2],
        ]);
      }
  return pts;
});
const HAND_MARGIN_M = 0.008;

/** True when the two open hands at these tool targets overlap (each one's sample points inside the other's boxes, with a margin). */
export function handsOverlap(a: Target, b: Target): boolean {
  const inside = (p: Vec3, t: Target): boolean => {
    const l = toToolBasis(t, sub(p, t.position));
    return HAND_BOXES.some(([lo, hi]) => l.every((v, i) => v > lo[i] - HAND_MARGIN_M && v < hi[i] + HAND_MARGIN_M));
  };
  const world = (t: Target, v: Vec3): Vec3 => add(t.position, fromToolBasis(t.approach, t.closing, v));
  return HAND_SAMPLES.some((v) => inside(world(a, v), b)) || HAND_SAMPLES.some((v) => inside(world(b, v), a));
}

/**
 * A handover of the upside-down `mug` from `giver` to `receiver`, or undefined when none of the
 * candidate grasps, handover poses and releases is reachable clear of the other mugs. Tried in
 * order: the giver's grasps (planMugGrasps), handover spots nearest the middle first, the yaws and
 * tilts; for each, the receiver's rim grasp (both closings) and an upright release.
 */
export function planHandover(
  mug: MugView,
  others: readonly MugView[],
  giver: ArmReach,
  receiver: ArmReach,
  seeds: { readonly giver: ArrayLike<number>; readonly receiver: ArrayLike<number> },
  params: HandoverParams = DEFAULT_HANDOVER_PARAMS,
  graspParams: MugGraspParams = DEFAULT_MUG_GRASP_PARAMS,
  placeParams: PlaceParams = DEFAULT_PLACE_PARAMS,
): HandoverTask | undefined {
  if (mug.posture !== 'upside-down') return undefined;
  const h = mug.shape.heightM;
  const midY = (giver.basePosition[1] + receiver.basePosition[1]) / 2;
  const across = horizontal(sub(receiver.basePosition, giver.basePosition)) ?? [0, 1, 0];
  let tried = 0;
  for (const grasp of planMugGrasps(
    mug,
    others,
    giver,
    seeds.giver,
    graspParams,
    sideGraspCandidates(mug, giver.basePosition, params),
  )) {
    if (++tried > 3) break;
    for (const [sx, sz] of params.spotsXZ) {
      const c: Vec3 = [sx, midY, sz];
      for (const yaw of params.yawsRad)
        for (const pitch of params.pitchesRad) {
          const dirXY: Vec3 = [
            across[0] * Math.cos(yaw) - across[1] * Math.sin(yaw),
            across[0] * Math.sin(yaw) + across[1] * Math.cos(yaw),
            0,
          ];
          const z = normalize(add(scale(dirXY, Math.cos(pitch)), scale(UP, Math.sin(pitch))));
          for (const roll of ROLLS_RAD) {
            const f = handoverFrame(c, z, roll, h);
            const asked = toolFromMug(f, grasp.toolInMug);
            const qPresent = giver.solve(asked, grasp.qLift);
            if (!qPresent) continue;
            // The IK may close the other way round (the hand turned half a circle about its
            // approach): the giver's fingers are alike across the body, so that is the same grasp
            // with the mug turned about the approach. The mug's frame follows the hand it gets.
            const present: Target = { ...asked, closing: giver.toolAt(qPresent).closing };
            const f2 = mugFromTool(present, grasp.toolInMug);
            if (f2.z[2] < -0.3 || f2.z[2] > 0.75 || dot(horizontal(f2.z) ?? [0, 0, 0], across) < 0.3) continue;
            const giverSkeleton = giver.skeletonAt(qPresent);
            if (pathTouchesMugs(others, giverSkeleton, LINK_CLEARANCE_M)) continue;
            // Straight out of the fingers' grip, back along the approach (straight up, a finger under
            // the body lifted the mug out of the receiver's pinch).
            let giverBack: Target | undefined;
            for (const back of [
              scale(present.approach, -params.giverBackM),
              scale(present.approach, -0.75 * params.giverBackM),
            ]) {
              const t: Target = { ...present, position: add(present.position, back) };
              if (giver.solve(t, qPresent)) {
                giverBack = t;
                break;
              }
            }
            if (!giverBack) continue;
            const received = planReceive(
              mug,
              f2,
              receiver,
              seeds.receiver,
              giverSkeleton,
              present,
              others,
              params,
              placeParams,
            );
            if (!received) continue;
            const { take, place } = received;
            return {
              kind: 'handover',
              mugId: mug.id,
              side: giver.side,
              receiver: receiver.side,
              grasp,
              present,
              qPresent,
              giverBack,
              take,
              place,
            };
          }
        }
    }
  }
  return undefined;
}

/**
 * The receiver's part at the handover frame f (planned, or as the mug is seen in the giver's
 * hand): its rim grasp clear of the giver's arm and hand, and an upright release. Held by the
 * rim, the hand comes straight down over the mug at the release, which an arm reaches only near
 * it: the mug goes back where it was (`mug.centre`), or toward the receiver's own side.
 */
export function planReceive(
  mug: MugView,
  f: MugFrame,
  receiver: ArmReach,
  seed: ArrayLike<number>,
  giverSkeleton: readonly Vec3[],
  giverHand: Target,
  others: readonly MugView[],
  params: HandoverParams = DEFAULT_HANDOVER_PARAMS,
  placeParams: PlaceParams = DEFAULT_PLACE_PARAMS,
): { take: HandoverTake; place: MugPlace } | undefined {
  const take = planTake(
    f,
    mug.shape.radiusM - params.wallM / 2,
    mug.shape.heightM,
    receiver,
    seed,
    giverSkeleton,
    giverHand,
    others,
    params,
  );
  if (!take) return undefined;
  const b = receiver.basePosition;
  const sweet: Vec3 = [b[0] + 0.32, b[1] - Math.sign(b[1]) * 0.06, 0];
  const centres: Vec3[] = [mug.centre, add(scale(mug.centre, 0.5), scale(sweet, 0.5)), sweet];
  // The receiver stands the mug up: its rim grasp held fixed, the mug's final frame standing.
  // Held by the rim the mug hangs below the hand, a little askew: it is turned upright only 7 cm
  // above its release and set down onto the table (not dropped from 12 mm, where one landed tilted).
  const place = planMugPlace(
    { toolInMug: take.toolInMug, qLift: take.qGrasp },
    mug,
    others,
    receiver,
    'upright',
    { ...placeParams, aboveM: Math.min(placeParams.aboveM, 0.07), dropM: 0 },
    undefined,
    centres,
  );
  return place ? { take, place } : undefined;
}

/** The receiver's rim grasp at the handover frame f: on the side away from the handle, the approach from rim to base. */
function planTake(
  f: MugFrame,
  rimR: number,
  h: number,
  receiver: ArmReach,
  seed: ArrayLike<number>,
  giverSkeleton: readonly Vec3[],
  giverHand: Target,
  others: readonly MugView[],
  params: HandoverParams,
): HandoverTake | undefined {
  for (const angle of RIM_ANGLES_RAD)
    for (const lean of params.rimLeansRad) {
      const radialInMug: Vec3 = [Math.cos(angle), Math.sin(angle), 0];
      const tangent: Vec3 = [-Math.sin(angle), Math.cos(angle), 0];
      const position: Vec3 = [rimR * radialInMug[0], rimR * radialInMug[1], h - params.rimDepthM];
      // Leaning along the rim keeps the pads parallel to the wall.
      const approach: Vec3 = [tangent[0] * Math.sin(lean), tangent[1] * Math.sin(lean), -Math.cos(lean)];
      const asked = toolFromMug(f, { position, approach, closing: radialInMug });
      // Coming from the receiver's side: the approach must point away from its base.
      const radial = horizontal(sub(asked.position, receiver.basePosition)) ?? [1, 0, 0];
      if (dot(horizontal(asked.approach) ?? radial, radial) < 0) continue;
      const qGrasp = receiver.solve(asked, seed);
      if (!qGrasp) continue;
      // Either closing straddles the wall alike; the release below checks the one the IK chose.
      const grasp: Target = { ...asked, closing: receiver.toolAt(qGrasp).closing };
      const toolInMug: ToolInMug = { position, approach, closing: dirInMugFrame(f, grasp.closing) };
      let pre: Target | undefined;
      let qPre: Float64Array | undefined;
      for (const back of [params.takePreM, 0.7 * params.takePreM]) {
        pre = { ...grasp, position: sub(grasp.position, scale(grasp.approach, back)) };
        qPre = receiver.solve(pre, qGrasp);
        if (qPre && closingMatches(receiver, qPre, grasp.closing)) break;
        qPre = undefined;
      }
      if (!pre || !qPre) continue;
      let clear = true;
      for (const q of [qPre, qGrasp]) {
        const sk = receiver.skeletonAt(q);
        if (polylineDistance(sk, giverSkeleton) < params.armClearanceM || pathTouchesMugs(others, sk, LINK_CLEARANCE_M))
          clear = false;
      }
      // The receiver's hand stays off the giver's arm and hand (at the mug's other end), coming in and closed.
      if (
        clear &&
        (handPoints(grasp).some((p) => polylineDistance([p, p], giverSkeleton) < 0.02) ||
          handsOverlap(grasp, giverHand) ||
          handsOverlap(pre, giverHand))
      )
        clear = false;
      if (!clear) continue;
      const centre = add(f.origin, scale(f.z, h / 2));
      return { pre, grasp, qPre, qGrasp, toolInMug, centreInTool: toToolBasis(grasp, sub(centre, grasp.position)) };
    }
  return undefined;
}
