import { test } from 'node:test';
import assert from 'node:assert/strict';
import { yamRigModel } from '../../src/rig/yam.js';
import { STATE_DIM } from '../../src/rig/contract.js';
import { PolicyUnavailableError, type ActionChunk, type Observation, type Policy } from '../../src/policy/contract.js';
import { createOpenLoopExecutor } from '../../src/policy/open-loop-executor.js';
import { BOTTLES_IN_THE_BIN, MUG_FLIPPING } from '../../src/tasks/index.js';
import type { Layout } from '../../src/tasks/types.js';
import { DEFAULT_SIM_CALIBRATION } from '../../src/sim/calibration.js';
import { createScene, type SimScene } from '../../src/sim/scene.js';
import { SimRig } from '../../src/sim/sim-rig.js';
import { runEpisode, type CameraSource } from '../../src/rollout/run-episode.js';
import { HoldPolicy } from '../../src/rollout/hold-policy.js';
import { runSimRollout } from '../../src/sim/sim-rollout.js';

const BIN = { id: 'bin', kind: 'bin', pose: { x: 0, y: -0.3, yawRad: 0 } };

function bottlesLayout(objects: Layout['objects']): Layout {
  return { index: 0, tier: 1, fixtures: [BIN], objects };
}

async function simEpisode(layout: Layout, policy: Policy, opts: { task?: typeof BOTTLES_IN_THE_BIN; seconds?: number; onScene?: (s: SimScene) => void; cameras?: CameraSource } = {}) {
  const task = opts.task ?? BOTTLES_IN_THE_BIN;
  const scene = await createScene({ rigModel: yamRigModel(), task, layout, calibration: DEFAULT_SIM_CALIBRATION });
  opts.onScene?.(scene);
  const rig = new SimRig({ scene, safety: { controlPeriodS: 1 / 50 } });
  try {
    return await runEpisode({
      rig,
      executor: createOpenLoopExecutor(policy),
      policy: policy.info,
      cameras: opts.cameras,
      privileged: () => scene.privilegedState(),
      clock: rig.clock,
      layout,
      task,
      episodeSeconds: opts.seconds ?? 1,
      controlHz: 50,
      seed: 0,
      endState: { endStates: () => scene.endStates(), fingerprint: () => scene.fingerprint() },
    });
  } finally {
    scene.free();
  }
}

test('runEpisode drives SimRig through the Rig contract at the control rate and records every step', async () => {
  const e = await simEpisode(bottlesLayout([{ id: 'bottle-1', kind: 'bottle-500ml', pose: { x: 0.05, y: 0.1, yawRad: 0 }, posture: 'upright' }]), new HoldPolicy(), { seconds: 1 });
  assert.equal(e.status, 'valid');
  assert.equal(e.trajectory.steps, 50);
  assert.equal(e.trajectory.timeS[49], 49 / 50);
  // The hold policy asks for the start pose; the applied command and the measured state stay there.
  const last = e.trajectory.position.subarray(49 * STATE_DIM, 50 * STATE_DIM);
  const first = e.trajectory.position.subarray(0, STATE_DIM);
  for (let k = 0; k < STATE_DIM; k++) assert.ok(Math.abs(last[k] - first[k]) < 0.05, `entry ${k} drifted ${first[k]} → ${last[k]}`);
  // One inference per 25-row chunk: observations only when the executor asks.
  assert.equal(e.observations, 2);
  assert.deepEqual([e.trajectory.chunkIndex[0], e.trajectory.row[0], e.trajectory.chunkIndex[30], e.trajectory.row[30]], [0, 0, 1, 5]);
  assert.deepEqual(e.progress?.counts, { inBin: 0, target: 1 });
  assert.match(e.finalStateHash, /^[0-9a-f]{64}$/);
});

test('task progress is scored from the sim end state: a bottle resting in the bin counts, one on the table does not', async () => {
  const e = await simEpisode(
    bottlesLayout([
      { id: 'bottle-1', kind: 'bottle-500ml', pose: { x: 0, y: -0.3, yawRad: 0 }, posture: 'lying', inFixture: 'bin' },
      { id: 'bottle-2', kind: 'bottle-500ml', pose: { x: 0.05, y: 0.15, yawRad: 0 }, posture: 'upright' },
    ]),
    new HoldPolicy(),
  );
  assert.equal(e.status, 'valid');
  assert.deepEqual(e.endStates, [
    { id: 'bottle-1', region: 'bin', upright: false },
    { id: 'bottle-2', upright: true },
  ]);
  assert.equal(e.progress?.progress, 0.5);
  assert.deepEqual(e.progress?.counts, { inBin: 1, target: 2 });
});

test('mugs are upright only within the tilt threshold: a lying mug is not, a standing one is', async () => {
  const layout: Layout = {
    index: 0,
    tier: 2,
    fixtures: [],
    objects: [
      { id: 'mug-1', kind: 'mug-350ml', pose: { x: 0.05, y: 0.15, yawRad: 0 }, posture: 'upright' },
      { id: 'mug-2', kind: 'mug-350ml', pose: { x: 0.05, y: -0.15, yawRad: 0.3 }, posture: 'lying' },
    ],
  };
  const e = await simEpisode(layout, new HoldPolicy(), { task: MUG_FLIPPING });
  assert.equal(e.status, 'valid');
  assert.deepEqual(e.endStates?.map((s) => s.upright), [true, false]);
  // Nothing flipped: progress 0 of the one mug that needed it.
  assert.equal(e.progress?.progress, 0);
});

test('a policy timeout aborts the episode, holds the rig and is never scored', async () => {
  const slow: Policy = {
    info: { name: 'test:times-out', checkpointSha256: '0'.repeat(64), actionHorizon: 10, cameras: [], needsPrivilegedState: false },
    async reset() {},
    async infer(): Promise<ActionChunk> {
      throw new PolicyUnavailableError('The policy server did not answer within 500 ms.', 'timeout');
    },
  };
  const e = await simEpisode(bottlesLayout([{ id: 'bottle-1', kind: 'bottle-500ml', pose: { x: 0, y: 0.1, yawRad: 0 }, posture: 'upright' }]), slow);
  assert.equal(e.status, 'aborted');
  assert.match(e.reason ?? '', /^policy timeout: /);
  assert.equal(e.progress, undefined);
  assert.equal(e.endStates, undefined);
});

test('cameras that fail mid-episode make the rollout invalid (not a scored policy failure)', async () => {
  let captures = 0;
  const cameras: CameraSource = {
    async capture() {
      captures += 1;
      if (captures > 1) throw new Error('the renderer process exited');
      return { cam_high: { width: 2, height: 2, data: new Uint8Array(12) } };
    },
  };
  const looking: Policy = {
    info: { name: 'test:looks', checkpointSha256: '0'.repeat(64), actionHorizon: 5, cameras: ['cam_high'], needsPrivilegedState: false },
    async reset() {},
    async infer(obs: Observation): Promise<ActionChunk> {
      const actions = new Float32Array(5 * STATE_DIM);
      for (let r = 0; r < 5; r++) actions.set(obs.state, r * STATE_DIM);
      return { horizon: 5, actions };
    },
  };
  const e = await simEpisode(bottlesLayout([{ id: 'bottle-1', kind: 'bottle-500ml', pose: { x: 0, y: 0.1, yawRad: 0 }, posture: 'upright' }]), looking, { cameras });
  assert.equal(e.status, 'invalid');
  assert.match(e.reason ?? '', /^The cameras failed, so the policy got no images: the renderer process exited/);
  assert.equal(e.trajectory.steps, 5, 'it stopped at the first observation without images');
  assert.equal(e.progress, undefined);
});

test('a simulation that blows up stops the rollout, which is invalid with the reason and unscored', async () => {
  let scene: SimScene | undefined;
  let steps = 0;
  const saboteur: Policy = {
    info: { name: 'test:push-through-table', checkpointSha256: '0'.repeat(64), actionHorizon: 1, cameras: [], needsPrivilegedState: false },
    async reset() {},
    async infer(obs: Observation): Promise<ActionChunk> {
      // After a few steps, teleport the bottle under the table top, as a solver blow-up would.
      if (++steps === 5) scene!.objects[0].body.setTranslation({ x: 0, y: 0.1, z: -0.2 }, true);
      return { horizon: 1, actions: Float32Array.from(obs.state) };
    },
  };
  const e = await simEpisode(bottlesLayout([{ id: 'bottle-1', kind: 'bottle-500ml', pose: { x: 0, y: 0.1, yawRad: 0 }, posture: 'upright' }]), saboteur, {
    onScene: (s) => (scene = s),
  });
  assert.equal(e.status, 'invalid');
  assert.match(e.reason ?? '', /simulation became unstable: 'bottle-1' went through the table/);
  assert.ok(e.trajectory.steps < 10, `stopped early (${e.trajectory.steps} steps)`);
  assert.equal(e.progress, undefined);
});

test('a layout naming an object the task does not have is an invalid rollout with the reason, not a crash', async () => {
  const layout = bottlesLayout([{ id: 'teapot-1', kind: 'teapot', pose: { x: 0, y: 0.1, yawRad: 0 }, posture: 'upright' }]);
  const r = await runSimRollout({ task: BOTTLES_IN_THE_BIN, layout, policy: new HoldPolicy(), seed: 0, episodeSeconds: 1 });
  assert.equal(r.episode.status, 'invalid');
  assert.match(r.episode.reason ?? '', /names object kind 'teapot'.*bottles-in-the-bin does not have/);
  assert.equal(r.episode.progress, undefined);
});
