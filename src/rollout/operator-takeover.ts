/**
 * The operator taking over a policy rollout (HG-DAgger-style, as i2rt and LeRobot do): the loop
 * asks the takeover input every step, before the policy. While the operator drives, the policy is
 * not asked (it pauses) and the step writes the operator's command; when the operator gives back,
 * the policy's chunk in hand is dropped (it was planned before the correction) and the policy
 * answers afresh, its commands blended in from the pose the operator left, so control never jumps
 * either way: the ramp in is the teleop engage rule (src/teleop/follow.ts), the ramp out is here.
 *
 * The same input on every rig: a leader arm on the real rig, the emulated leader on the cell.
 */
import type { RigCommand, RigState } from '../rig/contract.js';

/** Something the takeover input has to say (took over, refused because the leader is far, leader lost). */
export interface TakeoverNote {
  readonly timeS: number;
  readonly kind: string;
  readonly message: string;
}

export interface OperatorTakeover {
  /**
   * Every control step, before the policy: the operator's command while the operator drives (the
   * policy pauses), else undefined. `lastCommand` is what the rig applied last step (the follower's
   * state before the first step): a ramp to the leader starts there, so the command never jumps.
   * Synchronous and cheap; it may poll the leader.
   */
  command(state: RigState, nowS: number, lastCommand: ArrayLike<number>): RigCommand | undefined;
  /** What happened since the last call, in an operator's words (recorded as 'takeover' events). */
  takeNotes(): readonly TakeoverNote[];
}

/** One stretch of a rollout the operator drove. */
export interface TakeoverSpan {
  /** Episode seconds (from step 0) of the first step the operator drove. */
  readonly startS: number;
  /** Episode seconds of the first step the policy drove again, or the end of the steps if the operator still drove then. */
  readonly endS: number;
  /** Control steps the operator drove. */
  readonly steps: number;
  /** The episode ended with the operator still driving. */
  readonly open: boolean;
}

/** The policy's commands are blended in from the operator's last pose over this long after a give-back. Default 1 s. */
export const DEFAULT_HAND_BACK_S = 1;

/** Minimum-jerk blend weight at u ∈ [0, 1]: zero velocity and acceleration at both ends. */
export function minimumJerk(u: number): number {
  const x = Math.min(1, Math.max(0, u));
  return x * x * x * (10 - 15 * x + 6 * x * x);
}
