import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { runTandemProcess, runTandem } from '../helpers/cli.js';
import { describeRigContract } from '../rig/contract-suite.js';
import { sampleLayoutSet, serializeLayoutSet } from '../../src/layouts/layout-set.js';
import { yamRigModel } from '../../src/rig/yam.js';
import { BOTTLES_IN_THE_BIN } from '../../src/tasks/index.js';
import { BottlesPolicy } from '../../src/policy/code/index.js';
import {
  DEFAULT_SIM_CALIBRATION,
  MUJOCO_SCENE_VERSION,
  simCalibrationHash,
  simCalibrationJson,
  withCalibration,
  withEngine,
} from '../../src/sim/calibration.js';
import { parseSimCalibration } from '../../src/sim/calibration-file.js';
import { createEngineScene } from '../../src/sim/engine-scene.js';
import { runSimRollout } from '../../src/sim/sim-rollout.js';
import { SimRig } from '../../src/sim/sim-rig.js';
import { simRigUnderTest } from './sim-rig-under-test.js';

const MUJOCO = withEngine(DEFAULT_SIM_CALIBRATION, 'mujoco');
const BIN_ONLY = {
  index: 0,
  tier: 1,
  fixtures: [{ id: 'bin', kind: 'bin', pose: { x: 0, y: -0.3, yawRad: 0 } }],
  objects: [],
};
/** A reach forward on both arms: the shoulders and elbows carry the arm's weight. */
const REACH = [0.2, 0.9, 0.9, -0.3, 0.2, 0, 0.5, -0.2, 0.9, 0.9, -0.3, -0.2, 0, 0.5];

test('the engine is a field of the sim calibration record: absent is Rapier with the id stored rollouts carry, mujoco is another id, anything else is one sentence', () => {
  const plain = simCalibrationHash(DEFAULT_SIM_CALIBRATION);
  assert.equal(
    simCalibrationHash(withEngine(DEFAULT_SIM_CALIBRATION, 'rapier')),
    plain,
    'rapier leaves the record as it was',
  );
  assert.equal(simCalibrationHash(withEngine(MUJOCO, 'rapier')), plain, 'and takes a mujoco record back to it');
  assert.ok(!simCalibrationJson(DEFAULT_SIM_CALIBRATION).includes('engine'));
  assert.notEqual(simCalibrationHash(MUJOCO), plain);
  assert.equal(MUJOCO.engineVersion, MUJOCO_SCENE_VERSION, 'a mujoco record names the MuJoCo scene it runs');
  const saved = simCalibrationJson(MUJOCO);
  assert.equal(
    simCalibrationHash(parseSimCalibration(saved, 'mujoco.json')),
    simCalibrationHash(MUJOCO),
    'a saved mujoco record reads back as itself',
  );
  assert.throws(() => parseSimCalibration(saved.replace('"mujoco"', '"bullet"'), 'c.json'), {
    message: "The sim calibration file c.json: field 'engine' must be 'rapier' or 'mujoco', not 'bullet'.",
  });
  const { engineVersion: _, ...sceneOne } = MUJOCO;
  assert.throws(() => parseSimCalibration(simCalibrationJson(sceneOne), 'old.json'), {
    message: `The sim calibration file old.json: engineVersion must be ${MUJOCO_SCENE_VERSION} with engine 'mujoco', not absent: this tandem builds MuJoCo scene ${MUJOCO_SCENE_VERSION} only (scene 1's grasps did not hold); pass --engine mujoco or set the field.`,
  });
  assert.throws(
    () =>
      parseSimCalibration(simCalibrationJson(withCalibration(DEFAULT_SIM_CALIBRATION, { engineVersion: 2 })), 'r.json'),
    {
      message:
        "The sim calibration file r.json: engineVersion names a MuJoCo scene version; leave it out for engine 'rapier'.",
    },
  );
  assert.throws(() => parseSimCalibration(simCalibrationJson({ ...MUJOCO, armJoints: 'multibody' }), 'c.json'), {
    message:
      /^The sim calibration file c\.json: armJoints 'multibody' is a Rapier arm model that the mujoco engine cannot represent [^\n]*\.$/,
  });
});

test('a MuJoCo rollout runs the one rollout loop, and the same seed gives the same final state twice in this process and in another; the Rapier run of it differs', async () => {
  const set = sampleLayoutSet({ task: BOTTLES_IN_THE_BIN.id, tiers: [1], perTier: 1, seed: 11 });
  const dir = mkdtempSync(join(tmpdir(), 'tandem-mujoco-'));
  try {
    const file = join(dir, 'bottles.json');
    writeFileSync(file, serializeLayoutSet(set));
    const args = (engine: string) => [
      'sim',
      'rollout',
      '--layouts',
      file,
      '--layout',
      '0',
      '--policy',
      'code:bottles-in-the-bin',
      '--seconds',
      '2',
      '--seed',
      '3',
      '--engine',
      engine,
      '--json',
    ];
    // A child process: the final state must not depend on the process that ran it (one is enough to
    // tell: a second child would be a second fresh process like the first, at ≈ 2 CPU-s more).
    const children = Promise.all([runTandemProcess(args('mujoco')), runTandem(args('rapier'))]);
    const here = await runSimRollout({
      task: BOTTLES_IN_THE_BIN,
      layout: set.layouts[0],
      policy: new BottlesPolicy(),
      seed: 3,
      episodeSeconds: 2,
      calibration: MUJOCO,
    });
    const again = await runSimRollout({
      task: BOTTLES_IN_THE_BIN,
      layout: set.layouts[0],
      policy: new BottlesPolicy(),
      seed: 3,
      episodeSeconds: 2,
      calibration: MUJOCO,
    });
    assert.equal(here.episode.status, 'valid', here.episode.reason);
    assert.equal(here.calibrationSha256, simCalibrationHash(MUJOCO));
    // The policy moved the arms: the trajectory is not a hold.
    const t = here.episode.trajectory;
    const moved = Math.abs(t.position[(t.steps - 1) * 14 + 1] - t.position[1]);
    assert.ok(moved > 0.05, `shoulder moved ${moved} rad`);
    assert.equal(again.episode.finalStateHash, here.episode.finalStateHash, 'bit-identical in one process');
    const [a, r] = await children;
    for (const c of [a, r]) assert.equal(c.code, 0, c.stderr);
    const [ja, jr] = [a, r].map((c) => JSON.parse(c.stdout));
    assert.equal(ja.simCalibration, simCalibrationHash(MUJOCO));
    assert.equal(
      jr.simCalibration,
      simCalibrationHash(DEFAULT_SIM_CALIBRATION),
      '--engine rapier is the default record',
    );
    assert.equal(ja.finalStateHash, here.episode.finalStateHash, 'bit-identical across processes');
    assert.notEqual(jr.finalStateHash, ja.finalStateHash, 'the other engine is other physics');
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});

test("on MuJoCo the code policy's grasps hold: the tier-1 bottle goes into the bin, as on Rapier", async () => {
  // A clamped finger servo kept its kv in MuJoCo's implicit step and soft default contacts let the
  // 15 N squeeze sink the fingers through the bottle: 0 progress on every layout before.
  const set = sampleLayoutSet({ task: BOTTLES_IN_THE_BIN.id, tiers: [1], perTier: 1, seed: 11 });
  const r = await runSimRollout({
    task: BOTTLES_IN_THE_BIN,
    layout: set.layouts[0],
    policy: new BottlesPolicy(),
    seed: 3,
    episodeSeconds: 30,
    calibration: MUJOCO,
  });
  assert.equal(r.episode.status, 'valid', r.episode.reason);
  assert.equal(r.episode.progress?.progress, 1, r.episode.progress?.summary);
});

test('bad engine input is one sentence before anything runs', async () => {
  const unknown = await runTandem(['sim', 'calibration', '--engine', 'bullet']);
  assert.equal(unknown.code, 2);
  assert.equal(unknown.stdout, '');
  assert.equal(unknown.stderr, "--engine must be 'rapier' or 'mujoco', not 'bullet'.\n");
  const dir = mkdtempSync(join(tmpdir(), 'tandem-mujoco-'));
  try {
    const file = join(dir, 'multibody.json');
    writeFileSync(file, JSON.stringify(withCalibration(DEFAULT_SIM_CALIBRATION, { armJoints: 'multibody' })));
    const r = await runTandem(['sim', 'calibration', '--calibration', file, '--engine', 'mujoco']);
    assert.equal(r.code, 2);
    assert.match(
      r.stderr,
      /^With --engine mujoco, the sim calibration \S+multibody\.json: armJoints 'multibody' is a Rapier arm model that the mujoco engine cannot represent [^\n]*\.\n$/,
    );
    const ok = await runTandem(['sim', 'calibration', '--engine', 'mujoco']);
    assert.equal(ok.code, 0, ok.stderr);
    assert.equal(JSON.parse(ok.stdout).engine, 'mujoco');
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});

test("MuJoCo arms under the MIT law: with the driver's gravity feed-forward they hold a reach; without it they sag as far as the Rapier arms do", async () => {
  const hold = async (calibration: typeof MUJOCO, gravityCompensation: boolean): Promise<Float64Array> => {
    const scene = await createEngineScene({
      rigModel: yamRigModel(),
      task: BOTTLES_IN_THE_BIN,
      layout: BIN_ONLY,
      calibration,
      startPosition: REACH,
    });
    try {
      const rig = new SimRig({ scene, gravityCompensation });
      await rig.configure();
      await rig.activate();
      const cmd = { position: Float64Array.from(REACH) };
      for (let k = 1; k <= 50; k++) {
        rig.write(cmd);
        await rig.clock.waitUntil(k * 0.02);
        rig.tick();
      }
      assert.deepEqual(rig.read().faults, []);
      return Float64Array.from(rig.read().position);
    } finally {
      scene.free();
    }
  };
  const held = await hold(MUJOCO, true);
  const err = (q: Float64Array) => Math.max(...REACH.map((r, i) => (i % 7 === 6 ? 0 : Math.abs(q[i] - r))));
  assert.ok(err(held) < 0.01, `held within ${err(held)} rad`);
  const [sagM, sagR] = [await hold(MUJOCO, false), await hold(DEFAULT_SIM_CALIBRATION, false)];
  assert.ok(err(sagM) > 0.03, `without feed-forward the reach sags (${err(sagM)} rad)`);
  const apart = Math.max(...REACH.map((_, i) => (i % 7 === 6 ? 0 : Math.abs(sagM[i] - sagR[i]))));
  assert.ok(apart < 0.01, `MuJoCo and Rapier sag alike (${apart} rad apart)`);
});

// The same contract suite as the Rapier SimRig, the mirror and the CAN rig.
describeRigContract('SimRig on MuJoCo', async () => {
  const scene = await createEngineScene({
    rigModel: yamRigModel(),
    task: BOTTLES_IN_THE_BIN,
    layout: BIN_ONLY,
    calibration: MUJOCO,
    startPosition: [0, 0.8, 0.8, 0, 0, 0, 0.5, 0, 0.8, 0.8, 0, 0, 0, 0.5],
  });
  return simRigUnderTest(scene);
});
