import { test } from 'node:test';
import assert from 'node:assert/strict';
import { SortPolicy, codePolicyFromSpec } from '../../../src/policy/code/index.js';
import { HAND_BOXES, handClearance } from '../../../src/policy/code/hand-clearance.js';
import { partShape, viewPart } from '../../../src/policy/code/part-geometry.js';
import { GRIPPER_GEOMETRY } from '../../../src/sim/arm/geometry.js';
import { runSimRollout } from '../../../src/sim/sim-rollout.js';
import { SORT_FROM_TOTE } from '../../../src/tasks/index.js';
import { ONE_BOLT_LAYOUT } from '../../helpers/sort-replay.js';

// code:sort-from-tote end to end through the one rollout loop (SimRig in Rapier, the task's own
// scoring). Tier tables over sampled layouts are measured with `tandem sim sweep`
// (docs/code-policies.md); this guards the pick → carry → drop chain on one hand-built tier-1 layout.

test('code:sort-from-tote?skill=0.5 is a graded variant with its own checkpoint; skill out of range is refused', () => {
  const full = codePolicyFromSpec('code:sort-from-tote')!;
  const half = codePolicyFromSpec('code:sort-from-tote?skill=0.5')!;
  assert.equal(full.info.name, 'code:sort-from-tote');
  assert.equal(half.info.name, 'code:sort-from-tote?skill=0.5');
  assert.notEqual(full.info.checkpointSha256, half.info.checkpointSha256);
  assert.throws(() => new SortPolicy({ skill: 2 }), /skill must be from 0 to 1/);
});

test("the policy's hand clearance uses the sim hand's boxes", () => {
  assert.deepEqual([...HAND_BOXES.palmHalfM], [...GRIPPER_GEOMETRY.palmHalfM]);
  assert.deepEqual([...HAND_BOXES.fingerHalfM], [...GRIPPER_GEOMETRY.fingerHalfM]);
  assert.equal(HAND_BOXES.palmCentreZM, GRIPPER_GEOMETRY.palmCentreZM);
  assert.equal(HAND_BOXES.fingerCentreZM, GRIPPER_GEOMETRY.fingerCentreZM);
});

test('the open hand over a nut 40 mm from the tote wall fits with the fingers closing along the wall, not across it, and not onto a neighbour', () => {
  const tote = { position: [-0.05, 0.32, 0] as const, quaternion: [0, 0, 0, 1] as const };
  // The tote's +x wall is at x = 0.145; the nut at x = 0.105, on the floor (z = 0.005).
  const nut = { tool: [0.105, 0.32, 0.026] as const, approach: [0, 0, -1] as const, halfOpeningM: 0.021 };
  const along = handClearance({ ...nut, closing: [0, 1, 0] }, { tote, others: [] });
  const across = handClearance({ ...nut, closing: [1, 0, 0] }, { tote, others: [] });
  assert.ok(along > 0.003, `closing along the wall: ${along}`);
  assert.ok(across < 0, `closing across the wall, the palm is in it: ${across}`);
  const ring = viewPart(
    { id: 'r', kind: 'ring-6202', position: [0.105, 0.365, 0.005], quaternion: [0, 0, 0, 1] },
    partShape('ring-6202')!,
  );
  assert.ok(
    handClearance({ ...nut, closing: [0, 1, 0] }, { tote, others: [ring] }) < 0,
    'a finger lands on the ring beside the nut',
  );
});

/** One 14 s rollout of the one-bolt layout at seed 0, run once per skill and shared by the tests below. */
const rollouts = new Map<number, ReturnType<typeof rollout>>();
async function rollout(skill: number) {
  const policy = new SortPolicy({ skill });
  const { episode } = await runSimRollout({
    task: SORT_FROM_TOTE,
    layout: ONE_BOLT_LAYOUT,
    policy,
    seed: 0,
    episodeSeconds: 14,
  });
  return { episode, log: policy.log };
}
const rolloutAt = (skill: number): ReturnType<typeof rollout> => {
  if (!rollouts.has(skill)) rollouts.set(skill, rollout(skill));
  return rollouts.get(skill)!;
};

test('through runEpisode on SimRig, the left arm picks a bolt from the tote and drops it in the bolt slot', async () => {
  const { episode, log } = await rolloutAt(1);
  assert.equal(episode.status, 'valid', episode.reason);
  assert.deepEqual(
    episode.progress?.counts,
    { inCorrectSlot: 1, inWrongSlot: 0, elsewhere: 0, total: 1 },
    log.join('\n'),
  );
  assert.equal(episode.endStates?.[0]?.region, 'slot:bolt');
});

test('a lower ?skill= scores lower: at skill 0 the same episode misses the bolt and, moving slower, runs out of time before sorting it', async () => {
  const [full, low] = await Promise.all([rolloutAt(1), rolloutAt(0)]);
  assert.equal(low.episode.status, 'valid', low.episode.reason);
  assert.ok(
    low.log.some((l) => /\(skill 0\) misses bolt-1/.test(l)),
    low.log.join('\n'),
  );
  assert.ok(
    (low.episode.progress?.progress ?? 1) < (full.episode.progress?.progress ?? 0),
    `skill 0 scored ${low.episode.progress?.summary}; skill 1 ${full.episode.progress?.summary}`,
  );
});
