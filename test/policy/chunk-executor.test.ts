import { test } from 'node:test';
import assert from 'node:assert/strict';
import {
  createChunkExecutor,
  parseChunkExecution,
  type ChunkExecutionOptions,
} from '../../src/policy/chunk-executor.js';
import { createOpenLoopExecutor } from '../../src/policy/open-loop-executor.js';
import { InvalidActionError } from '../../src/policy/actions.js';
import {
  PolicyUnavailableError,
  type ActionChunk,
  type ChunkExecutor,
  type EpisodeContext,
  type Observation,
  type Policy,
  type StepAction,
} from '../../src/policy/contract.js';
import { yamRigModel } from '../../src/rig/yam.js';

const HZ = 50;
const ctx: EpisodeContext = { seed: 1, prompt: 'test', rigModel: yamRigModel(), controlHz: HZ };

/**
 * A policy whose every action says where it came from: entry j of row r of the chunk inferred
 * from the observation of step s is s·100 + r + j/100. Latency per call from `delayMs`.
 */
function tracingPolicy(
  horizon: number,
  delayMs: (call: number) => number = () => 0,
  mutate?: (call: number, a: Float32Array) => void,
): Policy & { calls: number[] } {
  const calls: number[] = [];
  return {
    calls,
    info: { name: 'tracing', checkpointSha256: 'x', actionHorizon: horizon, cameras: [], needsPrivilegedState: false },
    async reset() {},
    async infer(obs: Observation): Promise<ActionChunk> {
      const call = calls.length;
      const step = Math.round(obs.timeS * HZ);
      calls.push(step);
      const actions = new Float32Array(horizon * 14);
      for (let r = 0; r < horizon; r++) for (let j = 0; j < 14; j++) actions[r * 14 + j] = step * 100 + r + j / 100;
      mutate?.(call, actions);
      const d = delayMs(call);
      if (d > 0) await new Promise((res) => setTimeout(res, d));
      return { horizon, actions };
    },
  };
}

const observeAt = (step: number) => async (): Promise<Observation> => ({
  timeS: step / HZ,
  state: new Float32Array(14),
  images: {},
  prompt: 'test',
});

async function run(exec: ChunkExecutor, steps: number, betweenSteps?: () => Promise<void>): Promise<StepAction[]> {
  await exec.reset(ctx);
  const out: StepAction[] = [];
  for (let s = 0; s < steps; s++) {
    await betweenSteps?.();
    const a = await exec.step(s, s / HZ, observeAt(s));
    out.push({ ...a, position: Float32Array.from(a.position) });
  }
  return out;
}

/** Decodes which observation step and row produced an action (see tracingPolicy). */
const origin = (a: StepAction) => ({ obsStep: Math.floor(a.position[0] / 100), row: Math.round(a.position[0] % 100) });

test('without prefetch the executor is the openpi reference: infer, run the whole chunk, infer again', async () => {
  const ref = await run(createOpenLoopExecutor(tracingPolicy(8)), 30);
  const ours = await run(createChunkExecutor(tracingPolicy(8)), 30);
  assert.deepEqual(ours, ref);
  assert.deepEqual(
    ours.slice(7, 10).map((a) => [a.chunkIndex, a.row]),
    [
      [0, 7],
      [1, 0],
      [1, 1],
    ],
  );
  // Executing 5 of 8 rows (the ALOHA example runs 25 of 50) also matches.
  assert.deepEqual(
    await run(createChunkExecutor(tracingPolicy(8), { replanEverySteps: 5 }), 30),
    await run(createOpenLoopExecutor(tracingPolicy(8), { rowsPerChunk: 5 }), 30),
  );
});

test('with prefetch the next observation is taken p steps early and the chunk takes over at a fixed step, time-aligned', async () => {
  const policy = tracingPolicy(10);
  const exec = createChunkExecutor(policy, { prefetchSteps: 3, replanEverySteps: 5 });
  // Each control period passes through the event loop, as a real or sim clock's wait does.
  const actions = await run(exec, 20, () => new Promise((r) => setImmediate(r)));
  assert.deepEqual(policy.calls, [0, 2, 7, 12, 17]);
  for (const [s, a] of actions.entries()) {
    const expectChunk = Math.floor(s / 5);
    const obsStep = expectChunk === 0 ? 0 : expectChunk * 5 - 3;
    assert.equal(a.chunkIndex, expectChunk, `step ${s}`);
    assert.equal(a.row, s - obsStep, `step ${s}`);
    assert.deepEqual(origin(a), { obsStep, row: s - obsStep });
  }
  assert.deepEqual(
    exec.chunks().map((c) => [c.chunkIndex, c.observedStep, c.adoptedStep]),
    [
      [0, 0, 0],
      [1, 2, 5],
      [2, 7, 10],
      [3, 12, 15],
    ],
  );
  // A prefetched answer is there before its takeover step; without prefetch it never can be.
  assert.deepEqual(
    exec.chunks().map((c) => c.readyAtTakeover),
    [false, true, true, true],
  );
  const reference = createChunkExecutor(tracingPolicy(10), { replanEverySteps: 5 });
  await run(reference, 20, () => new Promise((r) => setImmediate(r)));
  assert.ok(reference.chunks().every((c) => !c.readyAtTakeover));
});

test('the schedule and every action are the same whatever the inference latency (stepped sim clock)', async () => {
  let seed = 12345;
  const jitter = () => (seed = (Math.imul(seed, 1103515245) + 12345) >>> 0) % 25;
  const opts: ChunkExecutionOptions = { prefetchSteps: 4, replanEverySteps: 6 };
  const fast = await run(createChunkExecutor(tracingPolicy(12), opts), 40);
  const slow = await run(createChunkExecutor(tracingPolicy(12, jitter), opts), 40);
  assert.deepEqual(slow, fast);
});

test('temporal ensembling averages the rows overlapping chunks give for a step', async () => {
  const H = 4;
  const actions = await run(createChunkExecutor(tracingPolicy(H), { replanEverySteps: 1, ensembleDecay: 0 }), 10);
  // Step 6 is covered by chunks observed at steps 3, 4, 5, 6 (rows 3, 2, 1, 0): equal weights.
  const expected = [3, 4, 5, 6].reduce((sum, o) => sum + o * 100 + (6 - o), 0) / 4;
  assert.ok(Math.abs(actions[6].position[0] - expected) < 1e-3, `${actions[6].position[0]} vs ${expected}`);
  assert.deepEqual([actions[6].chunkIndex, actions[6].row], [6, 0]);
  // With decay, older chunks weigh more (ACT's convention): the blend leans to the earliest observation.
  const decayed = await run(createChunkExecutor(tracingPolicy(H), { replanEverySteps: 1, ensembleDecay: 1 }), 10);
  assert.ok(decayed[6].position[0] < actions[6].position[0]);
});

test('a policy that misses its deadline is a timeout at the takeover step, not before', async () => {
  const policy = tracingPolicy(10, (call) => (call === 1 ? 10_000 : 0));
  const exec = createChunkExecutor(policy, { prefetchSteps: 2, replanEverySteps: 5, deadlineMs: 150 });
  await exec.reset(ctx);
  for (let s = 0; s < 5; s++) await exec.step(s, s / HZ, observeAt(s)); // steps 3 and 4 run while chunk 1 is late
  // How soon it gives up (≈ the deadline, not the 10 s inference) is measured in bench/policy-deadlines.bench.ts.
  await assert.rejects(
    exec.step(5, 5 / HZ, observeAt(5)),
    (e: unknown) =>
      e instanceof PolicyUnavailableError &&
      e.reason === 'timeout' &&
      /did not answer within 150 ms \(chunk 1, observed at step 3\)/.test(e.message),
  );
});

test('a server lost during a prefetch surfaces at the takeover step as the policy error', async () => {
  const policy = tracingPolicy(10);
  const failing: Policy = {
    ...policy,
    info: policy.info,
    reset: policy.reset,
    infer: async (obs) =>
      obs.timeS > 0 ? Promise.reject(new PolicyUnavailableError('server gone', 'disconnected')) : policy.infer(obs),
  };
  const exec = createChunkExecutor(failing, { prefetchSteps: 2, replanEverySteps: 5 });
  await exec.reset(ctx);
  for (let s = 0; s < 5; s++) await exec.step(s, s / HZ, observeAt(s));
  await assert.rejects(
    exec.step(5, 5 / HZ, observeAt(5)),
    (e: unknown) => e instanceof PolicyUnavailableError && e.reason === 'disconnected',
  );
  // A reset with a failed inference in flight leaves nothing unhandled.
  for (let s = 0; s < 4; s++) await exec.step(s, s / HZ, observeAt(s));
  await exec.reset(ctx);
});

test('NaN actions and chunks too short for the plan are clear errors', async () => {
  const nan = tracingPolicy(
    10,
    () => 0,
    (call, a) => call === 1 && (a[3 * 14 + 5] = NaN),
  );
  const exec = createChunkExecutor(nan, { replanEverySteps: 5 });
  await exec.reset(ctx);
  for (let s = 0; s < 5; s++) await exec.step(s, s / HZ, observeAt(s));
  await assert.rejects(
    exec.step(5, 5 / HZ, observeAt(5)),
    (e: unknown) => e instanceof InvalidActionError && /answered NaN at action row 3, entry 5/.test(e.message),
  );

  const short = createChunkExecutor(tracingPolicy(6), { prefetchSteps: 3, replanEverySteps: 5 });
  await short.reset(ctx);
  for (let s = 0; s < 5; s++) await short.step(s, s / HZ, observeAt(s));
  await assert.rejects(
    short.step(5, 5 / HZ, observeAt(5)),
    /answered 6 action rows but this execution plan needs 8 \(replan every 5 steps, prefetch 3\)/,
  );
});

test('execution options parse from text and impossible plans are refused', () => {
  assert.deepEqual(parseChunkExecution('replan=25, prefetch=6,ensemble=0.01,deadline=800'), {
    replanEverySteps: 25,
    prefetchSteps: 6,
    ensembleDecay: 0.01,
    deadlineMs: 800,
  });
  assert.throws(() => parseChunkExecution('prefetch'), /'prefetch' is not understood/);
  assert.throws(() => parseChunkExecution('blend=2'), /'blend=2' is not understood/);
  assert.throws(
    () => createChunkExecutor(tracingPolicy(10), { prefetchSteps: 6, replanEverySteps: 5 }),
    /prefetchSteps \(6\) may not exceed replanEverySteps \(5\)/,
  );
  assert.throws(
    () => createChunkExecutor(tracingPolicy(10), { prefetchSteps: -1 }),
    /prefetchSteps must be a whole number/,
  );
});
