/**
 * Integral action at the policy level, shared by the code policies: while the commanded pose
 * holds still, the rig's steady-state error (Coulomb friction, payload, imperfect gravity
 * feedforward — about 1–2 cm at the fingers) is measured and added to later targets, so grasps
 * land where planned.
 */
import type { ArmSide, RigModel } from '../../rig/contract.js';
import { STATE_DIM, stateIndex } from '../../rig/contract.js';

const BIAS_GAIN = 0.6;
const MAX_BIAS_RAD = 0.15;
/** Largest correction change per chunk (spread over its rows: ≤ 0.75 rad/s at 10 rows, 50 Hz). */
const MAX_BIAS_STEP_RAD = 0.03;
/** A chunk whose rows move no joint more than this counts as holding still. */
export const SETTLED_STEP_RAD = 0.002;

export class TrackingCorrection {
  /** Per-arm joint offsets added to the plan's targets. */
  private readonly bias: Record<ArmSide, Float64Array> = { left: new Float64Array(6), right: new Float64Array(6) };
  private readonly prevBias: Record<ArmSide, Float64Array> = { left: new Float64Array(6), right: new Float64Array(6) };

  reset(): void {
    for (const side of ['left', 'right'] as const) {
      this.bias[side].fill(0);
      this.prevBias[side].fill(0);
    }
  }

  /** Before each chunk: when the last chunk held still, the error between command and measurement feeds the correction. */
  update(lastChunkSettled: boolean, command: Float64Array | undefined, state: ArrayLike<number>): void {
    this.prevBias.left.set(this.bias.left);
    this.prevBias.right.set(this.bias.right);
    if (!lastChunkSettled || !command) return;
    for (const side of ['left', 'right'] as const) {
      const base = stateIndex(side, 0);
      const bias = this.bias[side];
      for (let i = 0; i < 6; i++) {
        const e = command[base + i] - state[base + i];
        const step = Math.max(-MAX_BIAS_STEP_RAD, Math.min(MAX_BIAS_STEP_RAD, BIAS_GAIN * e));
        bias[i] = Math.max(-MAX_BIAS_RAD, Math.min(MAX_BIAS_RAD, bias[i] + step));
      }
    }
  }

  /** Adds the correction to row r of H (it changes gradually over the chunk, never as a step), inside the joint limits. */
  apply(actions: Float32Array, r: number, H: number, rigModel: RigModel): void {
    const f = (r + 1) / H;
    for (const side of ['left', 'right'] as const) {
      const bias = this.bias[side];
      const prev = this.prevBias[side];
      const base = r * STATE_DIM + stateIndex(side, 0);
      const joints = rigModel.arms[side === 'left' ? 0 : 1].joints;
      for (let i = 0; i < 6; i++) {
        const v = actions[base + i] + prev[i] + (bias[i] - prev[i]) * f;
        actions[base + i] = Math.min(joints[i].maxRad, Math.max(joints[i].minRad, v));
      }
    }
  }
}
