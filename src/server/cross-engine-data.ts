/**
 * The paired report's cross-engine section from the store: which sim calibration ran on which
 * physics engine (the record's `engine` field), which record on the other engine pairs with the
 * one the report compares against real, and the agreement of the two (src/analysis/cross-engine.ts).
 */
import { crossEngineAgreement } from '../analysis/cross-engine.js';
import type { ReportRollout } from '../analysis/paired-report.js';
import {
  SIM_CALIBRATION_KIND,
  SIM_ENGINES,
  simCalibrationHash,
  simEngineOf,
  withEngine,
  type SimCalibration,
  type SimEngine,
} from '../sim/calibration.js';
import type { Store } from '../store/store.js';
import type { StoredCrossEngine } from './api/compare.js';

export type { StoredCrossEngine };

/** The engine of each plain sim calibration these rollouts ran (a randomization spec or an unknown hash has none). */
export function simEnginesOf(
  store: Store,
  rollouts: readonly ReportRollout[],
): Map<string, { engine: SimEngine; record: SimCalibration }> {
  const out = new Map<string, { engine: SimEngine; record: SimCalibration }>();
  for (const sha of new Set(rollouts.filter((r) => r.kind === 'sim').map((r) => r.calibration))) {
    const c = store.getCalibration(sha);
    if (!c || c.kind !== SIM_CALIBRATION_KIND) continue;
    const record = JSON.parse(c.canonicalJson) as SimCalibration;
    out.set(sha, { engine: simEngineOf(record), record });
  }
  return out;
}

const validSimCalibrations = (rollouts: readonly ReportRollout[]): string[] => [
  ...new Set(rollouts.filter((r) => r.kind === 'sim' && r.status === 'valid').map((r) => r.calibration)),
];

/**
 * The sim calibration the report compares with real when none is asked for and the valid sim
 * rollouts ran one record per engine: the first engine's (Rapier, whose results every earlier
 * report compared). The other engine's rollouts are the cross-engine section's. Undefined
 * otherwise: one record needs no choice, and any other mix is the operator's to pick.
 */
export function defaultSimCalibration(
  rollouts: readonly ReportRollout[],
  engines: ReadonlyMap<string, { engine: SimEngine }>,
): string | undefined {
  const present = validSimCalibrations(rollouts);
  if (present.length !== SIM_ENGINES.length || !present.every((c) => engines.has(c))) return undefined;
  const byEngine = SIM_ENGINES.map((e) => present.find((c) => engines.get(c)!.engine === e));
  if (byEngine.some((c) => c === undefined)) return undefined;
  return byEngine[0];
}

/**
 * The cross-engine section of a report compared against sim calibration `simCalibration`: the
 * same record on the other engine when its rollouts are stored, else the other engine's only
 * record (said so by `sameRecordOtherwise`); null with the reason when there is nothing to pair,
 * and null without one when no other engine ran at all.
 */
export function storedCrossEngine(
  rollouts: readonly ReportRollout[],
  engines: ReadonlyMap<string, { engine: SimEngine; record: SimCalibration }>,
  o: {
    readonly layouts: readonly { readonly tier: number }[];
    readonly policies: readonly { readonly key: string; readonly label: string }[];
    readonly simCalibration: string | null;
    readonly realCalibration: string | null;
    readonly episodeSeconds: number | null;
  },
): { crossEngine: StoredCrossEngine | null; crossEngineUnavailable?: string } {
  const chosen = o.simCalibration === null ? undefined : engines.get(o.simCalibration);
  const present = validSimCalibrations(rollouts);
  if (!chosen) {
    const engineCount = new Set(present.flatMap((c) => (engines.has(c) ? [engines.get(c)!.engine] : []))).size;
    return engineCount > 1
      ? {
          crossEngine: null,
          crossEngineUnavailable:
            'The compared sim rollouts ran a randomized sweep, which is not matched across engines.',
        }
      : { crossEngine: null };
  }
  const other = SIM_ENGINES.find((e) => e !== chosen.engine)!;
  const onOther = present.filter((c) => engines.get(c)?.engine === other);
  if (onOther.length === 0) return { crossEngine: null };
  const twin = simCalibrationHash(withEngine(chosen.record, other));
  const sameRecordOtherwise = onOther.includes(twin);
  if (!sameRecordOtherwise && onOther.length > 1) {
    return {
      crossEngine: null,
      crossEngineUnavailable: `The ${other} rollouts of these policies ran ${onOther.length} sim calibrations (${onOther.map((c) => `${c.slice(0, 12)}…`).join(', ')}), none of them ${o.simCalibration!.slice(0, 12)}… on ${other}: compare against one of them with --sim-calibration to pair the engines.`,
    };
  }
  const otherCalibration = sameRecordOtherwise ? twin : onOther[0];
  const pair = [
    { engine: chosen.engine, calibration: o.simCalibration! },
    { engine: other, calibration: otherCalibration },
  ];
  // The engines in one order whatever the report compares against real: Rapier first.
  if (SIM_ENGINES.indexOf(chosen.engine) > SIM_ENGINES.indexOf(other)) pair.reverse();
  const report = crossEngineAgreement({
    layouts: o.layouts,
    policies: o.policies,
    rollouts,
    engines: [pair[0], pair[1]],
    realCalibration: o.realCalibration,
    episodeSeconds: o.episodeSeconds,
  });
  return { crossEngine: { ...report, sameRecordOtherwise } };
}
