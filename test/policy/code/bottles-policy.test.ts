import { test } from 'node:test';
import assert from 'node:assert/strict';
import { yamRigModel } from '../../../src/rig/yam.js';
import { STATE_DIM } from '../../../src/rig/contract.js';
import type { Observation, PrivilegedState } from '../../../src/policy/contract.js';
import { BottlesPolicy, codePolicyFromSpec, PrivilegedStateRequiredError } from '../../../src/policy/code/index.js';
import { DEFAULT_MOTION_LIMITS } from '../../../src/policy/code/motion.js';

const rigModel = yamRigModel();
const controlHz = 50;
const ctx = { seed: 1, prompt: 'put all the bottles in the bin', rigModel, controlHz };
const home = new Float32Array([0, 0, 0, 0, 0, 0, 1, 0, 0, 0, 0, 0, 0, 1]);
const scene = (bottleXY: readonly [number, number]): PrivilegedState => ({
  objects: [
    { id: 'bottle-1', kind: 'bottle-500ml', position: [bottleXY[0], bottleXY[1], 0], quaternion: [0, 0, 0, 1] },
  ],
  fixtures: [{ id: 'bin', kind: 'bin', position: [-0.03, -0.3, 0], quaternion: [0, 0, 0, 1] }],
});

/** Runs the policy against a rig that tracks every target exactly, for `chunks` chunks. */
async function drive(
  policy: BottlesPolicy,
  chunks: number,
  privileged: (i: number) => PrivilegedState,
): Promise<Float32Array[]> {
  await policy.reset(ctx);
  let state = Float32Array.from(home);
  const out: Float32Array[] = [];
  for (let i = 0; i < chunks; i++) {
    const obs: Observation = {
      timeS: (i * policy.info.actionHorizon) / controlHz,
      state,
      images: {},
      prompt: ctx.prompt,
      privileged: privileged(i),
    };
    const chunk = await policy.infer(obs);
    assert.equal(chunk.actions.length, chunk.horizon * STATE_DIM);
    out.push(chunk.actions);
    state = chunk.actions.slice((chunk.horizon - 1) * STATE_DIM);
  }
  return out;
}

test('the spec code:bottles-in-the-bin opens the policy; it needs privileged state and no cameras', () => {
  const p = codePolicyFromSpec('code:bottles-in-the-bin');
  assert.ok(p);
  assert.equal(p.info.name, 'code:bottles-in-the-bin');
  assert.equal(p.info.needsPrivilegedState, true);
  assert.deepEqual(p.info.cameras, []);
  assert.match(p.info.checkpointSha256, /^[0-9a-f]{64}$/);
  assert.equal(codePolicyFromSpec('code:no-such-policy'), undefined);
});

test('without privileged state it refuses in words an operator understands', async () => {
  const p = new BottlesPolicy();
  await p.reset(ctx);
  await assert.rejects(p.infer({ timeS: 0, state: home, images: {}, prompt: ctx.prompt }), (e: unknown) => {
    assert.ok(e instanceof PrivilegedStateRequiredError);
    assert.match(
      (e as Error).message,
      /code policies read object poses the real rig cannot see; run them in the sim, or rehearse on the emulated cell/,
    );
    return true;
  });
});

test('objects it does not know are refused by name', async () => {
  const p = new BottlesPolicy();
  await p.reset(ctx);
  const privileged: PrivilegedState = {
    objects: [{ id: 'mug-1', kind: 'mug-350ml', position: [0, 0, 0], quaternion: [0, 0, 0, 1] }],
    fixtures: [],
  };
  await assert.rejects(
    p.infer({ timeS: 0, state: home, images: {}, prompt: '', privileged }),
    /object 'mug-1' is a 'mug-350ml'/,
  );
});

test('the same scene gives the same actions (deterministic), within joint limits and the speed budget', async () => {
  const a = await drive(new BottlesPolicy(), 60, () => scene([-0.15, -0.05]));
  const b = await drive(new BottlesPolicy(), 60, () => scene([-0.15, -0.05]));
  assert.deepEqual(a, b);
  const rows = a.flatMap((c) =>
    Array.from({ length: c.length / STATE_DIM }, (_, r) => c.subarray(r * STATE_DIM, (r + 1) * STATE_DIM)),
  );
  let moved = 0;
  for (let r = 1; r < rows.length; r++) {
    for (let arm = 0; arm < 2; arm++) {
      for (let j = 0; j < 6; j++) {
        const spec = rigModel.arms[arm].joints[j];
        const v = rows[r][arm * 7 + j];
        assert.ok(v >= spec.minRad - 1e-6 && v <= spec.maxRad + 1e-6, `joint ${j + 1} within limits`);
        const speed = Math.abs(v - rows[r - 1][arm * 7 + j]) * controlHz;
        // Minimum-jerk peaks at the budget; allow float rounding of the Float32 rows.
        assert.ok(
          speed <= DEFAULT_MOTION_LIMITS.freeSpeedRadS * 1.02,
          `joint speed ${speed.toFixed(2)} rad/s within the budget`,
        );
        if (speed > 0.01) moved += 1;
      }
      const g = rows[r][arm * 7 + 6];
      assert.ok(g >= 0 && g <= 1, 'gripper within 0..1');
    }
  }
  assert.ok(moved > 100, 'the policy actually moves');
  // An arm closes its gripper at some point: it grasps. (Here the left arm, across the bottle's
  // body: the nearer right arm reaches only its neck, and neck grasps come last.)
  assert.ok(rows.some((row) => row[6] < 0.05 || row[13] < 0.05));
});

test('a bottle that moves before the grasp makes the policy replan from the new pose', async () => {
  const p = new BottlesPolicy();
  // The bottle jumps 8 cm two chunks after the pick is planned; the policy notices and replans.
  let pickChunk: number | undefined;
  await drive(p, 60, (i) => {
    if (pickChunk === undefined && p.log.some((l) => /pick bottle-1/.test(l))) pickChunk = i;
    return scene(pickChunk === undefined || i < pickChunk + 2 ? [-0.15, -0.05] : [-0.15, -0.13]);
  });
  assert.ok(
    p.log.some((l) => /bottle-1 moved before the grasp/.test(l)),
    p.log.join('\n'),
  );
  const picks = p.log.filter((l) => /pick bottle-1/.test(l));
  assert.ok(picks.length >= 2, p.log.join('\n'));
});
