import { test } from 'node:test';
import assert from 'node:assert/strict';
import { calibrationAt, fitParameters, objectParameters } from '../../../calibration/sysid/parameters.js';
import { DEFAULT_SIM_CALIBRATION, simCalibrationJson } from '../../../src/sim/calibration.js';
import { parseSimCalibration } from '../../../src/sim/calibration-file.js';

// Whatever the fit ends on, `sysid fit` writes it as a record `--calibration` must take back.
test('a fit that ends on any bound of its parameters writes a record the calibration file reader accepts', () => {
  const base = DEFAULT_SIM_CALIBRATION;
  const params = [...fitParameters(base), ...objectParameters(base)];
  for (const edge of [0, 1]) {
    const record = calibrationAt(
      base,
      params,
      params.map(() => edge),
    );
    assert.doesNotThrow(() => parseSimCalibration(simCalibrationJson(record), `the fit at u = ${edge}`));
  }
  // The finger pads' friction: the default 1.2 searched a factor 3 up would be 3.6, past the file's 3.
  const pads = objectParameters(base).find((p) => p.name === 'fingerFriction')!;
  assert.equal(pads.hi, 3);
});
