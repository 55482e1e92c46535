/**
 * The Rollouts page: layout sets, stored rollouts and their scores, running one rollout and its
 * progress, and a rollout's replay. Pure (no Node built-ins): the server and the operator UI share
 * it; src/server/api-types.ts gathers every feature.
 */
import type { Layout } from '../../tasks/types.js';

export interface LayoutSetSummary {
  readonly sha256: string;
  readonly task: string;
  readonly version: number;
  readonly seed: number;
  readonly layoutCount: number;
  readonly tiers: readonly number[];
  readonly importedAt: string;
  /** The task's own episode length, seconds. */
  readonly episodeSeconds: number;
}

export type RolloutStatusWord = 'valid' | 'invalid' | 'aborted';

export interface RolloutSummary {
  readonly id: number;
  readonly kind: 'sim' | 'real';
  readonly policy: { readonly id: number; readonly name: string; readonly spec: string };
  readonly layoutSetSha256: string;
  readonly task: string | null;
  readonly layoutIndex: number;
  readonly tier: number;
  readonly status: RolloutStatusWord;
  readonly outcome: string | null;
  /** Why it is invalid or aborted. */
  readonly statusReason: string | null;
  readonly policyError: string | null;
  /** Task progress 0..1: the latest operator score, else the rollout's own (sim); null = awaiting a score. */
  readonly progress: number | null;
  /** Who scored it ("scripted operator of the emulated cell", an operator's name), or null. */
  readonly scoredBy: string | null;
  readonly startedAt: string;
  readonly durationS: number | null;
  readonly episodeSeconds: number;
  readonly controlHz: number;
  /** True for rollouts on the emulated cell: a rehearsal, not a result. */
  readonly emulatedCell: boolean;
  /** A rehearsal, not a result (black camera frames, the emulated cell): reports leave it out unless asked. */
  readonly rehearsal: boolean;
  /** The evaluation session it ran in (scored there), or null for a single rollout. */
  readonly sessionId: number | null;
}

/** POST /api/rollouts/ID/score: per-object end states, or a count (objects in the task's region, or upright); a re-score needs a reason. */
export interface RolloutScoreRequest {
  readonly endStates?: readonly { readonly id: string; readonly region?: string; readonly upright?: boolean }[];
  readonly count?: number;
  readonly reason?: string;
  readonly operator?: string;
}

export interface RolloutDetail extends RolloutSummary {
  readonly seed: number | null;
  readonly counts: Readonly<Record<string, number>> | null;
  readonly finalStateHash: string | null;
  readonly calibrationSha256s: readonly string[];
  /** The episode file (MCAP) the rollout was recorded in, if it was. */
  readonly episodeFile: string | null;
  readonly score: {
    readonly progress: number;
    readonly counts: Readonly<Record<string, number>>;
    readonly operator: string | null;
    readonly note: string | null;
    readonly enteredAt: string;
  } | null;
}

export interface RunRolloutRequest {
  /** A policy spec, as `tandem rig rollout --policy` takes. */
  readonly policy: string;
  /** The layout set's SHA-256 (it must be in the store). */
  readonly layoutSet: string;
  readonly layout: number;
  /** Episode length; default the task's. */
  readonly seconds?: number;
  readonly seed?: number;
  /** The emulated cell's scripted operator scores the end state (default true on the cell). */
  readonly scoreFromCell?: boolean;
}

/** Draws a layout set as \`tandem layouts sample\` does and keeps it in the store. */
export interface SampleLayoutSetRequest {
  readonly task: string;
  readonly tiers: readonly number[];
  readonly perTier: number;
  readonly seed: number;
}

export type RunPhase = 'starting' | 'running' | 'storing' | 'done' | 'failed';

export interface RolloutRun {
  readonly runId: number;
  readonly phase: RunPhase;
  readonly policy: string;
  readonly layoutSet: string;
  readonly layout: number;
  readonly seconds: number;
  /** Control steps done / planned. */
  readonly stepsDone: number;
  readonly totalSteps: number;
  /** What is happening, or why it failed, in words. */
  readonly message: string;
  /** Once stored. */
  readonly rolloutId: number | null;
  readonly status: RolloutStatusWord | null;
  readonly progress: number | null;
  readonly scoreSummary: string | null;
}

/** A recorded episode's joint states, from its MCAP file (times from its first joint state). */
export interface JointTrace {
  readonly rolloutId: number;
  readonly kind: 'sim' | 'real';
  readonly status: RolloutStatusWord;
  readonly progress: number | null;
  /** "left_joint1" … "left_gripper", "right_…" (the file's own names). */
  readonly jointNames: readonly string[];
  readonly timesS: readonly number[];
  /** One row per time, one value per joint name. */
  readonly positions: readonly (readonly number[])[];
}

/** A real episode beside its sim twin (same policy, layout set, layout; same seed where there is one). */
export interface ReplayView {
  readonly real: JointTrace;
  readonly sim: JointTrace | null;
  /** Why there is no sim twin, in words. */
  readonly simNote: string | null;
  /** The joints both name (arm joints and grippers), in the real file's order. */
  readonly errorJointNames: readonly string[];
  /** Per real time: sim − real per error joint, rad (the sim linearly interpolated; null past its end). */
  readonly errorRad: readonly (readonly (number | null)[])[];
  /** Root-mean-square of each error joint over the overlap, rad. */
  readonly rmsErrorRad: readonly (number | null)[];
}

/** One layout of a stored set, for the 3D view. */
export interface LayoutView {
  readonly layoutSet: string;
  readonly task: string;
  readonly layout: Layout;
}
