import { test } from 'node:test';
import assert from 'node:assert/strict';
import { CalibrationFileError, parseSimCalibration } from '../../src/sim/calibration-file.js';
import { DEFAULT_SIM_CALIBRATION, simCalibrationHash } from '../../src/sim/calibration.js';

const text = (changes: Record<string, unknown>): string => JSON.stringify({ ...DEFAULT_SIM_CALIBRATION, ...changes });
const refused = (t: string, message: RegExp): void => {
  assert.throws(
    () => parseSimCalibration(t, 'cal.json'),
    (e: unknown) => e instanceof CalibrationFileError && message.test(e.message) && !e.message.includes('\n'),
  );
};

test('the default record read back from its JSON is the same record, with the same id', () => {
  const cal = parseSimCalibration(JSON.stringify(DEFAULT_SIM_CALIBRATION, null, 2), 'cal.json');
  assert.deepEqual(cal, DEFAULT_SIM_CALIBRATION);
  assert.equal(simCalibrationHash(cal), simCalibrationHash(DEFAULT_SIM_CALIBRATION));
});

test('the shape is checked field by field, joints included, and extra fields anywhere are refused by name', () => {
  refused(
    '[1, 2]',
    /^The sim calibration file cal\.json: a list, not a JSON object; start from the output of 'tandem sim calibration'\.$/,
  );
  refused(
    text({ joints: 'soft' }),
    /^The sim calibration file cal\.json: field 'joints' must be a list, not a string\.$/,
  );
  refused(
    text({ joints: [1, ...DEFAULT_SIM_CALIBRATION.joints.slice(1)] }),
    /field 'joints\[0\]' must be a JSON object \{dampingNms, frictionNm, armatureKgM2\}, not a number\.$/,
  );
  refused(
    text({ joints: DEFAULT_SIM_CALIBRATION.joints.map((j, i) => (i === 3 ? { ...j, stiction: 1 } : j)) }),
    /unknown field 'joints\[3\]\.stiction' \(the fields are dampingNms, frictionNm, armatureKgM2\)/,
  );
  refused(
    text({ solverIters: 8, colour: 'red' }),
    /unknown fields 'solverIters', 'colour' \(the fields are name, version, /,
  );
  refused(text({ version: '3' }), /field 'version' must be a number, not a string\.$/);
  refused(text({ name: null }), /field 'name' must be a string, not null\.$/);
});

test('values the physics cannot take are refused with the field and the value', () => {
  refused(text({ physicsStepS: 0 }), /physicsStepS must be in \(0, 0\.02\] s, not 0\.$/);
  refused(text({ solverIterations: 2.5 }), /solverIterations must be a whole number ≥ 1, not 2\.5\.$/);
  refused(text({ joints: DEFAULT_SIM_CALIBRATION.joints.slice(0, 5) }), /joints must list 6 arm joints, not 5\.$/);
  refused(text({ version: -1 }), /version must be a whole number ≥ 0, not -1\.$/);
  refused(text({ objectMassScale: 0 }), /objectMassScale must be greater than 0, not 0\.$/);
  refused(text({ gripperMaxForceN: -15 }), /gripperMaxForceN must be greater than 0, not -15\.$/);
  refused(text({ tableFriction: -0.1 }), /tableFriction must be 0 or more, not -0\.1\.$/);
  refused(text({ restitution: 1.5 }), /restitution must be from 0 to 1, not 1\.5\.$/);
  refused(
    text({ joints: DEFAULT_SIM_CALIBRATION.joints.map((j, i) => (i === 1 ? { ...j, frictionNm: -0.3 } : j)) }),
    /joints\[1\]\.frictionNm must be a finite number ≥ 0, not -0\.3\.$/,
  );
  // JSON has no Infinity, but 1e999 parses to it.
  refused(
    text({}).replace(/"fingerFriction":[^,}]+/, '"fingerFriction":1e999'),
    /fingerFriction must be a finite number\.$/,
  );
});

test('fitted records may carry motor torque scales, a command latency, the reflected rotor mass and a lineage; out of range or malformed, each is refused by name', () => {
  const lineage = {
    method: 'tandem sysid fit',
    fromSha256: simCalibrationHash(DEFAULT_SIM_CALIBRATION),
    episodes: [{ file: 'a.mcap', sha256: 'ab'.repeat(32), role: 'fit' }],
  };
  const fitted = {
    motorTorqueScale: [1, 0.95, 0.97, 1, 1.02, 1],
    commandLatencyS: 0.0012,
    fingerReflectedMassKg: 0.6,
    lineage,
  };
  const cal = parseSimCalibration(text(fitted), 'cal.json');
  assert.deepEqual(cal.motorTorqueScale, fitted.motorTorqueScale);
  assert.equal(cal.fingerReflectedMassKg, 0.6);
  assert.notEqual(simCalibrationHash(cal), simCalibrationHash(DEFAULT_SIM_CALIBRATION));
  refused(
    text({ motorTorqueScale: [1, 1, 1] }),
    /field 'motorTorqueScale' must be a list of 6 numbers \(one per arm joint\), not a list of 3\.$/,
  );
  refused(text({ motorTorqueScale: [1, 1, 1, 1, 1, 3] }), /motorTorqueScale\[5\] must be from 0\.5 to 1\.5, not 3\.$/);
  refused(text({ commandLatencyS: 0.5 }), /commandLatencyS must be from 0 to 0\.05 s, not 0\.5\.$/);
  refused(text({ fingerReflectedMassKg: -1 }), /fingerReflectedMassKg must be from 0 to 2 kg, not -1\.$/);
  refused(
    text({ lineage: { method: 'x', fromSha256: 'nope', episodes: [] } }),
    /field 'lineage' must name its 'method' and the 64-hex id 'fromSha256'/,
  );
  refused(
    text({ lineage: { ...lineage, episodes: [{ file: 'a.mcap', role: 'train' }] } }),
    /field 'lineage\.episodes' must be a list of \{file, sha256, role: 'fit' or 'holdout'\}/,
  );
});

test('a record may put the arms on multibody joints (armJoints, an experiment); any other value is refused by name', () => {
  const cal = parseSimCalibration(text({ armJoints: 'multibody' }), 'cal.json');
  assert.equal(cal.armJoints, 'multibody');
  assert.notEqual(simCalibrationHash(cal), simCalibrationHash(DEFAULT_SIM_CALIBRATION));
  refused(
    text({ armJoints: 'featherstone' }),
    /field 'armJoints' must be 'impulse' or 'multibody', not 'featherstone'\.$/,
  );
  refused(text({ armJoints: 1 }), /field 'armJoints' must be 'impulse' or 'multibody', not a number\.$/);
});
