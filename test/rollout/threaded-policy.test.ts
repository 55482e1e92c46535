import { test } from 'node:test';
import assert from 'node:assert/strict';
import { performance } from 'node:perf_hooks';
import { sampleLayoutSet } from '../../src/layouts/layout-set.js';
import { BOTTLES_IN_THE_BIN } from '../../src/tasks/bottles-in-the-bin.js';
import { BottlesPolicy } from '../../src/policy/code/index.js';
import { PolicyUnavailableError, type ActionChunk, type Observation, type Policy } from '../../src/policy/contract.js';
import { STATE_DIM } from '../../src/rig/contract.js';
import { yamRigModel } from '../../src/rig/yam.js';
import { openPolicy } from '../../src/rollout/policy-registry.js';
import { ThreadedPolicy } from '../../src/rollout/threaded-policy.js';
import { runSimRollout } from '../../src/sim/sim-rollout.js';

const MISBEHAVING = new URL('../fixtures/policy-worker/misbehaving-policy-worker.mjs', import.meta.url);
const open = (spec: string, answerTimeoutMs?: number): Promise<ThreadedPolicy> =>
  ThreadedPolicy.open(spec, { cwd: process.cwd(), entry: MISBEHAVING, answerTimeoutMs });
const ctx = { seed: 0, prompt: 'test', rigModel: yamRigModel(), controlHz: 50 };
const obs: Observation = { timeS: 0, state: new Float32Array(STATE_DIM), images: {}, prompt: 'test' };
const layout = sampleLayoutSet({ task: BOTTLES_IN_THE_BIN.id, tiers: [1], perTier: 10, seed: 7 }).layouts[2];

test('a policy worker that crashes is the policy becoming unavailable, in one sentence, for this call and every later one; close still ends', async () => {
  const p = await open('throw-on-infer');
  await p.reset(ctx);
  const crashed = (e: unknown): boolean => {
    assert.ok(e instanceof PolicyUnavailableError);
    assert.equal(e.reason, 'disconnected');
    assert.equal(
      e.message,
      'The worker thread running policy test:throw-on-infer crashed (the planner hit a bug); the policy cannot answer any more.',
    );
    return true;
  };
  await assert.rejects(p.infer(obs), crashed);
  await assert.rejects(p.reset(ctx), crashed);
  await p.close();
  await p.close();

  const exits = await open('exit-on-infer');
  await assert.rejects(
    exits.infer(obs),
    /^PolicyUnavailableError: The worker thread running policy test:exit-on-infer exited \(code 3\); the policy cannot answer any more\.$/,
  );
  await exits.close();
});

test('a hung policy worker is given up after its answer timeout and terminated, not waited for; close() of a busy worker ends too', async () => {
  const hung = await open('hang-on-infer', 300);
  const t0 = performance.now();
  await assert.rejects(hung.infer(obs), (e: unknown) => {
    assert.ok(e instanceof PolicyUnavailableError);
    assert.equal(e.reason, 'timeout');
    assert.equal(
      e.message,
      'Policy test:hang-on-infer did not answer an inference within 300 ms; its worker thread was stopped.',
    );
    return true;
  });
  assert.ok(performance.now() - t0 < 5_000);
  await hung.close();

  // Closed while it plans forever (the rollout's own deadline gave up on it first): close ends it.
  const busy = await open('hang-on-infer');
  const pending = assert.rejects(busy.infer(obs), /^PolicyUnavailableError: Policy test:hang-on-infer was closed\.$/);
  const t1 = performance.now();
  await busy.close();
  assert.ok(performance.now() - t1 < 5_000, 'close waits only a short grace for a busy worker');
  await pending;
});

test('a policy that cannot be opened in its worker says why', async () => {
  await assert.rejects(open('fail-on-open'), /^Error: This policy cannot be opened\.$/);
});

test('a sim rollout whose policy worker crashes ends aborted (policy unavailable) with the sentence, not a hang', async () => {
  const p = await open('throw-on-infer');
  try {
    const { episode } = await runSimRollout({
      task: BOTTLES_IN_THE_BIN,
      layout,
      policy: p,
      seed: 0,
      episodeSeconds: 1,
    });
    assert.equal(episode.outcome, 'policy-unavailable');
    assert.equal(episode.status, 'aborted');
    assert.match(
      episode.reason ?? '',
      /^policy disconnected: The worker thread running policy test:throw-on-infer crashed \(the planner hit a bug\)/,
    );
  } finally {
    await p.close();
  }
});

test('a code policy opened by spec plans in its worker: the same episode, bit for bit, as the policy in this thread', async () => {
  const threaded = await openPolicy('code:bottles-in-the-bin', { cwd: process.cwd() });
  try {
    assert.ok(threaded instanceof ThreadedPolicy);
    const a = await runSimRollout({ task: BOTTLES_IN_THE_BIN, layout, policy: threaded, seed: 3, episodeSeconds: 4 });
    const b = await runSimRollout({
      task: BOTTLES_IN_THE_BIN,
      layout,
      policy: new BottlesPolicy(),
      seed: 3,
      episodeSeconds: 4,
    });
    assert.equal(a.episode.status, 'valid', a.episode.reason);
    assert.ok(a.episode.observations > 1);
    assert.equal(a.episode.finalStateHash, b.episode.finalStateHash);
  } finally {
    await threaded.close?.();
  }
});

test("while a code policy plans its first chunk, the caller's thread stays free (a wall-clock control loop keeps its rate)", async (t) => {
  // The first observation of a real sim episode, privileged state included.
  let first: Observation | undefined;
  const capture: Policy = {
    info: { ...new BottlesPolicy().info, name: 'capture' },
    reset: async () => {},
    infer: async (o): Promise<ActionChunk> => {
      first ??= o;
      const actions = new Float32Array(10 * STATE_DIM);
      for (let r = 0; r < 10; r++) actions.set(o.state, r * STATE_DIM);
      return { horizon: 10, actions };
    },
  };
  await runSimRollout({ task: BOTTLES_IN_THE_BIN, layout, policy: capture, seed: 0, episodeSeconds: 0.1 });
  const policy = await openPolicy('code:bottles-in-the-bin', { cwd: process.cwd() });
  try {
    await policy.reset({ seed: 0, prompt: BOTTLES_IN_THE_BIN.prompt, rigModel: yamRigModel(), controlHz: 50 });
    // The caller's event loop must keep turning while the plan is made: count its turns (a
    // setImmediate chain) until the chunk arrives. A plan made on this thread blocks the loop from
    // the call to the answer, so not one turn happens; planned in the policy's worker, the loop turns
    // for as long as the plan takes. Counted, not timed: the same verdict on a fast or a busy machine.
    let turns = 0;
    let planning = true;
    const turn = (): void => {
      if (!planning) return;
      turns += 1;
      setImmediate(turn);
    };
    setImmediate(turn);
    const t0 = performance.now();
    const chunk = await policy.infer(first!);
    planning = false;
    t.diagnostic(
      `first plan ${(performance.now() - t0).toFixed(0)} ms; the caller's event loop turned ${turns} times meanwhile`,
    );
    assert.equal(chunk.actions.length, chunk.horizon * STATE_DIM);
    assert.ok(
      turns >= 2,
      `the caller's event loop turned ${turns} times while the first chunk was planned: the plan held its thread`,
    );
  } finally {
    await policy.close?.();
  }
});
