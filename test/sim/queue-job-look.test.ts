// A queued job carries its drawn look to whichever worker takes it; a worker checks it like the
// rest of the job (a queue is input from the network): small finite numbers, or the job is refused.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { JobRefusedError, SIM_JOB_FORMAT, TANDEM_VERSION, validateSimJob } from '../../src/sim/queue/job.js';
import { DEFAULT_SIM_CALIBRATION, simCalibrationHash } from '../../src/sim/calibration.js';
import { drawLook, parseRandomizationSpec } from '../../src/sim/randomization.js';

const look = drawLook(
  parseRandomizationSpec(
    JSON.stringify({
      format: 'tandem.randomization/1',
      seed: 2,
      visual: { cameraAngleRad: [-0.05, 0.05], lightIntensityScale: [0.5, 1.5], objectColorScale: [0.8, 1.2] },
    }),
    'spec.json',
  ),
  1,
  0,
)!;
const job = (extra: Record<string, unknown>) => ({
  format: SIM_JOB_FORMAT,
  tandemVersion: TANDEM_VERSION,
  sweepId: 'sweep-look-test',
  layoutSetSha256: 'a'.repeat(64),
  layoutIndex: 1,
  repeat: 0,
  seed: 0,
  policy: { kind: 'spec', spec: 'code:hold' },
  calibration: DEFAULT_SIM_CALIBRATION,
  calibrationSha256: simCalibrationHash(DEFAULT_SIM_CALIBRATION),
  seconds: 1,
  ...extra,
});

test('a queued job keeps its drawn look; a look of anything but small numbers is refused in one sentence', () => {
  assert.deepEqual(validateSimJob(job({ look }), 'j1').look, look);
  assert.equal(validateSimJob(job({}), 'j2').look, undefined);
  for (const bad of [{ light: { intensityScale: 'bright' } }, { objectColorScale: [1, 1, 1e6] }, 'dim', [1, 2]]) {
    assert.throws(
      () => validateSimJob(job({ look: bad }), 'j3'),
      (e: unknown) =>
        e instanceof JobRefusedError &&
        /Job j3 has a camera look that is not an object of small numbers\./.test(e.message),
      JSON.stringify(bad),
    );
  }
});
