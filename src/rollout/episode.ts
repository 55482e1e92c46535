/**
 * What one rollout produces: the per-step trajectory, the safety events, and the outcome —
 * the same record for the real rig and the sim.
 */
import type { SafetyEvent } from '../rig/contract.js';
import type { ObjectEndState, TaskProgress } from '../tasks/types.js';

/**
 * valid: ran its full length (or the policy failed on its own) and is scored.
 * invalid: the run cannot count (a rig fault, a sim blow-up, a layout the sim cannot build).
 * aborted: stopped for reasons outside the policy as a controller (policy timeout or
 *          disconnect, operator stop); never scored.
 */
export type EpisodeStatus = 'valid' | 'invalid' | 'aborted';

/** Where the end state comes from: privileged sim state, or the operator's entry on the real rig. */
export interface EndStateSource {
  /** How each object ended; called once, after the episode and its settle time. */
  endStates(): Promise<readonly ObjectEndState[]> | readonly ObjectEndState[];
  /** Optional numbers describing the whole final world (sim: every body pose) for the final-state hash. */
  fingerprint?(): Float64Array;
}

/** The trajectory, column-wise: step i's 14 entries at [i*14, (i+1)*14). */
export interface Trajectory {
  readonly steps: number;
  readonly timeS: Float64Array;
  /** Measured positions at the start of each step (what the policy could see). */
  readonly position: Float32Array;
  /** What the executor asked for. */
  readonly command: Float32Array;
  /** What the safety supervisor applied. */
  readonly applied: Float32Array;
  readonly chunkIndex: Int32Array;
  readonly row: Int32Array;
}

export interface Episode {
  readonly status: EpisodeStatus;
  /** Why the episode is invalid or aborted, in an operator's words. */
  readonly reason?: string;
  /** The policy's own failure (bad actions), recorded but still scored. */
  readonly error?: string;
  readonly taskId: string;
  readonly layoutIndex: number;
  readonly tier: number;
  readonly seed: number;
  readonly controlHz: number;
  readonly episodeSeconds: number;
  readonly policyName: string;
  readonly policyCheckpointSha256: string;
  /** Scored outcome; absent unless the status is valid and an end state was available. */
  readonly progress?: TaskProgress;
  readonly endStates?: readonly ObjectEndState[];
  readonly trajectory: Trajectory;
  readonly safetyEvents: readonly SafetyEvent[];
  /** Observations built for the policy (images rendered only for these). */
  readonly observations: number;
  /** SHA-256 over the trajectory, final rig state and the end-state fingerprint. */
  readonly finalStateHash: string;
}

/** An episode that never ran (its layout could not be built, its policy could not start). */
export function unrunEpisode(fields: {
  status: Exclude<EpisodeStatus, 'valid'>;
  reason: string;
  taskId: string;
  layoutIndex: number;
  tier: number;
  seed: number;
  controlHz: number;
  episodeSeconds: number;
  policyName: string;
  policyCheckpointSha256: string;
}): Episode {
  const empty: Trajectory = { steps: 0, timeS: new Float64Array(0), position: new Float32Array(0), command: new Float32Array(0), applied: new Float32Array(0), chunkIndex: new Int32Array(0), row: new Int32Array(0) };
  return { ...fields, trajectory: empty, safetyEvents: [], observations: 0, finalStateHash: '' };
}
