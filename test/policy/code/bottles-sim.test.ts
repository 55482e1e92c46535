import { test } from 'node:test';
import assert from 'node:assert/strict';
import { sampleLayoutSet } from '../../../src/layouts/layout-set.js';
import { BOTTLES_IN_THE_BIN } from '../../../src/tasks/bottles-in-the-bin.js';
import { BottlesPolicy } from '../../../src/policy/code/index.js';
import { runSimRollout } from '../../../src/sim/sim-rollout.js';

// End to end through the one rollout loop: SimRig in Rapier physics, the policy through the
// open-loop chunk executor, the task's own scoring on the privileged end state. Grasps hold by
// friction alone. Clear rates over many layouts are measured with `tandem sim sweep` (see
// docs/code-policies.md); this test guards the whole chain on two layouts of the tier-1 set
// `tandem layouts sample --task bottles-in-the-bin --tiers 1 --per-tier 10 --seed 7` that the
// policy clears, and that the rollout is reproducible. 20 s of the task's 60: the policy has
// every bottle in the bin by 14.4 and 15.2 s on these layouts and then idles ("idle: every bottle
// is in the bin" in its log), so the score is the one the full episode ends with, at a third of
// the physics.
const EPISODE_S = 20;
test('through runEpisode on SimRig, the policy puts tier-1 bottles in the bin, reproducibly', async () => {
  const set = sampleLayoutSet({ task: BOTTLES_IN_THE_BIN.id, tiers: [1], perTier: 10, seed: 7 });
  const layouts = [set.layouts[2], set.layouts[4]];
  const hashes: string[] = [];
  for (const layout of layouts) {
    const policy = new BottlesPolicy();
    const { episode } = await runSimRollout({
      task: BOTTLES_IN_THE_BIN,
      layout,
      policy,
      seed: 0,
      episodeSeconds: EPISODE_S,
    });
    assert.equal(episode.status, 'valid', episode.reason);
    assert.deepEqual(episode.progress?.counts, { inBin: 1, target: 1 }, policy.log.join('\n'));
    hashes.push(episode.finalStateHash);
  }
  const again = await runSimRollout({
    task: BOTTLES_IN_THE_BIN,
    layout: layouts[0],
    policy: new BottlesPolicy(),
    seed: 0,
    episodeSeconds: EPISODE_S,
  });
  assert.equal(again.episode.finalStateHash, hashes[0]);
});
