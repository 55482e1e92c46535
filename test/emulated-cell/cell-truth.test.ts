import { test } from 'node:test';
import assert from 'node:assert/strict';
import {
  CELL_FINGER_REFLECTED_MASS_KG,
  CellGapError,
  cellMarkerJson,
  cellTruth,
  cellTruthHash,
  parseCellGap,
} from '../../src/emulated-cell/cell-truth.js';
import { DEFAULT_SIM_CALIBRATION } from '../../src/sim/calibration.js';

test("gap 'none' is the sim twin's default physics but for the gripper's reflected rotor mass: no torque error, no latency, cameras where calibrated", () => {
  const { truth } = cellTruth({ kind: 'none' });
  assert.deepEqual(truth.physics, { ...DEFAULT_SIM_CALIBRATION, fingerReflectedMassKg: CELL_FINGER_REFLECTED_MASS_KG });
  assert.deepEqual(truth.motorTorqueScale, [1, 1, 1, 1, 1, 1]);
  assert.equal(truth.replyLatencyMs, 0);
  for (const o of Object.values(truth.cameraOffsets))
    assert.deepEqual(o, { positionM: [0, 0, 0], rotationRad: [0, 0, 0] });
});

test('a seeded gap is reproducible, differs between seeds, stays in its physical ranges, and is hashed over its canonical JSON', () => {
  const a = cellTruth({ kind: 'seed', seed: 7 });
  const b = cellTruth({ kind: 'seed', seed: 7 });
  const c = cellTruth({ kind: 'seed', seed: 8 });
  assert.equal(a.sha256, b.sha256);
  assert.deepEqual(a.truth, b.truth);
  assert.notEqual(a.sha256, c.sha256);
  assert.equal(a.sha256, cellTruthHash(a.truth));
  for (let seed = 0; seed < 40; seed++) {
    const { truth } = cellTruth({ kind: 'seed', seed });
    const p = truth.physics;
    assert.ok(p.objectMassScale >= 0.8 && p.objectMassScale <= 1.25, `mass scale ${p.objectMassScale}`);
    assert.ok(p.objectFrictionScale >= 0.7 && p.objectFrictionScale <= 1.3);
    assert.ok(truth.motorTorqueScale.every((s) => s >= 0.9 && s <= 1.05));
    assert.ok(truth.replyLatencyMs >= 0.2 && truth.replyLatencyMs <= 1.5);
    p.joints.forEach((j, i) => {
      const d = DEFAULT_SIM_CALIBRATION.joints[i];
      assert.ok(j.dampingNms >= d.dampingNms * 0.5 - 1e-6 && j.dampingNms <= d.dampingNms * 2 + 1e-6);
      assert.ok(j.frictionNm >= d.frictionNm * 0.5 - 1e-6 && j.frictionNm <= d.frictionNm * 2 + 1e-6);
    });
    // The physics a scene runs on must keep the sim's step (the cell keeps real time at it).
    assert.equal(p.physicsStepS, DEFAULT_SIM_CALIBRATION.physicsStepS);
  }
  // A real gap: some physics differs from the twin's default.
  assert.notDeepEqual(a.truth.physics, DEFAULT_SIM_CALIBRATION);
});

test('what the station may store of a cell names its truth by hash only, never its numbers', () => {
  const t = cellTruth({ kind: 'seed', seed: 3 });
  const marker = JSON.parse(cellMarkerJson(t));
  assert.deepEqual(Object.keys(marker).sort(), ['kind', 'truthSha256', 'version']);
  assert.equal(marker.truthSha256, t.sha256);
});

test('--gap values: none or seed:N, anything else one sentence', () => {
  assert.deepEqual(parseCellGap('none'), { kind: 'none' });
  assert.deepEqual(parseCellGap('seed:12'), { kind: 'seed', seed: 12 });
  for (const bad of ['', 'seed:', 'seed:-1', 'seed:1.5', 'seed:99999999999', 'random']) {
    assert.throws(
      () => parseCellGap(bad),
      (e: unknown) => e instanceof CellGapError && /^The cell gap must be 'none'/.test(e.message),
      bad,
    );
  }
});
