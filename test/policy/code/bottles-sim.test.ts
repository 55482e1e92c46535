import { test } from 'node:test';
import assert from 'node:assert/strict';
import { createRng } from '../../../src/layouts/random.js';
import { sampleLayouts } from '../../../src/layouts/sample.js';
import { BOTTLES_IN_THE_BIN } from '../../../src/tasks/bottles-in-the-bin.js';
import { BottlesPolicy } from '../../../src/policy/code/index.js';
import { runInSim } from './sim-harness.js';

// End to end in Rapier physics: the policy's joint targets drive the simulated arms, grasps hold
// by friction, and the task's own scoring decides. Layout 1 of the tier-1 sample with seed 2026
// is one the policy clears (measured clear rates over more layouts are in docs/code-policies.md
// and the helper's report; this test guards the whole chain from planning to a bottle in the bin).
test('in physics, the policy puts a tier-1 bottle in the bin', async () => {
  const layout = sampleLayouts(BOTTLES_IN_THE_BIN, [1], 2, createRng(2026))[1];
  const policy = new BottlesPolicy();
  const result = await runInSim(policy, layout, { seconds: 30 });
  assert.equal(result.unstable, undefined);
  assert.deepEqual(result.counts, { inBin: 1, target: 1 }, policy.log.join('\n'));
  assert.equal(result.progress, 1);
});
