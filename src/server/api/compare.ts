/**
 * The Compare view: real vs sim for a list of policies on one layout set — the paired report and
 * the per-layout table. Pure (no Node built-ins): the server and the operator UI share it;
 * src/server/api-types.ts gathers every feature.
 */
import type { CrossEngineReport } from '../../analysis/cross-engine.js';
import type { PairedReport } from '../../analysis/paired-report.js';
import type { SimDrift } from '../../analysis/sim-drift.js';
import type { RolloutOperatorTime } from '../../session/operator-time.js';

/** What the station's store adds to the paired report (src/server/report-data.ts; `tandem report --json` prints it all). */
export interface StoredReportExtras {
  /** Rollouts of these policies on other layout sets, per set: counted and left out. */
  readonly otherLayoutSets: Record<string, number>;
  /** Rehearsals on this layout set (black camera frames, the emulated cell): counted and left out unless asked. */
  readonly rehearsalsLeftOut: number;
  /** Each real rollout's operator seconds as its session journal has them (place, supervise, score, reset). */
  readonly operatorTime: readonly RolloutOperatorTime[];
  /** The sim twin's agreement with the rig on this layout set, evaluation after evaluation, over every policy on it, and the alarm. */
  readonly simDrift: SimDrift;
  /** The same policies swept on both physics engines: their agreement (null: no other engine ran, or, with the reason, cannot be paired). */
  readonly crossEngine: StoredCrossEngine | null;
  readonly crossEngineUnavailable?: string;
}

/** The engines' agreement as stored: the analysis, and whether the two records differ only in their engine. */
export type StoredCrossEngine = CrossEngineReport & {
  /** True when the two records differ only in their engine (one is the other's `withEngine`); false when the other engine's only record differs in more. */
  readonly sameRecordOtherwise: boolean;
};

/** What the compare endpoint adds to the stored report. */
export interface CompareReportExtras {
  readonly realOnEmulatedCell: boolean;
  /** The tier of every layout of the set, by index (layouts without rollouts too). */
  readonly layoutTiers: readonly number[];
}

/**
 * GET /api/compare/report: the paired report's data for a policy list on a layout set — exactly
 * `tandem report --json`'s — plus whether its real side is the emulated cell.
 */
export type CompareReport = PairedReport & StoredReportExtras & CompareReportExtras;

/** A policy and a layout set that have stored rollouts, for the compare view's picker. */
export interface CompareChoice {
  readonly policy: { readonly id: number; readonly name: string; readonly spec: string };
  readonly layoutSet: string;
  readonly task: string | null;
  readonly realRollouts: number;
  readonly simRollouts: number;
}

/** One side (real or sim) of one layout. */
export interface CompareSide {
  /** Every stored rollout of this policy on this layout, on this side. */
  readonly rollouts: number;
  /** The ones that count: valid and scored. */
  readonly counted: number;
  /** Mean task progress over the counted ones; null when none counts. */
  readonly meanProgress: number | null;
  /** Invalid, aborted, or awaiting a score: listed, never averaged. */
  readonly notCounted: number;
}

export interface CompareLayoutRow {
  readonly layout: number;
  readonly tier: number;
  readonly real: CompareSide;
  readonly sim: CompareSide;
  /** Real minus sim mean progress, where both have counted rollouts. */
  readonly gap: number | null;
}

/** One side of one tier (or 'all'): mean over layouts with a 95% layout-bootstrap interval (src/analysis tier-summary). */
export interface CompareTierSide {
  readonly layouts: number;
  readonly rollouts: number;
  readonly meanProgress: number;
  readonly lower: number;
  readonly upper: number;
}

export interface CompareTierRow {
  readonly tier: number | 'all';
  readonly real: CompareTierSide | null;
  readonly sim: CompareTierSide | null;
}

export interface CompareView {
  readonly policy: { readonly id: number; readonly name: string; readonly spec: string };
  readonly layoutSet: { readonly sha256: string; readonly task: string; readonly layoutCount: number };
  /** Every layout of the set, in index order, with or without rollouts. */
  readonly layouts: readonly CompareLayoutRow[];
  readonly tiers: readonly CompareTierRow[];
  /** True when the real side ran on the emulated cell: a rehearsal, not a result. */
  readonly realOnEmulatedCell: boolean;
}
