import { after, test } from 'node:test';
import { readIndexed } from '../helpers/mcap.js';
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { runTandem } from '../helpers/cli.js';
import { sampleLayoutSet, serializeLayoutSet } from '../../src/layouts/layout-set.js';
import { openStore } from '../../src/store/store.js';
import { DEFAULT_SIM_CALIBRATION, SIM_CALIBRATION_KIND, simCalibrationHash } from '../../src/sim/calibration.js';
import {
  drawLook,
  drawWorld,
  parseRandomizationSpec,
  RandomizationSpecError,
  RANDOMIZATION_KIND,
  SIM_LOOK_KIND,
} from '../../src/sim/randomization.js';

const SPEC = {
  format: 'tandem.randomization/1',
  seed: 3,
  physics: { objectMassScale: [0.5, 1.5], tableFriction: [0.3, 0.9] },
  placement: { sigmaM: 0.01, sigmaYawRad: 0.1 },
};
const parse = (doc: unknown) => parseRandomizationSpec(JSON.stringify(doc), 'spec.json');

test('a randomization spec out of physical range, reversed, unknown or asking for what is not built is refused with a sentence naming the field', () => {
  const refusals: [unknown, RegExp][] = [
    [
      { ...SPEC, physics: { objectMassScale: [0.5, 15] } },
      /objectMassScale" \[0\.5, 15\] is outside the physical range \[0\.2, 5\]/,
    ],
    [
      { ...SPEC, physics: { tableFriction: [0.9, 0.3] } },
      /tableFriction" is \[0\.9, 0\.3\]; the low end must come first/,
    ],
    [{ ...SPEC, physics: { gravity: [9, 10] } }, /physics "gravity" is not a field the sim can randomize/],
    [{ ...SPEC, physics: { restitution: 0.5 } }, /restitution" must be a range \[lo, hi\]/],
    [{ ...SPEC, placement: { sigmaM: 1, sigmaYawRad: 0 } }, /placement "sigmaM" must be a number from 0 to 0\.05/],
    [
      { ...SPEC, light: { intensity: [0.5, 1] } },
      /has "light" at the top; camera, light and colour ranges go under "visual"/,
    ],
    [{ ...SPEC, textures: ['wood'] }, /asks for texture randomization .*, which this version of the sim does not do/],
    [
      { ...SPEC, visual: { cameraPositionM: [-0.2, 0.2] } },
      /visual "cameraPositionM" \[-0\.2, 0\.2\] is outside the range that keeps the picture the same cell \[-0\.05, 0\.05\]/,
    ],
    [
      { ...SPEC, visual: { lightIntensityScale: [0, 1] } },
      /visual "lightIntensityScale" \[0, 1\] is outside the range .* \[0\.3, 2\]/,
    ],
    [
      { ...SPEC, visual: { objectColorScale: [1.2, 0.8] } },
      /visual "objectColorScale" is \[1\.2, 0\.8\]; the low end must come first/,
    ],
    [{ ...SPEC, visual: { fogDensity: [0, 1] } }, /visual "fogDensity" is not a field the sim cameras can randomize/],
    [{ ...SPEC, visual: { cameraAngleRad: 0.05 } }, /visual "cameraAngleRad" must be a range \[lo, hi\]/],
    [{ ...SPEC, format: 'tandem.randomization/9' }, /this tandem reads "tandem.randomization\/1"/],
    [{ ...SPEC, seed: 1.5 }, /needs a whole-number "seed"/],
  ];
  for (const [doc, message] of refusals)
    assert.throws(
      () => parse(doc),
      (e: unknown) => e instanceof RandomizationSpecError && message.test(e.message),
      JSON.stringify(doc),
    );
  assert.throws(() => parseRandomizationSpec('{"format": ', 'spec.json'), /spec.json is not JSON/);
});

test('each (layout, repeat) draws its own world inside the ranges, the same one every time, and unlisted fields stay the base calibration', () => {
  const r = parse(SPEC);
  const a = drawWorld(DEFAULT_SIM_CALIBRATION, r, 2, 1);
  assert.deepEqual(drawWorld(DEFAULT_SIM_CALIBRATION, r, 2, 1), a, 'reproducible from the spec alone');
  const hashes = new Set<string>();
  for (let layout = 0; layout < 10; layout++) {
    for (let repeat = 0; repeat < 10; repeat++) {
      const w = drawWorld(DEFAULT_SIM_CALIBRATION, r, layout, repeat);
      hashes.add(simCalibrationHash(w.calibration));
      assert.ok(w.calibration.objectMassScale >= 0.5 && w.calibration.objectMassScale <= 1.5);
      assert.ok(w.calibration.tableFriction >= 0.3 && w.calibration.tableFriction <= 0.9);
      assert.equal(w.calibration.fingerFriction, DEFAULT_SIM_CALIBRATION.fingerFriction);
      assert.deepEqual(w.calibration.joints, DEFAULT_SIM_CALIBRATION.joints);
      assert.deepEqual(w.placement, SPEC.placement);
    }
  }
  assert.equal(hashes.size, 100, 'a world of its own per rollout');
  const masses = [...Array(100).keys()].map(
    (k) => drawWorld(DEFAULT_SIM_CALIBRATION, r, k, 0).calibration.objectMassScale,
  );
  const mean = masses.reduce((x, y) => x + y, 0) / masses.length;
  assert.ok(Math.abs(mean - 1) < 0.1, `uniform over [0.5, 1.5]: mean ${mean}`);
  // Listing another field leaves this field's draws as they were (fields draw in a fixed order).
  const wider = parse({ ...SPEC, physics: { ...SPEC.physics, restitution: [0, 0.2] } });
  assert.equal(
    drawWorld(DEFAULT_SIM_CALIBRATION, wider, 2, 1).calibration.objectMassScale,
    a.calibration.objectMassScale,
  );
  assert.notEqual(parse({ ...SPEC, seed: 4 }).sha256, r.sha256);
});

const VISUAL = {
  cameraPositionM: [-0.02, 0.02],
  cameraAngleRad: [-0.05, 0.05],
  lightIntensityScale: [0.6, 1.4],
  lightAzimuthRad: [-0.8, 0.8],
  lightElevationRad: [-0.3, 0.3],
  objectColorScale: [0.6, 1.4],
  tableColorScale: [0.7, 1.3],
};

/**
 * The sweeps both --randomize tests read, run once for the file (each starts a rollout thread, the
 * bulk of its cost): one worker each, since reproducibility across worker counts is sim-sweep.test's
 * claim. a: physics ranges; b: the same spec again, recording; c: no spec; v: the same physics with
 * visual ranges.
 */
const sweepDir = mkdtempSync(join(tmpdir(), 'tandem-randomize-'));
after(() => rmSync(sweepDir, { recursive: true, force: true }));
let sweeps: Promise<void> | undefined;
function runSweeps(): Promise<void> {
  sweeps ??= (async () => {
    const layouts = join(sweepDir, 'bottles.json');
    writeFileSync(
      layouts,
      serializeLayoutSet(sampleLayoutSet({ task: 'bottles-in-the-bin', tiers: [2], perTier: 2, seed: 4 })),
    );
    writeFileSync(join(sweepDir, 'physics.json'), JSON.stringify(SPEC));
    writeFileSync(join(sweepDir, 'looks.json'), JSON.stringify({ ...SPEC, visual: VISUAL }));
    const sweep = (data: string, extra: string[] = []) =>
      runTandem([
        'sim',
        'sweep',
        '--layouts',
        layouts,
        '--policy',
        'code:hold',
        '--repeats',
        '2',
        '--workers',
        '1',
        '--seconds',
        '0.3',
        '--data',
        join(sweepDir, data),
        ...extra,
      ]);
    const physics = join(sweepDir, 'physics.json');
    const results = await Promise.all([
      sweep('a', ['--randomize', physics]),
      sweep('b', ['--randomize', physics, '--record', join(sweepDir, 'episodes')]),
      sweep('c'),
      sweep('v', ['--randomize', join(sweepDir, 'looks.json')]),
    ]);
    for (const r of results) assert.equal(r.code, 0, r.stderr);
  })();
  return sweeps;
}

test('sim sweep --randomize stores each rollout with its own drawn calibration and the spec, and the same command reproduces them', async () => {
  await runSweeps();
  const dir = sweepDir;
  const rowsOf = (data: string) => {
    const store = openStore(join(dir, data, 'tandem.sqlite'));
    try {
      return store
        .listRollouts({ kind: 'sim' })
        .sort((x, y) => x.layoutIndex - y.layoutIndex || x.repeatIndex - y.repeatIndex)
        .map((row) => ({
          key: `${row.layoutIndex}/${row.repeatIndex}`,
          hash: row.finalStateHash,
          cals: row.calibrationSha256s.map((c) => store.getCalibration(c)!),
          file: row.episodeFile,
        }));
    } finally {
      store.close();
    }
  };
  const a = rowsOf('a');
  const b = rowsOf('b');
  const c = rowsOf('c');
  assert.equal(a.length, 4);
  const spec = parse(SPEC);
  for (const row of a) {
    const kinds = row.cals.map((cal) => cal.kind).sort();
    assert.deepEqual(kinds, [RANDOMIZATION_KIND, SIM_CALIBRATION_KIND].sort());
    assert.equal(row.cals.find((cal) => cal.kind === RANDOMIZATION_KIND)!.sha256, spec.sha256);
    const drawn = JSON.parse(row.cals.find((cal) => cal.kind === SIM_CALIBRATION_KIND)!.canonicalJson);
    const [layout, repeat] = row.key.split('/').map(Number);
    assert.deepEqual(
      drawn,
      drawWorld(DEFAULT_SIM_CALIBRATION, spec, layout, repeat).calibration,
      'the stored record is the draw for its layout and repeat',
    );
  }
  assert.equal(new Set(a.map((row) => row.cals.find((cal) => cal.kind === SIM_CALIBRATION_KIND)!.sha256)).size, 4);
  assert.deepEqual(
    b.map((row) => [row.key, row.hash, row.cals.map((cal) => cal.sha256).sort()]),
    a.map((row) => [row.key, row.hash, row.cals.map((cal) => cal.sha256).sort()]),
    'the same spec reproduces every rollout',
  );
  assert.ok(
    a.some((row, i) => row.hash !== c[i].hash),
    'randomized worlds are not the plain sim',
  );
  // Each recorded episode names the drawn record it ran on, as the store does (not the sweep's base).
  for (const row of b) {
    const meta = (await readIndexed(row.file!)).metadata.get('tandem.episode')!;
    assert.equal(
      meta.get('calibrations'),
      `sim:${row.cals.find((cal) => cal.kind === SIM_CALIBRATION_KIND)!.sha256}`,
      row.key,
    );
  }
  assert.deepEqual(
    c[0].cals.map((cal) => cal.kind),
    [SIM_CALIBRATION_KIND],
  );
});

test('visual ranges: each (layout, repeat) draws its own look inside them, the same one every time, and never shifts a physics draw', () => {
  const r = parse({ ...SPEC, visual: VISUAL });
  const look = drawLook(r, 2, 1)!;
  assert.deepEqual(drawLook(r, 2, 1), look, 'the same spec, layout and repeat draw the same look');
  assert.deepEqual(drawWorld(DEFAULT_SIM_CALIBRATION, r, 2, 1).look, look, 'the world carries it');
  const keys = new Set<string>();
  for (let layout = 0; layout < 5; layout++) {
    for (let repeat = 0; repeat < 5; repeat++) {
      const l = drawLook(r, layout, repeat)!;
      keys.add(JSON.stringify(l));
      for (const cam of ['cam_high', 'cam_left_wrist', 'cam_right_wrist'] as const) {
        assert.ok(l.cameras![cam]!.positionM.every((x) => x >= -0.02 && x <= 0.02));
        assert.ok(l.cameras![cam]!.rotationRad.every((x) => x >= -0.05 && x <= 0.05));
      }
      assert.ok(l.light!.intensityScale >= 0.6 && l.light!.intensityScale <= 1.4);
      assert.ok(
        l.objectColorScale!.every((x) => x >= 0.6 && x <= 1.4) && l.tableColorScale!.every((x) => x >= 0.7 && x <= 1.3),
      );
    }
  }
  assert.equal(keys.size, 25, 'different layouts and repeats draw different looks');
  assert.notDeepEqual(drawLook(r, 2, 0), look, 'another repeat of the same layout looks different');
  // The physics: the same spec without visual ranges draws the same world, field for field.
  const physicsOnly = parse(SPEC);
  for (let k = 0; k < 10; k++) {
    const a = drawWorld(DEFAULT_SIM_CALIBRATION, r, k, k % 3);
    const b = drawWorld(DEFAULT_SIM_CALIBRATION, physicsOnly, k, k % 3);
    assert.deepEqual(
      { ...a.calibration, name: '' },
      { ...b.calibration, name: '' },
      'visual ranges change no physics number',
    );
    assert.deepEqual(a.placement, b.placement);
  }
  assert.equal(drawLook(physicsOnly, 2, 1), undefined, 'no visual ranges: the default picture');
  // Only the listed fields: light alone leaves the cameras and colours as calibrated.
  const lightOnly = drawLook(parse({ ...SPEC, visual: { lightIntensityScale: [0.5, 0.5] } }), 0, 0)!;
  assert.deepEqual(lightOnly, { light: { intensityScale: 0.5, sunAzimuthRad: 0, sunElevationRad: 0 } });
});

test("sim sweep --randomize with visual ranges stores each rollout's drawn look as its own record, and the physics is the physics-only sweep's", async () => {
  await runSweeps();
  const dir = sweepDir;
  const rowsOf = (data: string) => {
    const store = openStore(join(dir, data, 'tandem.sqlite'));
    try {
      return store
        .listRollouts({ kind: 'sim' })
        .sort((x, y) => x.layoutIndex - y.layoutIndex || x.repeatIndex - y.repeatIndex)
        .map((row) => ({
          layout: row.layoutIndex,
          repeat: row.repeatIndex,
          hash: row.finalStateHash,
          cals: row.calibrationSha256s.map((c) => store.getCalibration(c)!),
        }));
    } finally {
      store.close();
    }
  };
  const v = rowsOf('v');
  const p = rowsOf('a'); // the same physics spec, without visual ranges
  assert.equal(v.length, 4);
  const spec = parse({ ...SPEC, visual: VISUAL });
  for (const [i, row] of v.entries()) {
    const look = row.cals.find((c) => c.kind === SIM_LOOK_KIND);
    assert.ok(look, `rollout ${row.layout}/${row.repeat} links its look`);
    assert.deepEqual(
      JSON.parse(look.canonicalJson),
      drawLook(spec, row.layout, row.repeat),
      'the stored look is the draw for its layout and repeat',
    );
    // Same physics draw, same end state: the look touched only the pictures.
    const sim = (r: typeof row) => r.cals.find((c) => c.kind === SIM_CALIBRATION_KIND)!;
    assert.deepEqual(
      { ...JSON.parse(sim(row).canonicalJson), name: '' },
      { ...JSON.parse(sim(p[i]).canonicalJson), name: '' },
    );
    assert.equal(row.hash, p[i].hash, `rollout ${row.layout}/${row.repeat} ends in the physics-only sweep's state`);
  }
  assert.equal(
    new Set(v.map((row) => row.cals.find((c) => c.kind === SIM_LOOK_KIND)!.sha256)).size,
    4,
    'a look of its own per rollout',
  );
});
