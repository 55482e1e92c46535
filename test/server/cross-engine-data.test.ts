import { test } from 'node:test';
import assert from 'node:assert/strict';
import { defaultSimCalibration, storedCrossEngine } from '../../src/server/cross-engine-data.js';
import type { ReportRollout } from '../../src/analysis/paired-report.js';
import {
  DEFAULT_SIM_CALIBRATION,
  simCalibrationHash,
  withCalibration,
  withEngine,
  type SimCalibration,
  type SimEngine,
} from '../../src/sim/calibration.js';

const RAPIER = DEFAULT_SIM_CALIBRATION;
const MUJOCO = withEngine(RAPIER, 'mujoco');
/** MuJoCo records that are not Rapier's on MuJoCo: another table friction. */
const MUJOCO_OTHER = withCalibration(MUJOCO, { tableFriction: 0.5 });
const MUJOCO_THIRD = withCalibration(MUJOCO, { tableFriction: 0.4 });
const RAPIER_OTHER = withCalibration(RAPIER, { tableFriction: 0.5 });
const h = simCalibrationHash;

const engines = (...records: SimCalibration[]): Map<string, { engine: SimEngine; record: SimCalibration }> =>
  new Map(records.map((r) => [h(r), { engine: r.engine ?? 'rapier', record: r }]));

let nextId = 1;
/** Three policies on one layout, on each record given. */
function rows(...records: SimCalibration[]): ReportRollout[] {
  return records.flatMap((r) =>
    ['p', 'q', 's'].map((policy, i) => ({
      id: nextId++,
      kind: 'sim' as const,
      policy,
      layoutIndex: 0,
      tier: 1,
      status: 'valid' as const,
      outcome: 'completed',
      progress: [0.9, 0.5, 0.1][i],
      calibration: h(r),
      durationS: 1,
      episodeSeconds: 10,
    })),
  );
}

const options = (simCalibration: string | null) => ({
  layouts: [{ tier: 1 }],
  policies: ['p', 'q', 's'].map((k) => ({ key: k, label: k })),
  simCalibration,
  realCalibration: null,
  episodeSeconds: 10,
});

test('one record per engine and none asked for: Rapier is compared with real; any other mix is left to the operator', () => {
  assert.equal(defaultSimCalibration(rows(MUJOCO, RAPIER), engines(MUJOCO, RAPIER)), h(RAPIER));
  assert.equal(
    defaultSimCalibration(rows(MUJOCO_OTHER, RAPIER), engines(MUJOCO_OTHER, RAPIER)),
    h(RAPIER),
    'one record per engine, twins or not',
  );
  assert.equal(
    defaultSimCalibration(rows(RAPIER, RAPIER_OTHER), engines(RAPIER, RAPIER_OTHER)),
    undefined,
    'two Rapier records',
  );
  assert.equal(
    defaultSimCalibration(rows(RAPIER, MUJOCO, MUJOCO_OTHER), engines(RAPIER, MUJOCO, MUJOCO_OTHER)),
    undefined,
    'three records',
  );
  assert.equal(defaultSimCalibration(rows(RAPIER), engines(RAPIER)), undefined, 'one record needs no choice');
});

test('the other engine pairs by the same record on it, else its only record, else a sentence; Rapier first whichever is compared with real', () => {
  const twin = storedCrossEngine(
    rows(RAPIER, MUJOCO, MUJOCO_OTHER),
    engines(RAPIER, MUJOCO, MUJOCO_OTHER),
    options(h(RAPIER)),
  );
  assert.deepEqual(
    twin.crossEngine?.engines.map((e) => e.calibration),
    [h(RAPIER), h(MUJOCO)],
  );
  assert.equal(twin.crossEngine?.sameRecordOtherwise, true);
  // Compared against MuJoCo's: the same pair, Rapier still first.
  const fromMujoco = storedCrossEngine(rows(RAPIER, MUJOCO), engines(RAPIER, MUJOCO), options(h(MUJOCO)));
  assert.deepEqual(
    fromMujoco.crossEngine?.engines.map((e) => e.engine),
    ['rapier', 'mujoco'],
  );

  const only = storedCrossEngine(rows(RAPIER, MUJOCO_OTHER), engines(RAPIER, MUJOCO_OTHER), options(h(RAPIER)));
  assert.deepEqual(
    only.crossEngine?.engines.map((e) => e.calibration),
    [h(RAPIER), h(MUJOCO_OTHER)],
  );
  assert.equal(only.crossEngine?.sameRecordOtherwise, false);

  const two = storedCrossEngine(
    rows(RAPIER, MUJOCO_OTHER, MUJOCO_THIRD),
    engines(RAPIER, MUJOCO_OTHER, MUJOCO_THIRD),
    options(h(RAPIER)),
  );
  assert.equal(two.crossEngine, null);
  assert.match(
    two.crossEngineUnavailable!,
    /^The mujoco rollouts of these policies ran 2 sim calibrations \(.*\), none of them [0-9a-f]{12}… on mujoco: compare against one of them with --sim-calibration to pair the engines\.$/,
  );

  assert.deepEqual(
    storedCrossEngine(rows(RAPIER), engines(RAPIER), options(h(RAPIER))),
    { crossEngine: null },
    'one engine: nothing to say',
  );
});
