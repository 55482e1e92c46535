import { test } from 'node:test';
import assert from 'node:assert/strict';
import { ArmFeedForward, ArmGravityModel, VENDOR_FEED_FORWARD } from '../../src/rig/gravity.js';
import { yamRigModel } from '../../src/rig/yam.js';
import { createScene } from '../../src/sim/scene.js';
import { DEFAULT_SIM_CALIBRATION } from '../../src/sim/calibration.js';
import { sampleLayoutSet } from '../../src/layouts/index.js';
import { getTask } from '../../src/tasks/index.js';
import { createRng } from '../../src/layouts/random.js';

const model = yamRigModel();

test("the rigs' gravity model gives the torques the sim's own bodies weigh, at random poses and openings", async () => {
  // The sim measures its gravity from Rapier's bodies (masses and centres as built); the model
  // from forward kinematics alone. They are independent computations of one quantity.
  const set = sampleLayoutSet({ task: 'bottles-in-the-bin', tiers: [1], perTier: 1, seed: 3 });
  const rng = createRng(11);
  for (let trial = 0; trial < 6; trial++) {
    const q = model.arms[0].joints.map((j) => rng.uniform(j.minRad, j.maxRad));
    const opening = rng.uniform(0, 1);
    const start = [...q, opening, ...q, opening];
    const scene = await createScene({
      rigModel: model,
      task: getTask('bottles-in-the-bin'),
      layout: set.layouts[0],
      calibration: DEFAULT_SIM_CALIBRATION,
      startPosition: start,
    });
    for (let a = 0; a < 2; a++) {
      const sim = scene.arms[a].gravityTorque(new Float64Array(6));
      const mine = new ArmGravityModel(model.arms[a]).torques(q, opening, new Float64Array(6));
      for (let j = 0; j < 6; j++)
        assert.ok(
          Math.abs(sim[j] - mine[j]) < 1e-6,
          `pose ${trial} arm ${a} joint ${j + 1}: sim ${sim[j]} vs model ${mine[j]}`,
        );
    }
    scene.free();
  }
});

test('gravity at home: the folded arm loads joints 2-4 (shoulder, elbow, wrist pitch) and not the vertical joint 1', () => {
  const t = new ArmGravityModel(model.arms[0]).torques([0, 0, 0, 0, 0, 0], 1, new Float64Array(6));
  assert.ok(Math.abs(t[0]) < 1e-9, `joint 1 carries no gravity about a vertical axis, got ${t[0]}`);
  assert.ok(Math.abs(t[2]) > 1, `the elbow holds the forearm and gripper, got ${t[2]}`);
});

test('feed-forward: gravity × the vendor factors, Coulomb by velocity sign outside a deadband, clamped to the motor', () => {
  const arm = model.arms[0];
  const ff = new ArmFeedForward(arm);
  const q = [0, 1, 1, 0, 0, 0, 0.5];
  const g = new ArmGravityModel(arm).torques(q.slice(0, 6), 0.5, new Float64Array(6));
  const still = new Float64Array(6);
  assert.equal(ff.compute(q, [0, 0, 0, 0, 0, 0, 0], 0, still), undefined);
  const factor = [1.0, 1.1, 1.1, 1.2, 1.0, 1.0];
  for (let j = 0; j < 6; j++) assert.ok(Math.abs(still[j] - g[j] * factor[j]) < 1e-9, `joint ${j + 1}`);
  const moving = new Float64Array(6);
  ff.compute(q, [0.5, -0.5, 0.01, 0.5, 0, 0, 0], 0, moving);
  assert.ok(Math.abs(moving[0] - (still[0] + 0.3)) < 1e-9, 'joint 1 moving + gets +0.3 N·m');
  assert.ok(Math.abs(moving[1] - (still[1] - 0.3)) < 1e-9, 'joint 2 moving − gets −0.3 N·m');
  assert.ok(Math.abs(moving[2] - still[2]) < 1e-9, 'joint 3 inside the deadband gets none');
  assert.ok(Math.abs(moving[3] - (still[3] + 0.06)) < 1e-9, 'joint 4 gets its 0.06 N·m');
});

test('feed-forward: a model torque beyond what the motor may deliver is refused in words, nothing sent', () => {
  // A 10 kg payload configured at the palm: the reaching shoulder would need ≈ 45 N·m.
  const ff = new ArmFeedForward(model.arms[0], VENDOR_FEED_FORWARD, 10);
  const out = new Float64Array(6).fill(7);
  const why = ff.compute([0, 2, 1, 0, 0, 0, 0], [0, 0, 0, 0, 0, 0, 0], 0, out);
  assert.match(why ?? '', /beyond the \d+ N·m it may deliver/);
  assert.deepEqual(Array.from(out), [0, 0, 0, 0, 0, 0]);
  assert.match(ff.compute([NaN, 0, 0, 0, 0, 0, 0], [0, 0, 0, 0, 0, 0, 0], 0, out) ?? '', /no valid position/);
});
