/**
 * The paired report's data from the station store: the policies a list names, their rollouts on
 * one layout set in the report's terms (with task events and the session journals' operator
 * seconds), through `buildPairedReport`. One place, so `tandem report --json` and the station
 * API's compare endpoint give the same numbers for the same store.
 */
import { getTask } from '../tasks/registry.js';
import {
  buildPairedReport,
  ReportInputError,
  type PairedReport,
  type ReportPolicy,
  type ReportRollout,
} from '../analysis/paired-report.js';
import type { CostConfig } from '../analysis/cost.js';
import { SIM_CALIBRATION_KIND } from '../sim/calibration.js';
import { RANDOMIZATION_KIND } from '../sim/randomization.js';
import { operatorTimeByRollout, type RolloutOperatorTime } from '../session/operator-time.js';
import { doneMarksByRollout, type DoneMarkRecord } from '../session/done-marks.js';
import { placementByRollout } from '../session/placement-gate.js';
import type { LayoutSet } from '../layouts/layout-set.js';
import type { Store } from '../store/store.js';
import type { StoredReportExtras } from './api/compare.js';
import {
  DEFAULT_DRIFT_THRESHOLDS,
  simDrift,
  type DriftRollout,
  type DriftThresholds,
  type SimDrift,
} from '../analysis/sim-drift.js';
import { preregisteredAnalysis, PreregistrationError, type AskedAnalysis } from '../session/analysis-report.js';
import { defaultSimCalibration, simEnginesOf, storedCrossEngine } from './cross-engine-data.js';

export interface StoredReportOptions {
  /** Policy specs as stored (`code:…`, `onnx:…`, `ws://…`) or store ids, in iteration order. */
  readonly policies: readonly string[];
  readonly layoutSet: LayoutSet;
  readonly simCalibration?: string;
  readonly realCalibration?: string;
  /** Compare rollouts of this episode length only (needed when several are stored). */
  readonly episodeSeconds?: number;
  readonly cost?: Partial<CostConfig>;
  readonly seed?: number;
  /** Count rehearsals (black camera frames, the emulated cell) as results too. Default: left out. */
  readonly includeRehearsals?: boolean;
  /** A session's pre-registered analysis to show, and the metric and α the report was asked for (refused if not the plan's). */
  readonly preregistered?: AskedAnalysis;
  /** The drift alarm's thresholds (defaults: DEFAULT_DRIFT_THRESHOLDS). */
  readonly driftThresholds?: Partial<DriftThresholds>;
}

export type StoredReport = PairedReport & StoredReportExtras;

/** The policies a list names: each spec's rows in the store (one per checkpoint). */
export function resolveReportPolicies(store: Store, specs: readonly string[]): ReportPolicy[] {
  const all = store.listPolicies();
  const out: ReportPolicy[] = [];
  for (const spec of specs) {
    const rows = all.filter((p) => p.spec === spec || String(p.id) === spec);
    if (rows.length === 0)
      throw new ReportInputError(
        `There is no policy '${spec}' in the store ${store.file}; known specs: ${[...new Set(all.map((p) => p.spec))].join(', ') || 'none yet'}.`,
      );
    for (const p of rows) {
      if (out.some((q) => q.key === String(p.id)))
        throw new ReportInputError(`Policy '${spec}' is named twice in the policy list (--policies).`);
      const sameName = all.filter((q) => q.name === p.name).length > 1;
      out.push({
        key: String(p.id),
        label: sameName ? `${p.name} #${p.id}` : p.name,
        spec: p.spec,
        checkpointSha256: p.checkpointSha256,
      });
    }
  }
  return out;
}

/** Every rollout of these policies on this layout set, in the report's terms. */
function reportRollouts(
  store: Store,
  policies: readonly ReportPolicy[],
  layoutSet: string,
  includeRehearsals: boolean,
): {
  rollouts: ReportRollout[];
  otherLayoutSets: Record<string, number>;
  operatorTime: RolloutOperatorTime[];
  rehearsalsLeftOut: number;
} {
  const kindOf = new Map<string, string>();
  const calibrationKind = (sha: string): string => {
    let k = kindOf.get(sha);
    if (k === undefined) kindOf.set(sha, (k = store.getCalibration(sha)?.kind ?? 'unknown'));
    return k;
  };
  const rollouts: ReportRollout[] = [];
  const otherLayoutSets: Record<string, number> = {};
  // A real rollout run in an evaluation session: its operator seconds are in that session's journal.
  const journals = new Map<number, Map<number, RolloutOperatorTime>>();
  const operatorTime: RolloutOperatorTime[] = [];
  let rehearsalsLeftOut = 0;
  const marksBySession = new Map<number, Map<number, DoneMarkRecord[]>>();
  const placementBySession = new Map<number, ReturnType<typeof placementByRollout>>();
  const journalled = (sessionId: number, rolloutId: number): RolloutOperatorTime | undefined => {
    let m = journals.get(sessionId);
    if (!m) {
      const journal = store.listSessionJournal(sessionId);
      journals.set(sessionId, (m = operatorTimeByRollout(journal)));
      marksBySession.set(sessionId, doneMarksByRollout(journal));
      placementBySession.set(sessionId, placementByRollout(journal));
    }
    return m.get(rolloutId);
  };
  for (const p of policies) {
    for (const r of store.listRollouts({ policyId: Number(p.key) })) {
      if (r.layoutSetSha256 !== layoutSet) {
        otherLayoutSets[r.layoutSetSha256] = (otherLayoutSets[r.layoutSetSha256] ?? 0) + 1;
        continue;
      }
      if (r.rehearsal && !includeRehearsals) {
        rehearsalsLeftOut += 1;
        continue;
      }
      const op = r.kind === 'real' && r.sessionId !== null ? journalled(r.sessionId, r.id) : undefined;
      if (op) operatorTime.push(op);
      // Sim pairs by its sim calibration; the real side by every calibration it ran with. A
      // randomized sweep's rollouts each ran their own drawn record (stored with each): they are
      // one condition, named by the spec they were drawn from.
      const spec =
        r.kind === 'sim' ? r.calibrationSha256s.find((c) => calibrationKind(c) === RANDOMIZATION_KIND) : undefined;
      const calibration =
        r.kind === 'sim'
          ? (spec ?? r.calibrationSha256s.filter((c) => calibrationKind(c) === SIM_CALIBRATION_KIND).join(','))
          : r.calibrationSha256s.join(',');
      rollouts.push({
        id: r.id,
        kind: r.kind,
        policy: p.key,
        layoutIndex: r.layoutIndex,
        tier: r.tier,
        status: r.status,
        outcome: r.outcome,
        statusReason: r.statusReason,
        progress: r.status === 'valid' ? r.effectiveProgress : null,
        calibration,
        durationS: r.durationS,
        episodeSeconds: r.episodeSeconds,
        operatorSeconds: op ? op.totalS : null,
        endStates: r.latestScore?.endStates ?? null,
        counts: r.counts,
        taskEvents: store.listTaskEvents(r.id),
        doneMarks:
          r.kind === 'real' && r.sessionId !== null ? (marksBySession.get(r.sessionId)?.get(r.id) ?? null) : null,
        placement:
          r.kind === 'real' && r.sessionId !== null ? (placementBySession.get(r.sessionId)?.get(r.id) ?? null) : null,
        assists: r.kind === 'real' ? store.listTakeovers(r.id).length : null,
        startedAt: r.startedAt,
      });
    }
  }
  return { rollouts, otherLayoutSets, operatorTime, rehearsalsLeftOut };
}

/** The calibration a rollout's side pairs by: a sim rollout's sim calibration (a randomized sweep: its spec), the real side's whole set. */
function calibrationOf(
  store: Store,
  kindOf: Map<string, string>,
  r: { readonly kind: 'sim' | 'real'; readonly calibrationSha256s: readonly string[] },
): string {
  const calibrationKind = (sha: string): string => {
    let k = kindOf.get(sha);
    if (k === undefined) kindOf.set(sha, (k = store.getCalibration(sha)?.kind ?? 'unknown'));
    return k;
  };
  if (r.kind === 'real') return r.calibrationSha256s.join(',');
  return (
    r.calibrationSha256s.find((c) => calibrationKind(c) === RANDOMIZATION_KIND) ??
    r.calibrationSha256s.filter((c) => calibrationKind(c) === SIM_CALIBRATION_KIND).join(',')
  );
}

export interface StoredDriftOptions {
  readonly thresholds?: Partial<DriftThresholds>;
  /** Track against this sim calibration; default the one the newest sim rollout on the set ran with. */
  readonly simCalibration?: string;
  /** Count rehearsals (black camera frames, the emulated cell) too. Default: left out, as in the report. */
  readonly includeRehearsals?: boolean;
  /** Policies whose rollouts are left out (a blind session still running must not show its results). */
  readonly excludePolicyIds?: ReadonlySet<number>;
}

/** The sim-twin drift of one layout set, over every policy with valid scored rollouts on it. */
export function storedSimDrift(store: Store, layoutSetSha256: string, o: StoredDriftOptions = {}): SimDrift {
  const kindOf = new Map<string, string>();
  const policies = store.listPolicies();
  const label = (id: number): string => {
    const p = policies.find((x) => x.id === id);
    if (!p) return String(id);
    return policies.filter((q) => q.name === p.name).length > 1 ? `${p.name} #${p.id}` : p.name;
  };
  const rows: DriftRollout[] = [];
  for (const r of store.listRollouts({ layoutSetSha256 })) {
    if (r.status !== 'valid' || r.effectiveProgress === null) continue;
    if (r.rehearsal && !o.includeRehearsals) continue;
    if (o.excludePolicyIds?.has(r.policyId)) continue;
    rows.push({
      id: r.id,
      kind: r.kind,
      policy: String(r.policyId),
      label: label(r.policyId),
      layoutIndex: r.layoutIndex,
      episodeSeconds: r.episodeSeconds,
      progress: r.effectiveProgress,
      calibration: calibrationOf(store, kindOf, r),
      sessionId: r.sessionId,
      startedAt: r.startedAt,
    });
  }
  return simDrift(rows, {
    ...(o.thresholds ? { thresholds: o.thresholds } : {}),
    ...(o.simCalibration ? { simCalibration: o.simCalibration } : {}),
  });
}

/** The drift of every layout set with real rollouts: what the Rig page shows (GET /api/rig/sim-drift). */
export interface StationSimDrift {
  readonly thresholds: DriftThresholds;
  readonly layoutSets: readonly { readonly layoutSet: string; readonly task: string; readonly drift: SimDrift }[];
  /** The alarms' sentences, one per layout set whose sim no longer agrees with the rig. */
  readonly alarms: readonly {
    readonly layoutSet: string;
    readonly task: string;
    readonly sentence: string;
    readonly since: string;
  }[];
}

export function stationSimDrift(store: Store, o: Omit<StoredDriftOptions, 'simCalibration'> = {}): StationSimDrift {
  const layoutSets = store
    .listLayoutSets()
    .filter((ls) => store.listRollouts({ layoutSetSha256: ls.sha256, kind: 'real' }).length > 0)
    .map((ls) => ({ layoutSet: ls.sha256, task: ls.task, drift: storedSimDrift(store, ls.sha256, o) }));
  return {
    thresholds: { ...DEFAULT_DRIFT_THRESHOLDS, ...o.thresholds },
    layoutSets,
    alarms: layoutSets.flatMap((l) =>
      l.drift.alarm
        ? [{ layoutSet: l.layoutSet, task: l.task, sentence: l.drift.alarm.sentence, since: l.drift.alarm.sinceAt }]
        : [],
    ),
  };
}

/** The report of these policies on this layout set; ReportInputError (one sentence) when it cannot be made as asked. */
export function storedPairedReport(store: Store, o: StoredReportOptions): StoredReport {
  if (o.policies.length === 0) throw new ReportInputError('Name at least one policy for the report.');
  const policies = resolveReportPolicies(store, o.policies);
  const { rollouts, otherLayoutSets, operatorTime, rehearsalsLeftOut } = reportRollouts(
    store,
    policies,
    o.layoutSet.sha256,
    o.includeRehearsals === true,
  );
  const engines = simEnginesOf(
    store,
    rollouts.filter((r) => r.kind === 'sim'),
  );
  // Sweeps on both engines: the report compares Rapier's with real unless asked otherwise.
  const simCalibration = o.simCalibration ?? defaultSimCalibration(rollouts, engines);
  let built: PairedReport;
  try {
    built = buildPairedReport({
      task: getTask(o.layoutSet.task),
      layoutSet: o.layoutSet,
      policies,
      rollouts,
      simCalibration,
      realCalibration: o.realCalibration,
      episodeSeconds: o.episodeSeconds,
      cost: o.cost,
      seed: o.seed,
    });
  } catch (e) {
    // A bad price in the cost config is the caller's input too.
    if (e instanceof RangeError) throw new ReportInputError(e.message);
    throw e;
  }
  let preregistered;
  if (o.preregistered) {
    try {
      preregistered = preregisteredAnalysis(store, o.preregistered);
    } catch (e) {
      if (e instanceof PreregistrationError) throw new ReportInputError(e.message);
      throw e;
    }
  }
  const drift = storedSimDrift(store, o.layoutSet.sha256, {
    ...(o.driftThresholds ? { thresholds: o.driftThresholds } : {}),
    includeRehearsals: o.includeRehearsals === true,
  });
  const crossEngine = storedCrossEngine(rollouts, engines, {
    layouts: o.layoutSet.layouts,
    policies,
    simCalibration: built.simCalibration,
    realCalibration: built.realCalibration,
    episodeSeconds: built.episodeSeconds,
  });
  return {
    ...built,
    ...(preregistered ? { preregistered } : {}),
    otherLayoutSets,
    operatorTime,
    rehearsalsLeftOut,
    simDrift: drift,
    ...crossEngine,
  };
}
