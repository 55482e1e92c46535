import { test } from 'node:test';
import assert from 'node:assert/strict';
import { createRng } from '../../../src/layouts/random.js';
import { sampleLayouts } from '../../../src/layouts/sample.js';
import { BOTTLES_IN_THE_BIN } from '../../../src/tasks/bottles-in-the-bin.js';
import { BottlesPolicy } from '../../../src/policy/code/index.js';
import { runSimRollout } from '../../../src/sim/sim-rollout.js';

// End to end through the one rollout loop: SimRig in Rapier physics, the policy through the
// open-loop chunk executor, the task's own scoring on the privileged end state. Grasps hold by
// friction alone. Clear rates over many layouts are measured with `tandem sim sweep` (see
// docs/code-policies.md); this test guards the whole chain on two tier-1 layouts the policy
// clears, and that the rollout is reproducible.
test('through runEpisode on SimRig, the policy puts tier-1 bottles in the bin, reproducibly', async () => {
  const layouts = sampleLayouts(BOTTLES_IN_THE_BIN, [1], 2, createRng(2026));
  const hashes: string[] = [];
  for (const layout of layouts) {
    const policy = new BottlesPolicy();
    const { episode } = await runSimRollout({ task: BOTTLES_IN_THE_BIN, layout, policy, seed: 1, episodeSeconds: 25 });
    assert.equal(episode.status, 'valid', episode.reason);
    assert.deepEqual(episode.progress?.counts, { inBin: 1, target: 1 }, policy.log.join('\n'));
    hashes.push(episode.finalStateHash);
  }
  const again = await runSimRollout({ task: BOTTLES_IN_THE_BIN, layout: layouts[0], policy: new BottlesPolicy(), seed: 1, episodeSeconds: 25 });
  assert.equal(again.episode.finalStateHash, hashes[0]);
});
