/**
 * Moves every code policy makes the same way: the park pose that keeps an idle arm out of the
 * other's work, and the over-the-top transit between distant poses.
 */
import type { ArmSide } from '../../rig/contract.js';
import { ArmMotion, maxAbsDiff } from './motion.js';

/** Parked: arm raised and turned outward, clear of the table's middle and the other arm's work. */
export function parkPose(side: ArmSide): Float64Array {
  return new Float64Array([side === 'left' ? 1.2 : -1.2, 0.5, 0.5, 0, 0, 0]);
}

/** An arm whose every joint is this close to a pose is there already (no move is planned). */
export const AT_POSE_RAD = 0.05;

/** Joints 2–6 of the raised pose: the fingers 0.3 m above the table, above every object. */
const RAISED_Q = [0.5, 0.5, 0, 0, 0] as const;

/**
 * Moves between distant poses over the top: raise the arm where it is, turn the base joint
 * while raised, then go down to the target. A straight joint-space swing from the park pose
 * sweeps the forearm through the objects near the bases.
 */
export function transit(motion: ArmMotion, target: ArrayLike<number>, gripper?: number): ArmMotion {
  const from = motion.endQ;
  const far = Math.abs(from[0] - target[0]) > 0.25;
  if (far) {
    const raisedHere = [from[0], ...RAISED_Q];
    const raisedThere = [target[0], ...RAISED_Q];
    if (maxAbsDiff(raisedHere, from) > AT_POSE_RAD) motion.moveTo(raisedHere, { gripper });
    motion.moveTo(raisedThere, { gripper });
  }
  return motion.moveTo(target, { gripper });
}
