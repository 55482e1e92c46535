/**
 * The task-level planner of the mug policy: which mug next, with which arm, grasp and release.
 * A lying mug is stood up in one pick; an upside-down mug is handed from one arm to the other in
 * the air and stood up (mug-handover.ts), or, when no handover can be planned, first laid on its
 * side (the YAM wrist cannot turn a mug half a circle in one grasp) and stood up by a later pick. Pure: it
 * reads the privileged scene and asks each arm's IK; it does no timing and keeps no state.
 */
import type { ArmSide } from '../../rig/contract.js';
import type { ArmReach } from './arm-reach.js';
import {
  planMugGrasps,
  planMugPlace,
  DEFAULT_MUG_GRASP_PARAMS,
  DEFAULT_PLACE_PARAMS,
  type MugGrasp,
  type MugGraspParams,
  type MugPlace,
  type PlaceParams,
} from './mug-grasps.js';
import type { MugView } from './mug-geometry.js';
import type { MugFrame } from './mug-grasps.js';
import { distXY, dot, sub, type Vec3 } from './frames.js';
import { planHandover, DEFAULT_HANDOVER_PARAMS, type HandoverParams, type HandoverTask } from './mug-handover.js';
import { horizontal } from './geometry.js';

export interface FlipTask {
  readonly kind: 'flip';
  readonly mugId: string;
  readonly side: ArmSide;
  readonly grasp: MugGrasp;
  readonly place: MugPlace;
}
export interface IdleTask {
  readonly kind: 'idle';
  readonly reason: string;
}
export type MugTask = FlipTask | HandoverTask | IdleTask;

export interface MugPlannerOptions {
  readonly grasp?: MugGraspParams;
  readonly place?: PlaceParams;
  /**
   * Stand an upside-down mug up in one two-arm handover (mug-handover.ts) when one can be
   * planned; the lay-down and a later stand-up remain the fallback. Default true.
   */
  readonly handover?: boolean;
  readonly handoverParams?: HandoverParams;
  /** Horizontal distance from a base beyond which an arm is not even asked. */
  readonly maxReachM?: number;
}

const MAX_REACH_M = 0.62;

/**
 * The next flip: lying mugs before upside-down ones (one pick finishes a lying mug), each by the
 * nearer arm first, so each arm works its own side of the table. `mugs` is every mug on the
 * table (the others are obstacles); `todo` the ones still to turn.
 */
export function planNextFlip(
  mugs: readonly MugView[],
  todo: readonly MugView[],
  arms: readonly ArmReach[],
  seeds: Readonly<Record<ArmSide, ArrayLike<number>>>,
  opts: MugPlannerOptions = {},
  allowRelay = true,
): MugTask {
  if (todo.length === 0) return { kind: 'idle', reason: 'every mug is upright' };
  const maxReach = opts.maxReachM ?? MAX_REACH_M;
  const rank = (m: MugView): number => (m.posture === 'lying' ? 0 : m.posture === 'upside-down' ? 1 : 2);
  const pairs: { mug: MugView; arm: ArmReach; d: number }[] = [];
  for (const mug of todo) {
    if (mug.posture !== 'lying' && mug.posture !== 'upside-down') continue;
    for (const arm of arms) {
      const d = distXY(mug.centre, arm.basePosition);
      if (d <= maxReach) pairs.push({ mug, arm, d });
    }
  }
  pairs.sort(
    (a, b) =>
      rank(a.mug) - rank(b.mug) ||
      a.d - b.d ||
      (a.mug.id < b.mug.id ? -1 : a.mug.id > b.mug.id ? 1 : 0) ||
      (a.arm.side < b.arm.side ? -1 : 1),
  );
  let handoversTried = false;
  for (const [i, { mug, arm }] of pairs.entries()) {
    const others = mugs.filter((m) => m.id !== mug.id);
    // Before the first upside-down mug is laid down, every upside-down mug gets its handover tried, by either arm.
    if (mug.posture === 'upside-down' && opts.handover !== false && !handoversTried) {
      handoversTried = true;
      for (const p of pairs.slice(i)) {
        const receiver = arms.find((a) => a.side !== p.arm.side);
        if (!receiver || p.mug.posture !== 'upside-down') continue;
        const rest = mugs.filter((m) => m.id !== p.mug.id);
        const task = planHandover(
          p.mug,
          rest,
          p.arm,
          receiver,
          { giver: seeds[p.arm.side], receiver: seeds[receiver.side] },
          opts.handoverParams ?? DEFAULT_HANDOVER_PARAMS,
          opts.grasp ?? DEFAULT_MUG_GRASP_PARAMS,
          opts.place ?? DEFAULT_PLACE_PARAMS,
        );
        if (task) return task;
      }
    }
    const goal = mug.posture === 'lying' ? 'upright' : 'lying';
    // An upside-down mug is laid down where some arm can stand it up next, if any release allows.
    const filters = goal === 'lying' ? [standableBySomeArm(arms), undefined] : [undefined];
    for (const accept of filters) {
      for (const grasp of planMugGrasps(mug, others, arm, seeds[arm.side], opts.grasp ?? DEFAULT_MUG_GRASP_PARAMS)) {
        const place = planMugPlace(grasp, mug, others, arm, goal, opts.place ?? DEFAULT_PLACE_PARAMS, accept);
        if (place) return { kind: 'flip', mugId: mug.id, side: arm.side, grasp, place };
      }
    }
  }
  // No arm stands a lying mug up as it lies: lay it down again, turned so that one can.
  if (allowRelay) {
    for (const { mug, arm } of pairs) {
      if (mug.posture !== 'lying') continue;
      const others = mugs.filter((m) => m.id !== mug.id);
      for (const grasp of planMugGrasps(mug, others, arm, seeds[arm.side], opts.grasp ?? DEFAULT_MUG_GRASP_PARAMS)) {
        const place = planMugPlace(
          grasp,
          mug,
          others,
          arm,
          'lying',
          opts.place ?? DEFAULT_PLACE_PARAMS,
          standableBySomeArm(arms),
        );
        if (place) return { kind: 'flip', mugId: mug.id, side: arm.side, grasp, place };
      }
    }
  }
  if (pairs.length === 0) {
    return {
      kind: 'idle',
      reason: todo.some((m) => m.posture === 'tilted')
        ? 'the mugs left are tilted, neither lying nor upside down'
        : 'no mug left to turn is within reach of either arm',
    };
  }
  return { kind: 'idle', reason: 'no arm reaches a grasp and a release for the mugs left clear of the others' };
}

/**
 * A lying mug an arm can stand up: its rim points away from that arm's base (the hand tips it
 * forward; tipping it back toward the base needs the wrist turned half a circle), and its handle
 * lies level on a side the grasp's approach may lean to (not back toward the base).
 */
export function standableBySomeArm(arms: readonly ArmReach[]): (final: MugFrame, spot: Vec3) => boolean {
  return (f, spot) => {
    const rim = horizontal(f.z);
    if (!rim || Math.abs(f.y[2]) > 0.3) return false;
    const handle = horizontal(f.y) as Vec3;
    return arms.some((a) => {
      const radial = horizontal(sub(spot, a.basePosition)) ?? [1, 0, 0];
      return dot(rim, radial) >= 0.6 && dot(handle, radial) >= -0.3;
    });
  };
}
