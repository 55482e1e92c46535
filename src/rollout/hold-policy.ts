/**
 * `code:hold` — holds the pose the episode starts in. A real (if idle) policy: the baseline
 * every other policy should beat, and what the rollout's plumbing and determinism tests drive.
 */
import { sha256 } from '@noble/hashes/sha2.js';
import { bytesToHex, utf8ToBytes } from '@noble/hashes/utils.js';
import { STATE_DIM } from '../rig/contract.js';
import type { ActionChunk, EpisodeContext, Observation, Policy, PolicyInfo } from '../policy/contract.js';

export const HOLD_POLICY_NAME = 'code:hold';
const HOLD_POLICY_VERSION = 1;
const HORIZON = 25;

export class HoldPolicy implements Policy {
  readonly info: PolicyInfo = {
    name: HOLD_POLICY_NAME,
    checkpointSha256: bytesToHex(sha256(utf8ToBytes(`${HOLD_POLICY_NAME}@${HOLD_POLICY_VERSION}`))),
    actionHorizon: HORIZON,
    cameras: [],
    needsPrivilegedState: false,
  };
  private pose: Float32Array | undefined;

  async reset(_ctx: EpisodeContext): Promise<void> {
    this.pose = undefined;
  }

  async infer(obs: Observation): Promise<ActionChunk> {
    if (obs.state.length !== STATE_DIM)
      throw new Error(`${HOLD_POLICY_NAME} expects a ${STATE_DIM}-entry state, not ${obs.state.length}.`);
    this.pose ??= Float32Array.from(obs.state);
    const actions = new Float32Array(HORIZON * STATE_DIM);
    for (let r = 0; r < HORIZON; r++) actions.set(this.pose, r * STATE_DIM);
    return { horizon: HORIZON, actions };
  }
}
