import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import {
  calibrateProjector,
  calibrationStoreInput,
  parseCalibration,
  serializeCalibration,
} from '../../../calibration/projector/calibration-record.js';
import { ProjectorCalibrationError } from '../../../calibration/projector/homography.js';
import { openStore } from '../../../src/store/store.js';
import { RESOLUTION, simulateAlignment, TABLE_FIDUCIALS_MM, trueHomography } from './projector-geometry.js';

const points = simulateAlignment(trueHomography(), TABLE_FIDUCIALS_MM, 1, 42);
const calib = calibrateProjector({ points, resolution: RESOLUTION, createdAt: '2026-12-01T10:00:00.000Z' });

test('a calibration file reads back as the same record, its hash checked', () => {
  const text = serializeCalibration(calib);
  assert.deepEqual(parseCalibration(text, 'calib.json'), calib);
  assert.match(calib.sha256, /^[0-9a-f]{64}$/);
  // The same points and time give the same hash on any run.
  assert.equal(
    calibrateProjector({ points, resolution: RESOLUTION, createdAt: '2026-12-01T10:00:00.000Z' }).sha256,
    calib.sha256,
  );
});

test('an edited calibration file is refused in one sentence', () => {
  const edited = serializeCalibration(calib).replace(`"widthPx": 1920`, `"widthPx": 1921`);
  assert.throws(
    () => parseCalibration(edited, 'calib.json'),
    (e: unknown) =>
      e instanceof ProjectorCalibrationError &&
      /calib\.json does not match its hash .* calibrate again rather than editing/.test(e.message),
  );
  assert.throws(() => parseCalibration('{"format": "something"}', 'x.json'), /x\.json is not a projector calibration/);
  assert.throws(() => parseCalibration('nope', 'x.json'), /x\.json is not JSON/);
});

test('a recalibration records the version it replaces', () => {
  const next = calibrateProjector({ points, resolution: RESOLUTION, previous: calib });
  assert.equal(next.version, 2);
  assert.deepEqual(next.previous, { version: 1, sha256: calib.sha256 });
});

test('a crosshair outside the image is refused, naming the point and the resolution', () => {
  const bad = points.map((p, i) => (i === 2 ? { ...p, projectorPx: [2000, 500] as const } : p));
  assert.throws(
    () => calibrateProjector({ points: bad, resolution: RESOLUTION }),
    /Point 3's projector pixel \(2000, 500\) is outside the 1920x1080 image/,
  );
});

test('the real store keeps the calibration under its hash as kind projector, and hands it back as the newest', () => {
  const dir = mkdtempSync(join(tmpdir(), 'tandem-calib-'));
  try {
    const store = openStore(join(dir, 'station.sqlite'));
    const { record, inserted } = store.putCalibration(calibrationStoreInput(calib));
    assert.equal(inserted, true);
    assert.equal(record.kind, 'projector');
    const latest = store.latestCalibration('projector');
    assert.equal(latest?.sha256, calib.sha256);
    // What the store holds is the canonical JSON: it parses back to the record once its hash is put back.
    assert.deepEqual(
      parseCalibration(JSON.stringify({ ...JSON.parse(latest!.canonicalJson), sha256: latest!.sha256 }), 'store'),
      calib,
    );
    store.close();
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});
