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
import { EPISODE_OUTCOMES, type EndStateSource, type EpisodeOutcome } from '../../src/rollout/episode.js';
import { HoldPolicy } from '../../src/rollout/hold-policy.js';
import { runRigRollout } from '../../src/rollout/rig-rollout.js';
import { runSimRollout } from '../../src/sim/sim-rollout.js';
import { RealtimeClock } from '../../src/rig/clocks.js';
import { PROJECT_ROOT } from '../helpers/cli.js';
import type { ChunkExecutor, StepAction } from '../../src/policy/contract.js';
import type { Clock } from '../../src/rig/contract.js';
import { OnnxPolicy } from '../../src/policy/onnx/onnx-policy.js';
import { createEmulatedYam } from '../../drivers/emulators/in-process.js';
import { startFakeOpenpiServer } from '../policy/openpi-fakes.js';
import { OpenpiClientPolicy } from '../../src/policy/openpi/client.js';
import { buildLinearPolicyModel } from '../policy/onnx-model.js';
import { blackImage } from '../../src/policy/image.js';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

const BIN = { id: 'bin', kind: 'bin', pose: { x: 0, y: -0.3, yawRad: 0 } };

function bottlesLayout(objects: Layout['objects']): Layout {
  return { index: 0, tier: 1, fixtures: [BIN], objects };
}

interface SimEpisodeOptions {
  task?: typeof BOTTLES_IN_THE_BIN;
  seconds?: number;
  onScene?: (s: SimScene) => void;
  cameras?: CameraSource;
  executor?: ChunkExecutor;
  endState?: (scene: SimScene) => EndStateSource;
  /** Wraps the sim clock (to act at a chosen sim time). */
  clock?: (inner: Clock, scene: SimScene) => Clock;
  signal?: AbortSignal;
}

async function simEpisode(layout: Layout, policy: Policy, opts: SimEpisodeOptions = {}) {
  const task = opts.task ?? BOTTLES_IN_THE_BIN;
  const scene = await createScene({ rigModel: yamRigModel(), task, layout, calibration: DEFAULT_SIM_CALIBRATION });
  opts.onScene?.(scene);
  const rig = new SimRig({ scene, safety: { controlPeriodS: 1 / 50 } });
  try {
    return await runEpisode({
      rig,
      executor: opts.executor ?? createOpenLoopExecutor(policy),
      policy: policy.info,
      cameras: opts.cameras,
      privileged: () => scene.privilegedState(),
      clock: opts.clock ? opts.clock(rig.clock, scene) : rig.clock,
      layout,
      task,
      episodeSeconds: opts.seconds ?? 1,
      controlHz: 50,
      seed: 0,
      endState: opts.endState
        ? opts.endState(scene)
        : { endStates: () => scene.endStates(), fingerprint: () => scene.fingerprint() },
      signal: opts.signal,
    });
  } finally {
    scene.free();
  }
}

test('runEpisode drives SimRig through the Rig contract at the control rate and records every step', async () => {
  const e = await simEpisode(
    bottlesLayout([{ id: 'bottle-1', kind: 'bottle-500ml', pose: { x: 0.05, y: 0.1, yawRad: 0 }, posture: 'upright' }]),
    new HoldPolicy(),
    { seconds: 1 },
  );
  assert.equal(e.status, 'valid');
  assert.equal(e.trajectory.steps, 50);
  assert.equal(e.trajectory.timeS[49], 49 / 50);
  // The hold policy asks for the start pose; the applied command and the measured state stay there.
  const last = e.trajectory.position.subarray(49 * STATE_DIM, 50 * STATE_DIM);
  const first = e.trajectory.position.subarray(0, STATE_DIM);
  for (let k = 0; k < STATE_DIM; k++)
    assert.ok(Math.abs(last[k] - first[k]) < 0.05, `entry ${k} drifted ${first[k]} → ${last[k]}`);
  // One inference per 25-row chunk: observations only when the executor asks.
  assert.equal(e.observations, 2);
  assert.deepEqual(
    [e.trajectory.chunkIndex[0], e.trajectory.row[0], e.trajectory.chunkIndex[30], e.trajectory.row[30]],
    [0, 0, 1, 5],
  );
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
  assert.deepEqual(
    e.endStates?.map((s) => s.upright),
    [true, false],
  );
  // Nothing flipped: progress 0 of the one mug that needed it.
  assert.equal(e.progress?.progress, 0);
});

test('a policy timeout aborts the episode, holds the rig and is never scored', async () => {
  const slow: Policy = {
    info: {
      name: 'test:times-out',
      checkpointSha256: '0'.repeat(64),
      actionHorizon: 10,
      cameras: [],
      needsPrivilegedState: false,
    },
    async reset() {},
    async infer(): Promise<ActionChunk> {
      throw new PolicyUnavailableError('The policy server did not answer within 500 ms.', 'timeout');
    },
  };
  const e = await simEpisode(
    bottlesLayout([{ id: 'bottle-1', kind: 'bottle-500ml', pose: { x: 0, y: 0.1, yawRad: 0 }, posture: 'upright' }]),
    slow,
  );
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
    info: {
      name: 'test:looks',
      checkpointSha256: '0'.repeat(64),
      actionHorizon: 5,
      cameras: ['cam_high'],
      needsPrivilegedState: false,
    },
    async reset() {},
    async infer(obs: Observation): Promise<ActionChunk> {
      const actions = new Float32Array(5 * STATE_DIM);
      for (let r = 0; r < 5; r++) actions.set(obs.state, r * STATE_DIM);
      return { horizon: 5, actions };
    },
  };
  const e = await simEpisode(
    bottlesLayout([{ id: 'bottle-1', kind: 'bottle-500ml', pose: { x: 0, y: 0.1, yawRad: 0 }, posture: 'upright' }]),
    looking,
    { cameras },
  );
  assert.equal(e.status, 'invalid');
  assert.match(
    e.reason ?? '',
    /^The cameras failed at \d+\.\d\d s into the episode \(step \d+ of \d+\), so the policy got no images: the renderer process exited/,
  );
  assert.equal(e.trajectory.steps, 5, 'it stopped at the first observation without images');
  assert.equal(e.progress, undefined);
});

test('a simulation that blows up stops the rollout, which is invalid with the reason and unscored', async () => {
  let scene: SimScene | undefined;
  let steps = 0;
  const saboteur: Policy = {
    info: {
      name: 'test:push-through-table',
      checkpointSha256: '0'.repeat(64),
      actionHorizon: 1,
      cameras: [],
      needsPrivilegedState: false,
    },
    async reset() {},
    async infer(obs: Observation): Promise<ActionChunk> {
      // After a few steps, teleport the bottle under the table top, as a solver blow-up would.
      if (++steps === 5) scene!.objects[0].body.setTranslation({ x: 0, y: 0.1, z: -0.2 }, true);
      return { horizon: 1, actions: Float32Array.from(obs.state) };
    },
  };
  const e = await simEpisode(
    bottlesLayout([{ id: 'bottle-1', kind: 'bottle-500ml', pose: { x: 0, y: 0.1, yawRad: 0 }, posture: 'upright' }]),
    saboteur,
    {
      onScene: (s) => (scene = s),
    },
  );
  assert.equal(e.status, 'invalid');
  assert.match(e.reason ?? '', /simulation became unstable: 'bottle-1' went through the table/);
  assert.ok(e.trajectory.steps < 10, `stopped early (${e.trajectory.steps} steps)`);
  assert.equal(e.progress, undefined);
});

test('a layout naming an object the task does not have is an invalid rollout with the reason, not a crash', async () => {
  const layout = bottlesLayout([
    { id: 'teapot-1', kind: 'teapot', pose: { x: 0, y: 0.1, yawRad: 0 }, posture: 'upright' },
  ]);
  const r = await runSimRollout({
    task: BOTTLES_IN_THE_BIN,
    layout,
    policy: new HoldPolicy(),
    seed: 0,
    episodeSeconds: 1,
  });
  assert.equal(r.episode.status, 'invalid');
  assert.match(r.episode.reason ?? '', /names object kind 'teapot'.*bottles-in-the-bin does not have/);
  assert.equal(r.episode.progress, undefined);
});

// ---- The outcome table (docs/rig-model.md, "How an episode ends"): one test per way an episode ends. ----

const ONE_BOTTLE = (): Layout =>
  bottlesLayout([{ id: 'bottle-1', kind: 'bottle-500ml', pose: { x: 0.05, y: 0.1, yawRad: 0 }, posture: 'upright' }]);
const modelDir = mkdtempSync(join(tmpdir(), 'tandem-episode-'));
test.after(() => rmSync(modelDir, { recursive: true, force: true }));

/** A seeded camera-less ONNX model whose bias holds a NaN: every chunk it answers has a NaN at entry 5. */
async function nanOnnxPolicy(): Promise<OnnxPolicy> {
  const path = join(modelDir, 'nan.onnx');
  writeFileSync(path, buildLinearPolicyModel({ horizon: 10, cameras: [], nanBias: true }).bytes);
  return OnnxPolicy.load(path);
}

function assertOutcome(e: { status: string; outcome: EpisodeOutcome }, outcome: EpisodeOutcome): void {
  assert.equal(e.outcome, outcome);
  assert.equal(e.status, EPISODE_OUTCOMES[outcome].status, `${outcome} is ${EPISODE_OUTCOMES[outcome].status}`);
}

test('a policy answering NaN actions (an ONNX model with a NaN bias) ends the sim episode as valid with the policy error recorded, scored as it stood; no NaN reaches the rig', async () => {
  const policy = await nanOnnxPolicy();
  try {
    const e = await simEpisode(ONE_BOTTLE(), policy);
    assertOutcome(e, 'policy-error');
    assert.match(
      e.error ?? '',
      /answered NaN at action row 0, entry 5; no row of that chunk is executed\. \(at step 0 of 50; the rig held from there\)$/,
    );
    assert.equal(e.reason, undefined);
    assert.equal(e.trajectory.steps, 0, 'not one row of the chunk ran');
    assert.deepEqual(e.progress?.counts, { inBin: 0, target: 1 }, 'scored: it counts against the policy');
    assert.deepEqual(
      e.safetyEvents.filter((s) => s.kind === 'non-finite-command'),
      [],
      'the loop stopped it before the safety supervisor had to',
    );
  } finally {
    await policy.close();
  }
});

test('a policy answering chunks of the wrong shape (one arm only) is a policy error before any row runs', async () => {
  const oneArm: Policy = {
    info: {
      name: 'test:one-arm',
      checkpointSha256: '0'.repeat(64),
      actionHorizon: 5,
      cameras: [],
      needsPrivilegedState: false,
    },
    async reset() {},
    async infer(obs: Observation): Promise<ActionChunk> {
      return { horizon: 5, actions: new Float32Array(5 * 7).fill(obs.state[0]) };
    },
  };
  const e = await simEpisode(ONE_BOTTLE(), oneArm);
  assertOutcome(e, 'policy-error');
  assert.match(
    e.error ?? '',
    /^Policy test:one-arm answered 35 action values for horizon 5; expected 5×14\. \(at step 0 of 50/,
  );
  assert.equal(e.trajectory.steps, 0);
  assert.ok(e.progress, 'scored');
});

test('an executor handing the loop a short or non-finite action is stopped by the loop itself, whatever executor it is', async () => {
  const policy = new HoldPolicy();
  const inner = createOpenLoopExecutor(policy);
  const sloppy = (bad: (a: StepAction) => StepAction): ChunkExecutor => ({
    reset: (ctx) => inner.reset(ctx),
    async step(i, tS, observe) {
      const a = await inner.step(i, tS, observe);
      return i === 3 ? bad(a) : a;
    },
    replanNow: () => inner.replanNow(),
  });
  const short = await simEpisode(ONE_BOTTLE(), policy, {
    executor: sloppy((a) => ({ ...a, position: a.position.subarray(0, 13) })),
  });
  assertOutcome(short, 'policy-error');
  assert.match(
    short.error ?? '',
    /^Policy code:hold gave 13 action values for a step; a step needs 14 .* \(at step 3 of 50; the rig held from there\)$/,
  );
  assert.equal(short.trajectory.steps, 3);
  const nan = await simEpisode(ONE_BOTTLE(), policy, {
    executor: sloppy((a) => ({ ...a, position: Float32Array.from(a.position, (v, k) => (k === 9 ? Infinity : v)) })),
  });
  assertOutcome(nan, 'policy-error');
  assert.match(nan.error ?? '', /answered Infinity at action entry 9 \(chunk 0, row 3\); no entry of it was executed/);
  assert.deepEqual(
    nan.safetyEvents.filter((s) => s.kind === 'non-finite-command'),
    [],
  );
});

test('on the emulated real rig a NaN-answering policy (ONNX, and an openpi server) is a policy error: the rig holds, then damps', async () => {
  const layout = ONE_BOTTLE();
  const onnx = await nanOnnxPolicy();
  const server = await startFakeOpenpiServer('nan-actions', 10);
  try {
    const remote = await OpenpiClientPolicy.connect({ url: server.url });
    for (const policy of [onnx, remote]) {
      const clock = new RealtimeClock();
      const y = createEmulatedYam({ clock });
      try {
        // openpi always carries the cameras: black frames, as `tandem rig rollout --blank-cameras` feeds.
        const cameras: CameraSource = {
          capture: async (names) => Object.fromEntries(names.map((n) => [n, blackImage(224, 224)])),
        };
        const r = await runRigRollout({
          rig: y.rig,
          policy,
          cameras,
          task: BOTTLES_IN_THE_BIN,
          layout,
          episodeSeconds: 0.4,
          controlHz: 50,
          seed: 0,
          deadlineMs: 2000,
          clock,
        });
        assertOutcome(r.episode, 'policy-error');
        assert.match(r.episode.error ?? '', /answered NaN at action row (0|1), entry (5|3)/);
        assert.equal(r.episode.trajectory.steps, 0);
        assert.equal(r.finalMode, 'damped');
        assert.equal(r.episode.progress, undefined, 'the real rig has no privileged end state: the operator scores it');
      } finally {
        await y.rig.close();
        for (const d of Object.values(y.devices)) d?.adapter.dispose();
      }
    }
    await remote.close();
  } finally {
    await onnx.close();
    await server.close();
  }
});

test('a rig that refuses to activate (a wrong zero on the emulated YAM) makes the rollout invalid before anything moves', async () => {
  const clock = new RealtimeClock();
  const y = createEmulatedYam({ clock, emulator: { initialPositionsRad: [0, -0.5, 0, 0, 0, 0, 0] } });
  try {
    const r = await runRigRollout({
      rig: y.rig,
      policy: new HoldPolicy(),
      task: BOTTLES_IN_THE_BIN,
      layout: ONE_BOTTLE(),
      episodeSeconds: 0.2,
      controlHz: 50,
      seed: 0,
      deadlineMs: 1000,
      clock,
    });
    assertOutcome(r.episode, 'rig-refused');
    assert.match(
      r.episode.reason ?? '',
      /^The rig could not start the episode: Not activating: the left arm joint 2 reads .* zero offset is probably wrong/,
    );
    assert.equal(r.episode.trajectory.steps, 0);
    assert.equal(r.episode.observations, 0, 'the policy was never asked');
    assert.ok(r.episode.safetyEvents.some((s) => s.kind === 'activate-refused'));
    assert.equal(r.finalMode, 'damped');
  } finally {
    await y.rig.close();
    for (const d of Object.values(y.devices)) d?.adapter.dispose();
  }
});

test('a policy whose reset fails makes the rollout invalid; a reset that times out is an outage (aborted); neither is scored', async () => {
  const failing = (error: Error): Policy => ({
    ...new HoldPolicy(),
    info: new HoldPolicy().info,
    reset: () => Promise.reject(error),
    infer: () => Promise.reject(new Error('never asked')),
  });
  const broken = await simEpisode(ONE_BOTTLE(), failing(new Error('the checkpoint has no normalisation statistics')));
  assertOutcome(broken, 'policy-reset-failed');
  assert.equal(broken.reason, 'The policy could not start the episode: the checkpoint has no normalisation statistics');
  assert.equal(broken.progress, undefined);
  assert.equal(broken.trajectory.steps, 0);
  const slow = await simEpisode(
    ONE_BOTTLE(),
    failing(new PolicyUnavailableError('The policy server did not answer the reset within 500 ms.', 'timeout')),
  );
  assertOutcome(slow, 'policy-unavailable');
  assert.match(slow.reason ?? '', /^policy timeout: The policy server did not answer the reset/);
  assert.equal(slow.progress, undefined);
});

test('an end state that cannot be scored makes a finished episode invalid, not a zero', async () => {
  const e = await simEpisode(ONE_BOTTLE(), new HoldPolicy(), {
    // An operator entry naming an object the layout does not have: the task's rule refuses it.
    endState: () => ({ endStates: () => [{ id: 'bottle-9', region: 'bin' }] }),
  });
  assertOutcome(e, 'scoring-failed');
  assert.match(e.reason ?? '', /^The end state could not be scored: /);
  assert.equal(e.trajectory.steps, 50, 'the episode itself ran');
  assert.equal(e.progress, undefined);
  const thrown = await simEpisode(ONE_BOTTLE(), new HoldPolicy(), {
    endState: () => ({ endStates: () => Promise.reject(new Error('the scene was freed')) }),
  });
  assertOutcome(thrown, 'scoring-failed');
  assert.equal(thrown.reason, 'The end state could not be scored: the scene was freed');
});

/** A clock that calls `act` once, on the first wait at or past `atS` after the first wait (step 0). */
function actingClock(atS: number, act: () => void): (inner: Clock) => Clock {
  return (inner) => {
    let t0: number | undefined;
    let done = false;
    return {
      nowS: () => inner.nowS(),
      passesWhileAwaiting: inner.passesWhileAwaiting,
      async waitUntil(tS: number) {
        t0 ??= tS;
        if (!done && tS >= t0 + atS - 1e-9) {
          done = true;
          act();
        }
        await inner.waitUntil(tS);
      },
    };
  };
}

test('a fault during the settle hold after the last step makes the episode invalid: its end state cannot be trusted', async () => {
  let scene: SimScene | undefined;
  // The first wait at or past 1 s is the first settle cycle (steps wait at 0 … 0.98 s): the sim blows up there.
  const e = await simEpisode(ONE_BOTTLE(), new HoldPolicy(), {
    onScene: (s) => (scene = s),
    clock: actingClock(1, () => scene!.objects[0].body.setTranslation({ x: 0, y: 0.1, z: -0.2 }, true)),
  });
  assertOutcome(e, 'settle-fault');
  assert.match(
    e.reason ?? '',
    /^The rig faulted while the world settled after the last step, so the end state cannot be trusted: The simulation became unstable: 'bottle-1' went through the table/,
  );
  assert.equal(e.trajectory.steps, 50, 'every step ran');
  assert.equal(e.progress, undefined);
  assert.equal(e.endStates, undefined);
});

test('a fault while settling after a policy error is invalid too, and keeps the policy error on record', async () => {
  let scene: SimScene | undefined;
  let calls = 0;
  const failsLater: Policy = {
    info: {
      name: 'test:fails-later',
      checkpointSha256: '0'.repeat(64),
      actionHorizon: 10,
      cameras: [],
      needsPrivilegedState: false,
    },
    async reset() {},
    async infer(obs: Observation): Promise<ActionChunk> {
      const actions = new Float32Array(10 * STATE_DIM);
      for (let r = 0; r < 10; r++) actions.set(obs.state, r * STATE_DIM);
      if (++calls === 2) actions[0] = NaN;
      return { horizon: 10, actions };
    },
  };
  const e = await simEpisode(ONE_BOTTLE(), failsLater, {
    onScene: (s) => (scene = s),
    clock: actingClock(0.21, () => scene!.objects[0].body.setTranslation({ x: 0, y: 0.1, z: -0.2 }, true)),
  });
  assertOutcome(e, 'settle-fault');
  assert.match(e.reason ?? '', /settled after the policy failed/);
  assert.match(e.error ?? '', /at step 10 of 50/);
  assert.equal(e.trajectory.steps, 10);
});

test('an operator stop aborts the episode after the current step, unscored', async () => {
  const stop = new AbortController();
  const e = await simEpisode(ONE_BOTTLE(), new HoldPolicy(), {
    signal: stop.signal,
    clock: actingClock(0.4, () => stop.abort()),
  });
  assertOutcome(e, 'operator-stop');
  assert.equal(e.reason, 'stopped by the operator');
  assert.equal(e.trajectory.steps, 20);
  assert.equal(e.progress, undefined);
});

test('the outcome table in docs/rig-model.md lists every outcome with its status', async () => {
  const { readFileSync } = await import('node:fs');
  const doc = readFileSync(join(PROJECT_ROOT, 'docs', 'rig-model.md'), 'utf8');
  const section = doc.slice(doc.indexOf('## How an episode ends'));
  for (const [outcome, def] of Object.entries(EPISODE_OUTCOMES))
    assert.match(section, new RegExp(`\\| \`${outcome}\` \\| ${def.status} \\|`), outcome);
  assert.equal(
    (section.match(/^\| `[a-z-]+` \|/gm) ?? []).length,
    Object.keys(EPISODE_OUTCOMES).length,
    'and nothing else',
  );
});
