/**
 * What goes into the store and what comes back out. Plain data, no behaviour.
 * Timestamps are ISO 8601 UTC strings; callers may pass their own (a session's clock), else "now".
 */
import type { ObjectEndState } from '../tasks/types.js';
import type { TaskEvent } from '../tasks/task-events.js';
import type { EpisodeOutcome } from '../rollout/episode.js';

export type RolloutKind = 'sim' | 'real';
export type RolloutStatus = 'valid' | 'invalid' | 'aborted';
/** Why a rollout ended: one row of the outcome table (src/rollout/episode.ts EPISODE_OUTCOMES, docs/rig-model.md). */
export type RolloutOutcome = EpisodeOutcome;
/** What a session is: an operator's real evaluation, a sim sweep, a blind A/B, a teleop recording. */
export type SessionKind = 'real-eval' | 'sim-sweep' | 'ab-test' | 'teleop-recording';

/** Raw counts beside a progress ratio, e.g. { inBin: 3, target: 4 }. */
export type Counts = Readonly<Record<string, number>>;

export interface LayoutSetInput {
  /** The set's id: hex SHA-256 of `canonicalJson`. The store recomputes it and refuses a mismatch. */
  readonly sha256: string;
  /**
   * RFC 8785 canonical JSON of the layout set *without* its `sha256` field, i.e. exactly the
   * bytes the hash was taken over. Must hold `task`, `version`, `seed` and `layouts[]` (each with `tier`).
   */
  readonly canonicalJson: string;
  readonly importedAt?: string;
}

export interface LayoutSetRecord {
  readonly sha256: string;
  readonly task: string;
  readonly version: number;
  readonly seed: number;
  readonly layoutCount: number;
  readonly canonicalJson: string;
  readonly importedAt: string;
}

export interface PolicyInput {
  /** How to load it, e.g. "onnx:models/act.onnx", "remote:ws://gpu-box:8000", "code:bottles-scripted". */
  readonly spec: string;
  /** What people call it in reports. */
  readonly name: string;
  /** SHA-256 of the weights, when there are weights. */
  readonly checkpointSha256?: string | null;
}

export interface PolicyRecord {
  readonly id: number;
  readonly spec: string;
  readonly name: string;
  readonly checkpointSha256: string | null;
  readonly createdAt: string;
}

export interface SessionInput {
  readonly kind: SessionKind;
  readonly operator?: string | null;
  readonly notes?: string | null;
  readonly startedAt?: string;
}

export interface SessionRecord {
  readonly id: number;
  readonly kind: SessionKind;
  readonly startedAt: string;
  readonly endedAt: string | null;
  readonly operator: string | null;
  readonly notes: string | null;
}

export interface RolloutInput {
  readonly kind: RolloutKind;
  readonly policyId: number;
  readonly layoutSetSha256: string;
  readonly layoutIndex: number;
  /** Optional: the store reads the tier from the layout set; when given, it must agree. */
  readonly tier?: number;
  readonly sessionId?: number | null;
  /** The sim seed (or the real session's draw seed); null when none applies. */
  readonly seed?: number | null;
  /** Which repeat of this layout (sim repeats each layout many times). Default 0. */
  readonly repeatIndex?: number;
  readonly episodeSeconds: number;
  readonly controlHz: number;
  readonly status: RolloutStatus;
  /** Why it ended; must agree with the status (a 'policy-error' rollout is valid). */
  readonly outcome?: RolloutOutcome | null;
  /** Why a rollout is invalid or aborted, in the operator's words. */
  readonly statusReason?: string | null;
  /** The policy's own error that ended a valid rollout early (outcome 'policy-error'); the rollout is still scored. */
  readonly policyError?: string | null;
  /** Task progress in [0, 1] when the rollout scored itself (sim); real rollouts get operator scores. */
  readonly progress?: number | null;
  readonly counts?: Counts | null;
  readonly finalStateHash?: string | null;
  /** Calibrations this rollout ran with; each must already be in the store (putCalibration). */
  readonly calibrationSha256s?: readonly string[];
  readonly startedAt?: string;
  readonly durationS?: number | null;
  /** Path of the episode's MCAP file, relative to the data directory where possible. */
  readonly episodeFile?: string | null;
  /** The sweep this rollout belongs to (insertSweepRollout): each (sweep, layout, repeat) is stored once. */
  readonly sweepId?: string | null;
  /** What happened to each object while it ran (the sim's scene, the emulated cell's table), stored in the same transaction. */
  readonly taskEvents?: readonly TaskEvent[];
  /** A rehearsal, not a result (black camera frames, the emulated cell): reports leave it out unless asked. */
  readonly rehearsal?: boolean;
  /** The stretches the operator drove with the leader (src/rollout/operator-takeover.ts): an assisted rollout. */
  readonly takeovers?: readonly TakeoverRecord[];
}

/** One stretch of a rollout the operator drove, in episode seconds; open: the episode ended with the operator still driving. */
export interface TakeoverRecord {
  readonly startS: number;
  readonly endS: number;
  readonly open: boolean;
}

export interface SweepInput {
  /** The sweep's id, also what its queued jobs carry. */
  readonly id: string;
  readonly sessionId: number;
  /** SHA-256 of what was asked (layout set, policy, repeats, length, calibration): a rerun of the same request finds it. */
  readonly requestSha256: string;
  /** The queue's address without its password; null for an in-process sweep. */
  readonly queue: string | null;
  /** Rollouts the sweep asks for (layouts × repeats). */
  readonly total: number;
}

export interface SweepRecord extends SweepInput {
  readonly createdAt: string;
}

export interface OperatorScoreRecord {
  readonly id: number;
  readonly rolloutId: number;
  readonly enteredAt: string;
  readonly endStates: readonly ObjectEndState[];
  readonly progress: number;
  readonly counts: Counts;
  readonly operator: string | null;
  readonly note: string | null;
}

export interface RolloutRecord {
  readonly id: number;
  readonly sessionId: number | null;
  readonly kind: RolloutKind;
  readonly policyId: number;
  readonly layoutSetSha256: string;
  readonly layoutIndex: number;
  readonly tier: number;
  readonly seed: number | null;
  readonly repeatIndex: number;
  readonly episodeSeconds: number;
  readonly controlHz: number;
  readonly status: RolloutStatus;
  /** Null for invalid or aborted rollouts stored before schema version 2 (their reason says why). */
  readonly outcome: RolloutOutcome | null;
  readonly statusReason: string | null;
  readonly policyError: string | null;
  readonly progress: number | null;
  readonly counts: Counts | null;
  readonly finalStateHash: string | null;
  readonly calibrationSha256s: readonly string[];
  readonly startedAt: string;
  readonly durationS: number | null;
  readonly episodeFile: string | null;
  /** The sweep it belongs to, when it was stored as one (insertSweepRollout). */
  readonly sweepId: string | null;
  /** The operator's latest score for this rollout (corrections supersede earlier rows), if any. */
  readonly latestScore: OperatorScoreRecord | null;
  /** The latest operator score's progress where there is one, else the rollout's own progress. */
  readonly effectiveProgress: number | null;
  /** A rehearsal, not a result (black camera frames, the emulated cell). */
  readonly rehearsal: boolean;
}

export interface RolloutFilter {
  readonly kind?: RolloutKind;
  readonly policyId?: number;
  readonly layoutSetSha256?: string;
  readonly sessionId?: number;
  readonly status?: RolloutStatus;
  readonly tier?: number;
  /** true: rehearsals only; false: results only; absent: both. */
  readonly rehearsal?: boolean;
}

/** One layout's rollouts for one policy and kind, aggregated in SQL (for reports over large sweeps). */
export interface LayoutOutcomeRow {
  readonly policyId: number;
  readonly kind: RolloutKind;
  readonly layoutSetSha256: string;
  readonly layoutIndex: number;
  readonly tier: number;
  /** Valid rollouts with a progress (the rollout's own, or its operator's latest score). */
  readonly scored: number;
  /** Sum of their progress. */
  readonly progressSum: number;
  /** Of them, those with progress = 1. */
  readonly fullSuccesses: number;
  /** Valid rollouts with no progress yet (real rollouts waiting for a score). */
  readonly unscored: number;
  /** Of the valid rollouts, those the policy's own error ended early (scored as they stood). */
  readonly policyErrors: number;
  /** Invalid rollouts (the station failed: rig, sim, cameras, scoring); never scored. */
  readonly invalid: number;
  /** Aborted rollouts (policy outage, operator stop); never scored. */
  readonly aborted: number;
  /** Invalid or aborted rollouts (invalid + aborted). */
  readonly excluded: number;
}

/** How many rollouts ended each way, per policy and kind (for the breakdown under a report). */
export interface OutcomeCountRow {
  readonly policyId: number;
  readonly kind: RolloutKind;
  readonly status: RolloutStatus;
  /** Null for rows stored before outcomes were (schema version 1). */
  readonly outcome: RolloutOutcome | null;
  readonly rollouts: number;
}

export interface OperatorScoreInput {
  readonly rolloutId: number;
  readonly endStates: readonly ObjectEndState[];
  readonly progress: number;
  readonly counts: Counts;
  readonly operator?: string | null;
  readonly note?: string | null;
  readonly enteredAt?: string;
}

export interface CalibrationInput {
  /** Hex SHA-256 of `canonicalJson`; recomputed and checked. */
  readonly sha256: string;
  /** e.g. "projector-homography", "camera-intrinsics", "sim-parameters". */
  readonly kind: string;
  readonly version: number;
  readonly canonicalJson: string;
  readonly createdAt?: string;
}

export interface CalibrationRecord {
  readonly sha256: string;
  readonly kind: string;
  readonly version: number;
  readonly canonicalJson: string;
  readonly createdAt: string;
}

// ---- recordings (episode files) ----

export type RecordingKind = 'rollout' | 'teleop';
/** recording: open (or cut off by a crash, when nothing records); failed: a write failed (disk full); recovered: its prefix was rewritten. */
export type RecordingState = 'recording' | 'finished' | 'failed' | 'recovered';

export interface RecordingRecord {
  readonly id: number;
  readonly file: string;
  readonly kind: RecordingKind;
  readonly state: RecordingState;
  readonly startedAt: string;
  readonly finishedAt: string | null;
  readonly rolloutId: number | null;
  readonly bytes: number | null;
  readonly messages: number | null;
  readonly durationS: number | null;
  /** Why it is not finished, in words. */
  readonly problem: string | null;
  readonly recoveredFile: string | null;
}

export interface RecordingEnd {
  readonly state: Exclude<RecordingState, 'recording'>;
  readonly bytes?: number;
  readonly messages?: number;
  readonly durationS?: number;
  readonly problem?: string | null;
  readonly recoveredFile?: string | null;
}

/** A session's plan as stored: the plan file's JSON and its hash. */
export interface SessionPlanRecord {
  readonly sessionId: number;
  readonly planSha256: string;
  readonly layoutSetSha256: string;
  readonly planJson: string;
  readonly createdAt: string;
}

/** One operator or engine action in a session's journal. */
export interface SessionJournalInput {
  readonly sessionId: number;
  /** The planned rollout it is about (absent for session-wide actions: pause, break, end). */
  readonly slot?: number | null;
  /** Which try of the slot (a redo is the next attempt). */
  readonly attempt?: number | null;
  readonly action: string;
  readonly at?: string;
  /** Operator seconds the action took (placing, scoring, resetting). */
  readonly operatorS?: number | null;
  readonly rolloutId?: number | null;
  readonly detail?: Readonly<Record<string, unknown>>;
}

export interface SessionJournalRecord {
  readonly id: number;
  readonly sessionId: number;
  readonly slot: number | null;
  readonly attempt: number | null;
  readonly action: string;
  readonly at: string;
  readonly operatorS: number | null;
  readonly rolloutId: number | null;
  readonly scoreId: number | null;
  readonly detail: Readonly<Record<string, unknown>>;
}

export type TeleopSessionState = 'recording' | 'stopped' | 'finished';

export interface TeleopSessionInput {
  readonly task: string;
  readonly prompt: string;
  /** What led, e.g. 'emulated-yam' or 'gello:/dev/ttyUSB0'. */
  readonly leader: string;
  readonly follower: string;
  readonly cameras: string;
  readonly episodes: number;
  readonly episodeSeconds: number;
  readonly resetSeconds: number;
  readonly outDir: string;
  readonly layoutSetSha256?: string | null;
  readonly layoutIndex?: number | null;
  readonly operator?: string | null;
}

export interface TeleopSessionRecord extends Required<Omit<TeleopSessionInput, 'operator'>> {
  readonly sessionId: number;
  readonly startedAt: string;
  readonly endedAt: string | null;
  readonly state: TeleopSessionState;
  readonly problem: string | null;
}

export type TeleopTakeState = 'recording' | 'kept' | 'discarded';

export interface TeleopTakeRecord {
  readonly id: number;
  readonly sessionId: number;
  readonly episodeIndex: number;
  readonly recordingId: number;
  readonly file: string;
  readonly state: TeleopTakeState;
  readonly marks: readonly string[];
  readonly discardReason: string | null;
  readonly startedAt: string;
  readonly endedAt: string | null;
}
