/**
 * A store for the sim-twin drift alarm's tests: three policies on four one-bottle layouts, a sim
 * sweep (calibration A) on 2026-11-01, and real sessions on 11-02 (ranking as the sim does), 11-03
 * and 11-04 (the first two policies swapped on the rig).
 */
import { openStore, type Store } from '../../src/store/store.js';
import { sampleLayoutSet } from '../../src/layouts/layout-set.js';
import { SIM_CALIBRATION_KIND } from '../../src/sim/calibration.js';
import { calibrationFixture } from '../store/fixture-data.js';

/** Four one-bottle layouts: a rollout's progress is 0 or 1. */
export const DRIFT_SET = sampleLayoutSet({ task: 'bottles-in-the-bin', tiers: [1], perTier: 4, seed: 9 });
export const DRIFT_SPECS = [
  'code:bottles-in-the-bin',
  'code:bottles-in-the-bin?skill=0.6',
  'code:bottles-in-the-bin?skill=0.3',
];
/** Per policy, the bottle done on layouts 0–3: sim ranks them 0.75, 0.50, 0.25. */
export const AS_SIM = [
  [1, 1, 1, 0],
  [1, 1, 0, 0],
  [1, 0, 0, 0],
];
/** The rig after a change: the first two policies swap (0.50, 0.75, 0.25). */
export const SWAPPED = [AS_SIM[1], AS_SIM[0], AS_SIM[2]];
export const CAL_A = calibrationFixture(SIM_CALIBRATION_KIND, 1, { tableFriction: 0.6 });
export const CAL_B = calibrationFixture(SIM_CALIBRATION_KIND, 2, { tableFriction: 0.45 });

export function sweep(
  store: Store,
  policyIds: readonly number[],
  done: readonly (readonly number[])[],
  calibration: string,
  day: string,
): void {
  policyIds.forEach((policyId, pi) =>
    DRIFT_SET.layouts.forEach((l, i) =>
      store.insertRollout({
        kind: 'sim',
        policyId,
        layoutSetSha256: DRIFT_SET.sha256,
        layoutIndex: i,
        episodeSeconds: 20,
        controlHz: 50,
        status: 'valid',
        progress: done[pi][i],
        counts: { inBin: done[pi][i], target: 1 },
        calibrationSha256s: [calibration],
        startedAt: `${day}T08:00:00.000Z`,
        durationS: 4,
      }),
    ),
  );
}

function evaluation(
  store: Store,
  policyIds: readonly number[],
  done: readonly (readonly number[])[],
  day: string,
): number {
  const session = store.createSession({ kind: 'real-eval', operator: 'test' });
  policyIds.forEach((policyId, pi) =>
    DRIFT_SET.layouts.forEach((l, i) => {
      const id = store.insertRollout({
        kind: 'real',
        sessionId: session.id,
        policyId,
        layoutSetSha256: DRIFT_SET.sha256,
        layoutIndex: i,
        episodeSeconds: 20,
        controlHz: 50,
        status: 'valid',
        startedAt: `${day}T10:${String(pi * 4 + i).padStart(2, '0')}:00.000Z`,
        durationS: 21,
      });
      const inBin = done[pi][i];
      store.insertOperatorScore({
        rolloutId: id,
        endStates: [{ id: l.objects[0].id, ...(inBin ? { region: 'bin' } : {}) }],
        progress: inBin,
        counts: { inBin, target: 1 },
        operator: 'test',
      });
    }),
  );
  return session.id;
}

/** Sim sweep on 11-01 (calibration A); real sessions on 11-02 (as sim), 11-03 and 11-04 (swapped). */
export function fillDriftStore(file: string): { sessions: number[]; policyIds: number[] } {
  const store = openStore(file);
  try {
    store.putLayoutSet(DRIFT_SET);
    store.putCalibration(CAL_A);
    store.putCalibration(CAL_B);
    const policyIds = DRIFT_SPECS.map((spec) => store.upsertPolicy({ spec, name: spec, checkpointSha256: null }).id);
    sweep(store, policyIds, AS_SIM, CAL_A.sha256, '2026-11-01');
    const sessions = [
      evaluation(store, policyIds, AS_SIM, '2026-11-02'),
      evaluation(store, policyIds, SWAPPED, '2026-11-03'),
      evaluation(store, policyIds, SWAPPED, '2026-11-04'),
    ];
    return { sessions, policyIds };
  } finally {
    store.close();
  }
}
