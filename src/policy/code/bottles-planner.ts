/**
 * The task-level planner of the bottles policy: which bottle next, with which arm and grasp,
 * where to release it, and when (and how) to nudge the bin into reach first. Pure: it reads the
 * privileged scene and asks each arm's IK; it does no timing and keeps no state.
 */
import type { ArmSide } from '../../rig/contract.js';
import type { ArmReach, ToolTarget } from './arm-reach.js';
import {
  planCarry,
  planGrasp,
  type BottleGrasp,
  type CarryPlan,
  type GraspParams,
  DEFAULT_GRASP_PARAMS,
} from './bottle-grasps.js';
import { add, distXY, dot, normalize, scale, sub, type Vec3 } from './frames.js';
import { fromBinFrame, horizontal, inBinFrame, type BinView, type BottleView } from './geometry.js';
import { maxAbsDiff } from './motion.js';

export interface PickTask {
  readonly kind: 'pick';
  readonly bottleId: string;
  readonly side: ArmSide;
  readonly grasp: BottleGrasp;
  readonly carry: CarryPlan;
}

export interface NudgeTask {
  readonly kind: 'nudge-bin';
  readonly side: ArmSide;
  /** Unit push direction on the table, and how far. */
  readonly directionXY: Vec3;
  readonly distanceM: number;
  /** Above the contact point, the contact point inside the bin, the end of the push, above the end. */
  readonly waypoints: readonly { readonly target: ToolTarget; readonly q: Float64Array }[];
  /** Why: the arm that will drop once the bin is closer. */
  readonly forSide: ArmSide;
}

export interface IdleTask {
  readonly kind: 'idle';
  readonly reason: string;
}

export type BottlesTask = PickTask | NudgeTask | IdleTask;

export interface BottlesScene {
  /** Bottles still to clear (not in the bin, not given up on). */
  readonly bottles: readonly BottleView[];
  readonly bin: BinView;
  /** Centres of the bottles already in the bin: the next drop aims clear of them. */
  readonly inBin?: readonly Vec3[];
}

export interface PlannerOptions {
  readonly grasp?: GraspParams;
  /** Horizontal distance from a base beyond which an arm is not even asked. */
  readonly maxReachM?: number;
  /** Longest single push of the bin. */
  readonly maxPushM?: number;
  /** False once the episode's pushes are used up. Default true. */
  readonly allowNudge?: boolean;
}

const MAX_REACH_M = 0.62;
const MAX_PUSH_M = 0.3;
/** Fingertip centre height above the bin floor while pushing from inside. */
const PUSH_HEIGHT_ABOVE_FLOOR_M = 0.035;
/** Release attitudes closer than this count as the same. */
const SAME_TURN_RAD = 0.05;
/** Largest joint change between consecutive waypoints of a push (at most a 30 cm line). */
const MAX_NUDGE_JOINT_STEP_RAD = 1;
/** Clearance between the closed fingers and the wall they push. */
const FINGER_HALF_THICKNESS_M = 0.015;

/**
 * Candidate (bottle, arm) pairs, nearest first: an arm works a bottle on its own side before
 * reaching across, which also keeps the arms apart.
 */
export function assignmentOrder(
  bottles: readonly BottleView[],
  arms: readonly ArmReach[],
  maxReachM = MAX_REACH_M,
): { bottle: BottleView; arm: ArmReach; distanceM: number }[] {
  const pairs: { bottle: BottleView; arm: ArmReach; distanceM: number }[] = [];
  for (const bottle of bottles) {
    for (const arm of arms) {
      const d = distXY(bottle.centre, arm.basePosition);
      if (d <= maxReachM) pairs.push({ bottle, arm, distanceM: d });
    }
  }
  // Stable order: distance, then bottle id, then arm side, so plans are reproducible.
  return pairs.sort(
    (a, b) =>
      a.distanceM - b.distanceM ||
      (a.bottle.id < b.bottle.id ? -1 : a.bottle.id > b.bottle.id ? 1 : 0) ||
      (a.arm.side < b.arm.side ? -1 : 1),
  );
}

/** Where each arm most comfortably drops: in front of its base, toward the middle of the table. */
export function dropSweetSpot(arm: ArmReach, arms: readonly ArmReach[]): Vec3 {
  const midY = arms.reduce((s, a) => s + a.basePosition[1], 0) / arms.length;
  return [arm.basePosition[0] + 0.34, (arm.basePosition[1] + midY) / 2, 0];
}

/** A generic release pose above the bin's centre (approach tilted outward): can this arm drop into a bin at `binBase`? */
export function dropReachable(arm: ArmReach, bin: BinView, binBase: Vec3, seed: ArrayLike<number>): boolean {
  const radial = horizontal(sub(binBase, arm.basePosition)) ?? [1, 0, 0];
  for (const tilt of [0.8, 0.5, 1.1]) {
    const approach = normalize(add(scale([0, 0, -1], Math.cos(tilt)), scale(radial, Math.sin(tilt))));
    // A held bottle hangs ahead of the fingers along the approach; aim the fingers short of the centre.
    const position = add(binBase, add([0, 0, bin.shape.outerM[2] + 0.12], scale(radial, -0.06)));
    if (arm.solve({ position, approach, closing: [-radial[1], radial[0], 0] }, seed)) return true;
  }
  return false;
}

/** Picks the next task from the current scene. `seeds` are each arm's current joint angles. */
export function planNextTask(
  scene: BottlesScene,
  arms: readonly ArmReach[],
  seeds: Readonly<Record<ArmSide, ArrayLike<number>>>,
  opts: PlannerOptions = {},
): BottlesTask {
  if (scene.bottles.length === 0) return { kind: 'idle', reason: 'every bottle is in the bin' };
  const allowNudge = opts.allowNudge ?? true;
  const inputs: PlanInputs = { scene, arms, seeds, opts };
  // An arm that reaches over the bin only at full stretch carries badly (the bottle swings into
  // the rim); while the bin can still be nudged, such an arm asks for the bin instead.
  const comfortable = new Map(
    arms.map((a) => [a.side, dropReachable(a, scene.bin, scene.bin.base, seeds[a.side])] as const),
  );
  // Bin first: while it is still empty, push it to where the arm some bottle needs can drop too.
  // A push with bottles inside shoves them about (the fingers press the wall from inside, and
  // a bottle lying against it tips out over the rim); done first, it moves an empty box.
  if (allowNudge && (scene.inBin?.length ?? 0) === 0) {
    const nudge = nudgeFirst(inputs, (arm) => comfortable.get(arm.side) === true);
    if (nudge) return nudge;
  }
  const first = tryPicks(inputs, (arm) => !allowNudge || comfortable.get(arm.side) === true);
  if (first.pick) return first.pick;
  const graspableBy = first.graspableBy;
  if (allowNudge) {
    for (const forArm of graspableBy) {
      const nudge = planBinNudge(scene.bin, forArm, arms, seeds, opts.maxPushM ?? MAX_PUSH_M, [], scene.bottles);
      if (nudge) return nudge;
    }
    // No push helps: let the stretched arms try after all.
    const second = tryPicks(inputs, () => true);
    if (second.pick) return second.pick;
    // Nothing else left to do: push the bin even where it shoves a bottle on its way.
    for (const forArm of graspableBy) {
      const nudge = planBinNudge(scene.bin, forArm, arms, seeds, opts.maxPushM ?? MAX_PUSH_M);
      if (nudge) return nudge;
    }
  }
  if (graspableBy.length === 0) return { kind: 'idle', reason: 'no remaining bottle is within reach of either arm' };
  return {
    kind: 'idle',
    reason: allowNudge
      ? 'the bin is out of reach and cannot be nudged closer'
      : 'the bin is out of reach and no more pushes are allowed',
  };
}

/**
 * The push to make before any drop, when some bottle can be grasped only by an arm that cannot
 * drop into the bin where it stands; the push keeps the bin within reach of the arms that can.
 */
function nudgeFirst(
  { scene, arms, seeds, opts }: PlanInputs,
  canDrop: (arm: ArmReach) => boolean,
): NudgeTask | undefined {
  const needy = arms.filter((a) => !canDrop(a));
  if (needy.length === 0 || needy.length === arms.length) return undefined;
  const keep = arms.filter(canDrop);
  const graspParams = opts.grasp ?? DEFAULT_GRASP_PARAMS;
  const maxReach = opts.maxReachM ?? MAX_REACH_M;
  const graspable = (bottle: BottleView, arm: ArmReach): boolean =>
    distXY(bottle.centre, arm.basePosition) <= maxReach &&
    planGrasp(bottle, arm, seeds[arm.side], graspParams, scene.bin) !== undefined;
  for (const arm of needy) {
    const needsIt = scene.bottles.some((b) => !keep.some((k) => graspable(b, k)) && graspable(b, arm));
    if (!needsIt) continue;
    const nudge = planBinNudge(scene.bin, arm, arms, seeds, opts.maxPushM ?? MAX_PUSH_M, keep, scene.bottles);
    if (nudge) return nudge;
  }
  return undefined;
}

/**
 * Where to drop the next bottle, best first (table frame, at the bin's base height): spots along
 * the bin's long axis ordered by clearance from the bottles already inside, the centre first
 * when the bin is empty. Dropped on the very spot of an upright bottle, a bottle can come to rest
 * standing on its cap, above the rim — not in the bin.
 */
export function dropPoints(bin: BinView, inBin: readonly Vec3[]): Vec3[] {
  const spots: Vec3[] = DROP_OFFSETS_M.map(([x, y]) => fromBinFrame(bin, [x, y, 0]));
  const clearance = (p: Vec3): number => Math.min(Infinity, ...inBin.map((c) => Math.hypot(c[0] - p[0], c[1] - p[1])));
  return spots
    .map((p, i) => ({ p, i, c: Math.min(clearance(p), DROP_CLEARANCE_ENOUGH_M) }))
    .sort((a, b) => b.c - a.c || a.i - b.i)
    .map((x) => x.p);
}
/** Drop spots in the bin's frame, preferred first (the bin is 300 × 220 mm outside). */
const DROP_OFFSETS_M: readonly (readonly [number, number])[] = [
  [0, 0],
  [0.07, 0],
  [-0.07, 0],
  [0.07, 0.04],
  [-0.07, 0.04],
  [0.07, -0.04],
  [-0.07, -0.04],
];
/** Farther than this from every bottle inside, a spot is as good as any. */
const DROP_CLEARANCE_ENOUGH_M = 0.09;

/** What every planning step reads: the scene, the arms, their current joints, the options. */
interface PlanInputs {
  readonly scene: BottlesScene;
  readonly arms: readonly ArmReach[];
  readonly seeds: Readonly<Record<ArmSide, ArrayLike<number>>>;
  readonly opts: PlannerOptions;
}

function tryPicks(
  inputs: PlanInputs,
  mayCarry: (arm: ArmReach) => boolean,
): { pick?: PickTask; graspableBy: ArmReach[] } {
  const graspableBy: ArmReach[] = [];
  // Grasps across the body by either arm before any by the neck: a bottle hanging from its narrow
  // neck slipped out in the carry at the default physics step where the fine reference held it.
  for (const topDown of [false, true]) {
    const pick = tryPicksWith(
      inputs,
      mayCarry,
      { ...(inputs.opts.grasp ?? DEFAULT_GRASP_PARAMS), topDown },
      graspableBy,
    );
    if (pick) return { pick, graspableBy };
  }
  return { graspableBy };
}

/** One pass of tryPicks with the given grasp parameters; adds to `graspableBy` the arms that grasp some bottle. */
function tryPicksWith(
  { scene, arms, seeds, opts }: PlanInputs,
  mayCarry: (arm: ArmReach) => boolean,
  graspParams: GraspParams,
  graspableBy: ArmReach[],
): PickTask | undefined {
  for (const { bottle, arm } of assignmentOrder(scene.bottles, arms, opts.maxReachM ?? MAX_REACH_M)) {
    if (graspableBy.includes(arm) && !mayCarry(arm)) continue;
    const grasp = planGrasp(bottle, arm, seeds[arm.side], graspParams, scene.bin);
    if (!grasp) continue;
    if (mayCarry(arm)) {
      // The clearest drop spot (dropPoints' order); for a lying bottle, the one where the hand
      // turns least from its grasp attitude, the clearest among equals.
      const enough = grasp.style === 'side' ? SAME_TURN_RAD : Infinity;
      let best: CarryPlan | undefined;
      for (const dropAt of dropPoints(scene.bin, scene.inBin ?? [])) {
        const carry = planCarry(grasp, bottle.shape.radiusM, bottle.shape.heightM, scene.bin, arm, undefined, dropAt);
        if (carry && (!best || carry.turnRad < best.turnRad - SAME_TURN_RAD)) best = carry;
        if (best && best.turnRad <= enough) break;
      }
      if (best) return { kind: 'pick', bottleId: bottle.id, side: arm.side, grasp, carry: best };
    }
    if (!graspableBy.includes(arm)) graspableBy.push(arm);
  }
  return undefined;
}

/**
 * How much farther than the drop needs the bin is pushed: the closed fingers start 1.5 cm off
 * the wall and the bin lags them, and at 4 cm (v2) a push often fell short and was followed by
 * a second and third one.
 */
const PUSH_MARGIN_M = 0.08;
/** Margin kept between the pushed bin's outside and a bottle's body. */
const PUSH_CLEARANCE_M = 0.02;

/**
 * How far the bin can be pushed along `dir` (unit, horizontal) before its outside comes within
 * PUSH_CLEARANCE_M of a bottle's body, checked every centimetre up to `limitM`. Bottles that are
 * that close already before the push (inside the bin, leaning on it) are left out.
 */
export function clearPushM(bin: BinView, dir: Vec3, bottles: readonly BottleView[], limitM: number): number {
  const touches = (b: BottleView, shift: number): boolean => {
    const moved: BinView = { ...bin, base: add(bin.base, scale(dir, shift)) };
    const hx = bin.shape.outerM[0] / 2 + b.shape.radiusM + PUSH_CLEARANCE_M;
    const hy = bin.shape.outerM[1] / 2 + b.shape.radiusM + PUSH_CLEARANCE_M;
    for (let k = 0; k <= 10; k++) {
      const p = inBinFrame(moved, add(b.base, scale(b.axis, (b.shape.heightM * k) / 10)));
      if (Math.abs(p[0]) <= hx && Math.abs(p[1]) <= hy && p[2] <= bin.shape.outerM[2] + b.shape.radiusM) return true;
    }
    return false;
  };
  const inWay = bottles.filter((b) => !touches(b, 0));
  for (let d = 0.01; d <= limitM + 1e-9; d += 0.01) {
    if (inWay.some((b) => touches(b, d))) return d - 0.01;
  }
  return limitM;
}

/**
 * Pushes the bin toward `forArm`'s drop sweet spot with closed fingers pressed against the
 * inside of the wall that faces that way — reachable where the outside of the far wall is not.
 * The push is as short as makes the drop reachable (plus a margin), or as long as the pushing
 * arm reaches; the policy replans afterwards, so a short push is followed by another.
 */
export function planBinNudge(
  bin: BinView,
  forArm: ArmReach,
  arms: readonly ArmReach[],
  seeds: Readonly<Record<ArmSide, ArrayLike<number>>>,
  maxPushM = MAX_PUSH_M,
  keep: readonly ArmReach[] = [],
  obstacles: readonly BottleView[] = [],
): NudgeTask | undefined {
  const goal = dropSweetSpot(forArm, arms);
  const toGoal = sub(goal, [bin.base[0], bin.base[1], 0]);
  const goalDist = Math.hypot(toGoal[0], toGoal[1]);
  if (goalDist < 0.02) return undefined;
  const dir: Vec3 = [toGoal[0] / goalDist, toGoal[1] / goalDist, 0];
  // The wall whose outward normal points most along the push.
  const walls: { n: Vec3; half: number }[] = [
    { n: [1, 0, 0], half: bin.shape.outerM[0] / 2 },
    { n: [-1, 0, 0], half: bin.shape.outerM[0] / 2 },
    { n: [0, 1, 0], half: bin.shape.outerM[1] / 2 },
    { n: [0, -1, 0], half: bin.shape.outerM[1] / 2 },
  ];
  const c = Math.cos(bin.yawRad);
  const s = Math.sin(bin.yawRad);
  const world = (v: Vec3): Vec3 => [c * v[0] - s * v[1], s * v[0] + c * v[1], 0];
  const wall = walls.reduce((best, w) => (dot(world(w.n), dir) > dot(world(best.n), dir) ? w : best));
  const inset = wall.half - bin.shape.wallM - FINGER_HALF_THICKNESS_M;
  const contact = fromBinFrame(bin, [wall.n[0] * inset, wall.n[1] * inset, PUSH_HEIGHT_ABOVE_FLOOR_M]);
  const wallNormal = world(wall.n);
  // Fingers flat along the wall (turned across it, the closed fingers landed on the rim and lifted the bin).
  const closing: Vec3 = [-wallNormal[1], wallNormal[0], 0];
  const down: Vec3 = [0, 0, -1];
  // Fingertips (2 cm below the tool point) clear the rim by 2.5 cm.
  const aboveZ = bin.rimZ + 0.045;

  // Shortest push after which forArm (and every arm in `keep`) can drop.
  let needed: number | undefined;
  for (let d = 0.04; d <= Math.min(maxPushM, goalDist) + 1e-9; d += 0.04) {
    const at = add(bin.base, scale(dir, d));
    if ([forArm, ...keep].every((a) => dropReachable(a, bin, at, seeds[a.side]))) {
      needed = d;
      break;
    }
  }
  // A push that must keep other arms in reach is made only when one does; otherwise go as far as allowed.
  if (needed === undefined && keep.length > 0) return undefined;
  // The bin stops short of the bottles standing or lying in its way: pushed into them, it knocked
  // upright bottles over and set lying ones rolling off the table. A push cut short of what the
  // drop needs is not made (the next plan would ask for it again); the margin is cut to what is clear.
  const clear = clearPushM(bin, dir, obstacles, Math.min(maxPushM, goalDist));
  if (needed !== undefined && needed > clear) return undefined;
  const distance =
    needed !== undefined ? Math.min(needed + PUSH_MARGIN_M, goalDist, clear) : Math.min(maxPushM, goalDist, clear);
  if (distance < 0.04) return undefined;
  // The pusher: the arm the bin is for if it can, else the other.
  const candidates = [forArm, ...arms.filter((a) => a !== forArm)];
  for (const arm of candidates) {
    const radial = horizontal(sub(contact, arm.basePosition)) ?? [1, 0, 0];
    // Straight down first; leaning the approach away from the base buys reach over the rim.
    for (const tilt of [0, 0.3, 0.6]) {
      const approach = normalize(add(scale(down, Math.cos(tilt)), scale(radial, Math.sin(tilt))));
      for (let d = distance; d >= 0.04; d -= 0.04) {
        const end = add(contact, scale(dir, d));
        const targets: ToolTarget[] = [
          { position: [contact[0], contact[1], aboveZ], approach, closing },
          { position: contact, approach, closing },
          { position: end, approach, closing },
          { position: [end[0], end[1], aboveZ], approach, closing },
        ];
        const qs: Float64Array[] = [];
        let prev: ArrayLike<number> = seeds[arm.side];
        for (const t of targets) {
          const q = arm.solve(t, prev);
          // A joint that swings far between two waypoints (the wrist flipping its roll at a
          // limit) would sweep the fingers through the bin instead of pushing along a line.
          if (!q || (qs.length > 0 && maxAbsDiff(prev, q) > MAX_NUDGE_JOINT_STEP_RAD)) break;
          qs.push(q);
          prev = q;
        }
        if (qs.length === targets.length) {
          return {
            kind: 'nudge-bin',
            side: arm.side,
            directionXY: dir,
            distanceM: d,
            waypoints: targets.map((target, i) => ({ target, q: qs[i] })),
            forSide: forArm.side,
          };
        }
        if (qs.length < 2) break; // cannot even reach the contact point: shorter pushes will not help
      }
    }
  }
  return undefined;
}
