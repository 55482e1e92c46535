import { test } from 'node:test';
import assert from 'node:assert/strict';
import { sampleLayoutSet } from '../../../src/layouts/layout-set.js';
import { MUG_FLIPPING } from '../../../src/tasks/mug-flipping.js';
import { MugsPolicy } from '../../../src/policy/code/index.js';
import { runSimRollout } from '../../../src/sim/sim-rollout.js';

// End to end through the one rollout loop: SimRig in Rapier physics, the policy through the
// open-loop chunk executor, the task's own scoring on the privileged end state. Tier means over
// many layouts are measured with `tandem sim sweep` (docs/code-policies.md); these guard the
// whole chain on layouts of `tandem layouts sample --task mug-flipping --tiers 1,2 --per-tier 6
// --seed 7` the policy finishes early (the episode is cut short to keep the test quick: it
// releases the mug upright at 21.0 and 22.4 s and idles from 24.2 and 22.4 s, so 27 s includes the
// arm's retreat past the mugs).
const EPISODE_S = 27;
const set = sampleLayoutSet({ task: MUG_FLIPPING.id, tiers: [1, 2], perTier: 6, seed: 7 });

test('through runEpisode on SimRig, the policy stands a lying mug upright (tier 1: progress 1)', async () => {
  const layout = set.layouts[0];
  assert.deepEqual(
    layout.objects.map((o) => o.posture),
    ['lying'],
  );
  const policy = new MugsPolicy();
  const { episode } = await runSimRollout({ task: MUG_FLIPPING, layout, policy, seed: 0, episodeSeconds: EPISODE_S });
  assert.equal(episode.status, 'valid', episode.reason);
  assert.equal(episode.progress?.progress, 1, policy.log.join('\n'));
  assert.deepEqual(
    episode.endStates?.map((e) => e.upright),
    [true],
  );
});

test('an upright mug beside the lying one is left standing while the lying one is stood up', async () => {
  const layout = set.layouts.find((l) => l.tier === 2 && l.index === 9)!;
  assert.deepEqual(
    layout.objects.map((o) => o.posture),
    ['lying', 'upright'],
  );
  const policy = new MugsPolicy();
  const { episode } = await runSimRollout({ task: MUG_FLIPPING, layout, policy, seed: 0, episodeSeconds: EPISODE_S });
  assert.equal(episode.status, 'valid', episode.reason);
  assert.deepEqual(
    episode.progress?.counts,
    { newlyUpright: 1, knockedOver: 0, notUprightAtStart: 1, uprightAtStart: 1 },
    policy.log.join('\n'),
  );
});
