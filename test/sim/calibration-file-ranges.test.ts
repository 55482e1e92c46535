/**
 * Sim calibration files are read from disk and run: values that pass the type checks but no physics
 * takes (a 5e-324 s step, a billion solver iterations, 9e15 N of grip) once hung the sim. Every
 * numeric field has a physical range, names are printable, and random files only ever get
 * CalibrationFileError sentences.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import fc from 'fast-check';
import { CalibrationFileError, parseSimCalibration, SIM_CALIBRATION_RANGES } from '../../src/sim/calibration-file.js';
import { DEFAULT_SIM_CALIBRATION, simCalibrationHash } from '../../src/sim/calibration.js';
import { runInProcess } from '../helpers/cli.js';
import { sampleLayoutSet, serializeLayoutSet } from '../../src/layouts/layout-set.js';

const text = (changes: Record<string, unknown>): string => JSON.stringify({ ...DEFAULT_SIM_CALIBRATION, ...changes });
const withJoint = (i: number, changes: Record<string, unknown>) => ({
  joints: DEFAULT_SIM_CALIBRATION.joints.map((j, k) => (k === i ? { ...j, ...changes } : j)),
});
const refused = (t: string, message: RegExp): void => {
  assert.throws(
    () => parseSimCalibration(t, 'cal.json'),
    (e: unknown) => {
      assert.ok(
        e instanceof CalibrationFileError,
        `expected a CalibrationFileError, got ${(e as Error)?.name}: ${(e as Error)?.message}`,
      );
      assert.match(e.message, message);
      assert.ok(!e.message.includes('\n'));
      return true;
    },
  );
};

test('the values the issue found hanging the sim are refused with the field, the value and its range', () => {
  refused(
    text({ physicsStepS: 5e-324 }),
    /^The sim calibration file cal\.json: physicsStepS must be from 0\.0001 to 0\.02 s, not 5e-324\.$/,
  );
  refused(text({ solverIterations: 1e9 }), /solverIterations must be a whole number from 1 to 64, not 1000000000\.$/);
  refused(text({ pgsIterations: 1e9 }), /pgsIterations must be a whole number from 1 to 64, not 1000000000\.$/);
  refused(text({ gripperMaxForceN: 9e15 }), /gripperMaxForceN must be from 0\.1 to 200 N, not 9000000000000000\.$/);
  refused(text({ objectMassScale: 1e6 }), /objectMassScale must be from 0\.01 to 10, not 1000000\.$/);
  refused(text(withJoint(2, { armatureKgM2: 50 })), /joints\[2\]\.armatureKgM2 must be from 0 to 1 kg·m², not 50\.$/);
  refused(text(withJoint(0, { frictionNm: 1e6 })), /joints\[0\]\.frictionNm must be from 0 to 28 Nm, not 1000000\.$/);
  refused(text({ version: 1e12 }), /version must be a whole number from 0 to 1000000, not 1000000000000\.$/);
});

test('a lone surrogate or a control character in the name is refused in words, not a crash when hashed', () => {
  refused(
    text({}).replace('"yam-default"', '"yam\\ud800"'),
    /name "yam\\ud800" holds a lone UTF-16 surrogate; a name is printable text/,
  );
  refused(text({ name: 'yam\u001b[31m' }), /name "yam\\u001b\[31m" is not printable/);
  refused(text({ name: '' }), /name "" is not printable; a name is 1 to 100 printable characters/);
});

test('every range holds the default with headroom on both sides where the field can move', () => {
  const flat: Record<string, number> = { ...(DEFAULT_SIM_CALIBRATION as unknown as Record<string, number>) };
  for (const [i, j] of DEFAULT_SIM_CALIBRATION.joints.entries())
    for (const [k, v] of Object.entries(j)) flat[`joints[${i}].${k}`] = v;
  for (const [field, r] of Object.entries(SIM_CALIBRATION_RANGES)) {
    const values = field.startsWith('joints.')
      ? DEFAULT_SIM_CALIBRATION.joints.map((j) => j[field.slice(7) as keyof typeof j])
      : [flat[field]];
    for (const v of values) {
      assert.ok(v >= r.min && v <= r.max, `${field} default ${v} outside [${r.min}, ${r.max}]`);
      assert.ok(r.max >= 2 * v, `${field}: room to double the default`);
    }
  }
  // The default itself still reads, with the same id.
  assert.equal(
    simCalibrationHash(parseSimCalibration(JSON.stringify(DEFAULT_SIM_CALIBRATION), 'cal.json')),
    simCalibrationHash(DEFAULT_SIM_CALIBRATION),
  );
});

test('random files and random edits of the default: a CalibrationFileError sentence or a calibration inside every range', () => {
  const fields = [...Object.keys(DEFAULT_SIM_CALIBRATION), 'joints.0', 'joints.3'];
  const value = fc.oneof(
    fc.jsonValue({ maxDepth: 2 }),
    fc.double(),
    fc.constantFrom(5e-324, 1e9, 9e15, -0, 1e308, 'a\ud800', ''),
    fc.integer(),
  );
  fc.assert(
    fc.property(fc.oneof(fc.string({ maxLength: 100 }), fc.json({ maxDepth: 6 })), (t) => {
      try {
        parseSimCalibration(t, 'cal.json');
      } catch (e) {
        if (!(e instanceof CalibrationFileError)) throw e;
      }
    }),
    { numRuns: 1000 },
  );
  fc.assert(
    fc.property(
      fc.constantFrom(...fields),
      fc.constantFrom('dampingNms', 'frictionNm', 'armatureKgM2'),
      value,
      (field, jointKey, v) => {
        const cal = structuredClone(DEFAULT_SIM_CALIBRATION) as unknown as Record<string, unknown> & {
          joints: Record<string, unknown>[];
        };
        if (field.startsWith('joints.')) cal.joints[Number(field.slice(7))][jointKey] = v;
        else cal[field] = v;
        let read;
        try {
          read = parseSimCalibration(JSON.stringify(cal), 'cal.json');
        } catch (e) {
          if (!(e instanceof CalibrationFileError)) throw e;
          assert.ok(!e.message.includes('\n') && e.message.length < 400);
          return;
        }
        simCalibrationHash(read); // hashing an accepted record never throws
        for (const [f, r] of Object.entries(SIM_CALIBRATION_RANGES)) {
          const vals = f.startsWith('joints.')
            ? read.joints.map((j) => j[f.slice(7) as keyof typeof j])
            : [(read as unknown as Record<string, number>)[f]];
          for (const x of vals) assert.ok(x >= r.min && x <= r.max, `${f} = ${x} accepted`);
        }
      },
    ),
    { numRuns: 1500 },
  );
});

const dir = mkdtempSync(join(tmpdir(), 'tandem-cal-ranges-'));
test.after(() => rmSync(dir, { recursive: true, force: true }));

test('tandem sim rollout --calibration with an out-of-range step: one sentence, exit 2, before any sim starts', async () => {
  writeFileSync(join(dir, 'cal.json'), text({ physicsStepS: 5e-324 }));
  writeFileSync(
    join(dir, 'set.json'),
    serializeLayoutSet(sampleLayoutSet({ task: 'bottles-in-the-bin', tiers: [1], perTier: 1, seed: 1 })),
  );
  const r = await runInProcess(
    ['sim', 'rollout', '--layouts', 'set.json', '--layout', '0', '--policy', 'hold', '--calibration', 'cal.json'],
    dir,
  );
  assert.equal(r.code, 2, r.stderr);
  assert.match(
    r.stderr,
    /^The sim calibration file cal\.json: physicsStepS must be from 0\.0001 to 0\.02 s, not 5e-324\.\n$/,
  );
});
