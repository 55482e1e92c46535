/**
 * What both privileged code policies do with a plan each chunk: start from where the arms are,
 * inside their limits; then write H rows in which the planned arm follows its motion, the other
 * keeps its command, and the tracking correction goes on top.
 */
import type { ArmSide, RigModel } from '../../rig/contract.js';
import { DOF_PER_ARM, STATE_DIM, stateIndex } from '../../rig/contract.js';
import type { ArmMotion } from './motion.js';
import { SETTLED_STEP_RAD, type TrackingCorrection } from './tracking-correction.js';

/** The running plan as the chunk writer needs it: whose arm, its motion, how many steps have gone out. */
export interface PlanCursor {
  readonly side: ArmSide;
  readonly motion: ArmMotion;
  step: number;
}

/**
 * The first command: the measured state, each joint clamped into its limits (a reading a hair past
 * a limit would otherwise be sent back as a target the safety supervisor must clamp).
 */
export function commandInLimits(state: ArrayLike<number>, rigModel: RigModel): Float64Array {
  const command = Float64Array.from(state);
  for (const [a, arm] of rigModel.arms.entries()) {
    arm.joints.forEach((j, i) => {
      const k = a * DOF_PER_ARM + i;
      command[k] = Math.min(j.maxRad, Math.max(j.minRad, command[k]));
    });
  }
  return command;
}

/**
 * H rows of 14 targets, advancing the plan (and `command`, in place) one control step per row.
 * `settled` is whether no joint moved more than SETTLED_STEP_RAD in a row: the tracking
 * correction measures only while the plan holds still.
 */
export function writeChunk(o: {
  readonly plan: PlanCursor | undefined;
  readonly command: Float64Array;
  readonly horizon: number;
  readonly controlHz: number;
  readonly tracking: TrackingCorrection;
  readonly rigModel: RigModel;
}): { actions: Float32Array; settled: boolean } {
  const H = o.horizon;
  const actions = new Float32Array(H * STATE_DIM);
  const q = new Float64Array(6);
  let maxRowStep = 0;
  for (let r = 0; r < H; r++) {
    const p = o.plan;
    if (p) {
      p.step += 1;
      const g = p.motion.sample(p.step / o.controlHz, q);
      const base = stateIndex(p.side, 0);
      for (let i = 0; i < 6; i++) maxRowStep = Math.max(maxRowStep, Math.abs(q[i] - o.command[base + i]));
      o.command.set(q, base);
      o.command[base + 6] = g;
    }
    actions.set(o.command, r * STATE_DIM);
    o.tracking.apply(actions, r, H, o.rigModel);
  }
  return { actions, settled: maxRowStep < SETTLED_STEP_RAD };
}
