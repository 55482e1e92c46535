/**
 * The shape of the paired sim/real report (paired-report.ts computes it): what it reads of each
 * rollout and policy, and every table it holds, each row carrying the rollout ids behind it.
 */
import type { PreregisteredAnalysisSummary } from './anytime-ab.js';
import type { Layout, ObjectEndState, TaskDefinition } from '../tasks/types.js';
import type { FailurePattern } from '../tasks/failure-patterns.js';
import type { PlacementCovariate, RolloutPlacement } from './placement-covariate.js';
import type { ThroughputSummary } from './object-times.js';
import type { TaskEvent } from '../tasks/task-events.js';
import type { TierSummary } from './tier-summary.js';
import type { ControlVariateEstimate } from './control-variate.js';
import type { SequentialVerdict } from './sequential.js';
import type { CostConfig, PolicyCost } from './cost.js';
import type { PolicyPair } from './correlation.js';

/** What the report needs of one stored rollout. */
export interface ReportRollout {
  readonly id: number;
  readonly kind: 'sim' | 'real';
  /** Which policy (the report's key for its spec + checkpoint). */
  readonly policy: string;
  readonly layoutIndex: number;
  readonly tier: number;
  readonly status: 'valid' | 'invalid' | 'aborted';
  /** Why it ended (EPISODE_OUTCOMES code), null when not recorded. */
  readonly outcome: string | null;
  readonly statusReason?: string | null;
  /** The operator's latest score, or the sim's own; null when a valid real rollout awaits its score. */
  readonly progress: number | null;
  /** The calibration this side ran with: the sim calibration hash for sim, the real side's calibration set for real ('' for none). */
  readonly calibration: string;
  readonly durationS: number | null;
  /** The episode length it was run for (not how long it took): a 60 s sweep and 12 s real rollouts measure different tasks. */
  readonly episodeSeconds: number;
  /** Operator time spent on this rollout (placing, resetting, scoring), when a session recorded it. */
  readonly operatorSeconds?: number | null;
  /** Real: the latest score's end states. */
  readonly endStates?: readonly ObjectEndState[] | null;
  /** Sim: the stored counts (with per-object outcome counts since they are kept). */
  readonly counts?: Readonly<Record<string, number>> | null;
  /** What happened to each object during the episode (empty or absent when nothing watched the table). */
  readonly taskEvents?: readonly TaskEvent[] | null;
  /** A session rollout's "object done" marks (episode seconds), the operator's keypress while the rig ran it. */
  readonly doneMarks?: readonly { readonly tS: number; readonly objectId?: string }[] | null;
  /** A session rollout's placement check before start (src/session/placement-gate.ts). */
  readonly placement?: RolloutPlacement | null;
  /** Times the operator took over with the leader arm (an assisted rollout); absent or null: none recorded. */
  readonly assists?: number | null;
  readonly startedAt?: string;
}

export interface ReportPolicy {
  readonly key: string;
  /** What people call it in the report (name, or name #id when two share a name). */
  readonly label: string;
  readonly spec: string;
  readonly checkpointSha256: string | null;
}

export interface ReportInput {
  readonly task: TaskDefinition;
  readonly layoutSet: { readonly sha256: string; readonly layouts: readonly Layout[] };
  readonly policies: readonly ReportPolicy[];
  readonly rollouts: readonly ReportRollout[];
  /** Use only sim rollouts run with this calibration (required when several are present). */
  readonly simCalibration?: string;
  /** Use only real rollouts with this calibration set (required when several are present). */
  readonly realCalibration?: string;
  /** Use only rollouts run for this episode length (required when several are present). */
  readonly episodeSeconds?: number;
  readonly cost?: Partial<CostConfig>;
  readonly seed?: number;
  readonly resamples?: number;
}

/**
 * What a comparison can be narrowed to: every sim calibration, real calibration set and episode
 * length among the valid rollouts of these policies, with how many rollouts each has. The report
 * carries it, and so does a refusal of a mix, so the compare view can offer the choice.
 */
export interface ReportChoices {
  readonly simCalibrations: readonly { readonly value: string; readonly rollouts: number }[];
  readonly realCalibrations: readonly { readonly value: string; readonly rollouts: number }[];
  readonly episodeSeconds: readonly { readonly value: number; readonly sim: number; readonly real: number }[];
}

/** A report that cannot be made as asked: one sentence an operator can act on (and, for a mix, what to pick from). */
export class ReportInputError extends Error {
  constructor(
    message: string,
    readonly choices?: ReportChoices,
  ) {
    super(message);
    this.name = 'ReportInputError';
  }
}

export interface LayoutPair {
  readonly layoutIndex: number;
  readonly tier: number;
  readonly sim: number | null;
  readonly simRolloutIds: readonly number[];
  readonly real: number | null;
  readonly realRolloutIds: readonly number[];
  /** This policy's rollouts on this layout that are not counted, and why (awaiting a score, invalid or aborted, another calibration). */
  readonly notCounted: readonly { readonly id: number; readonly kind: 'sim' | 'real'; readonly why: string }[];
}

export interface SideSummary {
  /** Per tier and 'all'; layouts restricted as the field says. */
  readonly tiers: readonly TierSummary[];
  readonly rolloutIds: readonly number[];
}

export interface PolicyReport {
  readonly key: string;
  readonly label: string;
  readonly spec: string;
  readonly checkpointSha256: string | null;
  /** Per layout: sim (repeats averaged) and real (rollouts averaged). */
  readonly layouts: readonly LayoutPair[];
  readonly pairedLayouts: number;
  /** Real and sim on the paired layouts only: the numbers that are compared. */
  readonly real: SideSummary | null;
  readonly sim: SideSummary | null;
  /** Sim on every layout it ran (what the control variate's second mean uses). */
  readonly simAllLayouts: SideSummary | null;
  readonly controlVariate: ControlVariateEstimate | null;
  readonly controlVariateUnavailable?: string;
  readonly cost: PolicyCost;
  /** Units per hour, mean time between failures and time to success per object, over every scored rollout of the comparison. */
  readonly throughput: { readonly sim: ThroughputSummary | null; readonly real: ThroughputSummary | null };
  /** The placement check's errors before its real rollouts, as a covariate of their progress (null: none was checked or marked unchecked). */
  readonly placement: PlacementCovariate | null;
}

export interface RankViolation {
  readonly policy: string;
  readonly against: string;
  readonly sim: number;
  readonly againstSim: number;
  readonly real: number;
  readonly againstReal: number;
  /** |real − againstReal|: what MMRV counts. */
  readonly size: number;
  /** True when it is the largest for `policy` (the one MMRV averages). */
  readonly drivesMmrv: boolean;
}

export interface CorrelationReport {
  readonly policies: number;
  readonly pairs: readonly (PolicyPair & { readonly layouts: number })[];
  readonly pearson: {
    readonly r: number | null;
    readonly undefinedBecause?: string;
    readonly lower: number | null;
    readonly upper: number | null;
  };
  readonly mmrv: { readonly value: number; readonly lower: number; readonly upper: number };
  readonly violations: readonly RankViolation[];
  readonly bootstrap: {
    readonly resamples: number;
    readonly used: number;
    readonly seed: number;
    readonly unit: 'layout';
  };
}

export interface FailureCell {
  /** Objects of this kind, in this tier and side, that failed this way. */
  readonly objects: number;
  /** Objects of this kind, tier and side there were to do (the share's denominator). */
  readonly of: number;
  readonly share: number;
  readonly rolloutIds: readonly number[];
  /** Of `objects`, how many were classified from the end state alone (their rollout had no usable task events). */
  readonly fromEndState: number;
}

export interface FailureRow {
  readonly tier: number;
  readonly kind: string;
  readonly pattern: FailurePattern;
  readonly sim: FailureCell;
  readonly real: FailureCell;
}

/** A rollout whose objects were classified from its end state, and why not from its events. */
export interface EndStateFallback {
  readonly id: number;
  readonly kind: 'sim' | 'real';
  readonly why: string;
}

export interface OutOfTimeRow {
  readonly tier: number;
  readonly sim: { readonly rollouts: number; readonly of: number; readonly rolloutIds: readonly number[] };
  readonly real: { readonly rollouts: number; readonly of: number; readonly rolloutIds: readonly number[] };
}

export interface AbComparison {
  readonly a: string;
  readonly b: string;
  /** Real rollouts of both on the same layouts, in the order B's rollout finished. */
  readonly pairs: number;
  readonly verdict: SequentialVerdict;
  readonly rolloutIds: readonly (readonly [number, number])[];
}

export interface SegregatedRollouts {
  readonly awaitingScore: readonly number[];
  readonly invalidOrAborted: readonly {
    readonly id: number;
    readonly kind: 'sim' | 'real';
    readonly policy: string;
    readonly status: string;
    readonly reason: string;
  }[];
  readonly otherCalibration: readonly {
    readonly id: number;
    readonly kind: 'sim' | 'real';
    readonly calibration: string;
  }[];
  /** Valid rollouts run for another episode length than the comparison's: never pooled. */
  readonly otherEpisodeLength: readonly {
    readonly id: number;
    readonly kind: 'sim' | 'real';
    readonly episodeSeconds: number;
  }[];
  /** Which were left out for their episode length and why, in one sentence; null when none was. */
  readonly otherEpisodeLengthSentence: string | null;
  readonly unpairedPolicies: readonly { readonly policy: string; readonly reason: string }[];
  /** Sim rollouts stored before per-object outcome counts and task events were kept: not in the failure breakdown. */
  readonly simWithoutObjectCounts: readonly number[];
}

export interface PairedReport {
  readonly task: string;
  readonly layoutSet: string;
  readonly simCalibration: string | null;
  readonly realCalibration: string | null;
  /** The one episode length compared (null when there is no valid rollout). */
  readonly episodeSeconds: number | null;
  /** What else is stored for these policies on this set: calibrations and episode lengths to pick from. */
  readonly choices: ReportChoices;
  readonly seed: number;
  readonly policies: readonly PolicyReport[];
  readonly correlation: CorrelationReport | null;
  readonly correlationUnavailable?: string;
  readonly abComparisons: readonly AbComparison[];
  readonly failures: {
    readonly rows: readonly FailureRow[];
    readonly outOfTime: readonly OutOfTimeRow[];
    readonly fromEndState: readonly EndStateFallback[];
    readonly notes: readonly string[];
  };
  readonly cost: { readonly config: CostConfig; readonly curve: readonly CostCurvePoint[] };
  readonly segregated: SegregatedRollouts;
  /** A session's pre-registered A/B analysis, when the report was asked for one (tandem report --session). */
  readonly preregistered?: PreregisteredAnalysisSummary;
}

export interface CostCurvePoint {
  readonly policy: string;
  /** Cumulative cost through this policy (in the order given), each regime. */
  readonly realOnlyCost: number;
  readonly simEnabledCost: number;
  /** Real progress: real-only mean, and the sim-enabled (control-variate) estimate. */
  readonly realOnlyProgress: number;
  readonly simEnabledProgress: number;
}
