/**
 * What one rollout produces: the per-step trajectory, the safety events, and the outcome —
 * the same record for the real rig and the sim.
 */
import type { SafetyEvent } from '../rig/contract.js';
import type { ObjectEndState, TaskProgress } from '../tasks/types.js';
import type { TaskEvent } from '../tasks/task-events.js';
import type { TakeoverSpan } from './operator-takeover.js';

/**
 * valid: the episode says something about the policy and is scored (from the end state as the
 *        world stood): it ran its full length, or the policy's own error ended it early.
 * invalid: the run cannot count — the station failed, not the policy (a rig fault, a sim blow-up,
 *          cameras, a layout the sim cannot build, an end state that could not be scored).
 * aborted: stopped for reasons outside the policy as a controller (policy timeout or
 *          disconnect, operator stop); never scored.
 */
export type EpisodeStatus = 'valid' | 'invalid' | 'aborted';

/**
 * Why an episode ended, one code per row of the outcome table (docs/rig-model.md). The status
 * says whether it counts; the outcome says why, so reports can break the uncounted ones down.
 */
export type EpisodeOutcome =
  | 'completed'
  | 'policy-error'
  | 'rig-refused'
  | 'policy-reset-failed'
  | 'rig-fault'
  | 'settle-fault'
  | 'cameras-failed'
  | 'layout-unbuildable'
  | 'scoring-failed'
  | 'worker-failed'
  | 'policy-unavailable'
  | 'operator-stop'
  | 'safety-stop';

export interface OutcomeDefinition {
  readonly status: EpisodeStatus;
  /** What an analyst reads in a report for this outcome. */
  readonly label: string;
  /** When it happens and what it means for the numbers. */
  readonly meaning: string;
}

/** The outcome table: each code's status and its meaning, in an analyst's words. */
export const EPISODE_OUTCOMES: Readonly<Record<EpisodeOutcome, OutcomeDefinition>> = {
  completed: { status: 'valid', label: 'completed', meaning: 'Ran its full length; scored from the end state.' },
  'policy-error': {
    status: 'valid',
    label: 'policy error',
    meaning:
      "The policy's own error ended it early — actions with NaN or the wrong shape, an observation it cannot take, an exception in the policy. The rig held from that step; the episode is scored as the world stood and counts against the policy, with the error recorded.",
  },
  'rig-refused': {
    status: 'invalid',
    label: 'rig refused to start',
    meaning:
      'The rig would not configure or activate (a wrong zero, a silent motor); nothing moved. Fix the rig and run it again.',
  },
  'policy-reset-failed': {
    status: 'invalid',
    label: 'policy did not start',
    meaning:
      "The policy's reset failed before the first step (not an outage); nothing moved. Run it again once the policy starts.",
  },
  'rig-fault': {
    status: 'invalid',
    label: 'rig fault',
    meaning:
      'The rig (or the sim: an unstable simulation) faulted during the steps; the supervisor held or damped. Says nothing about the policy.',
  },
  'settle-fault': {
    status: 'invalid',
    label: 'fault while settling',
    meaning:
      'The policy finished (or failed on its own), then the rig or the sim faulted during the settle hold before the end state was taken: that end state cannot be trusted.',
  },
  'cameras-failed': {
    status: 'invalid',
    label: 'cameras failed',
    meaning:
      'The cameras could not give the policy its images; without them the episode says nothing about the policy.',
  },
  'layout-unbuildable': {
    status: 'invalid',
    label: 'layout not buildable',
    meaning:
      'The sim could not build the layout (an object kind the task does not have, an impossible pose); nothing ran.',
  },
  'scoring-failed': {
    status: 'invalid',
    label: 'not scorable',
    meaning: "The end state could not be read or scored by the task's rule.",
  },
  'worker-failed': {
    status: 'invalid',
    label: 'sweep worker failed',
    meaning:
      "A distributed sweep's job failed on every attempt — its worker crashed or was killed each time, or refused the job (a model whose bytes do not match its hash). Says nothing about the policy.",
  },
  'policy-unavailable': {
    status: 'aborted',
    label: 'policy unavailable',
    meaning:
      'The policy timed out, its server went away, reported an error or answered something unreadable; the rig held. An outage, not a policy failure.',
  },
  'operator-stop': {
    status: 'aborted',
    label: 'stopped by the operator',
    meaning: 'The operator stopped it (Ctrl-C, stop button); the rig held.',
  },
  'safety-stop': {
    status: 'aborted',
    label: 'safety stop',
    meaning:
      "The rig's safety supervisor stopped the arms mid-episode: the cell's interlock opened (e-stop circuit, door, light curtain, or the cell PLC went silent) or the rig was e-stopped. The arms held within one control cycle, then damped; outside the policy's control, never scored.",
  },
};

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
  /** Why it ended (a row of EPISODE_OUTCOMES); its status is EPISODE_OUTCOMES[outcome].status. */
  readonly outcome: EpisodeOutcome;
  /** Why the episode is invalid or aborted, in an operator's words. */
  readonly reason?: string;
  /** The policy's own failure (outcome 'policy-error'), with the step it happened at; recorded and still scored. */
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
  /** What happened to each object, in the task's terms (empty where nothing watched the table). */
  readonly taskEvents: readonly TaskEvent[];
  /** The stretches the operator drove with a leader arm (empty when nobody took over): such a rollout is assisted. */
  readonly takeovers: readonly TakeoverSpan[];
  /** Observations built for the policy (images rendered only for these). */
  readonly observations: number;
  /** SHA-256 over the trajectory, final rig state and the end-state fingerprint. */
  readonly finalStateHash: string;
}

/** An episode that never ran (its layout could not be built, its policy could not start). */
export function unrunEpisode(fields: {
  outcome: Exclude<EpisodeOutcome, 'completed' | 'policy-error'>;
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
  const empty: Trajectory = {
    steps: 0,
    timeS: new Float64Array(0),
    position: new Float32Array(0),
    command: new Float32Array(0),
    applied: new Float32Array(0),
    chunkIndex: new Int32Array(0),
    row: new Int32Array(0),
  };
  return {
    ...fields,
    status: EPISODE_OUTCOMES[fields.outcome].status,
    trajectory: empty,
    safetyEvents: [],
    taskEvents: [],
    takeovers: [],
    observations: 0,
    finalStateHash: '',
  };
}
