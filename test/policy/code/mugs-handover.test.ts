import { test } from 'node:test';
import assert from 'node:assert/strict';
import { yamRigModel } from '../../../src/rig/yam.js';
import { planNextFlip } from '../../../src/policy/code/mugs-planner.js';
import { readMugs } from '../../../src/policy/code/mugs-policy.js';
import { armReach } from '../../../src/policy/code/arm-reach.js';
import { parkPose } from '../../../src/policy/code/arm-moves.js';
import { handsOverlap, mugFromTool, polylineDistance } from '../../../src/policy/code/mug-handover.js';
import { dot, norm, sub } from '../../../src/policy/code/frames.js';
import { sampleLayoutSet } from '../../../src/layouts/layout-set.js';
import { MUG_FLIPPING } from '../../../src/tasks/mug-flipping.js';
import { MugsPolicy } from '../../../src/policy/code/index.js';
import { runSimRollout } from '../../../src/sim/sim-rollout.js';

const rigModel = yamRigModel();
const arms = rigModel.arms.map((a) => armReach(a));
const seeds = { left: parkPose('left'), right: parkPose('right') };
const reachOf = (side: string) => arms.find((a) => a.side === side)!;

/** One upside-down mug (as the layouts put one: turned half a circle about its own x, then `yaw` about the vertical), its base 95 mm up. */
function upsideDown(x: number, y: number, yaw = 0) {
  const q = [Math.cos(yaw / 2), Math.sin(yaw / 2), 0, 0] as const;
  return readMugs({
    objects: [{ id: 'mug-1', kind: 'mug-350ml', position: [x, y, 0.095], quaternion: q }],
    fixtures: [],
  });
}

test('an upside-down mug in the middle of the table is planned as a two-arm handover, each arm at a pose its IK reaches, ending upright', () => {
  const mugs = upsideDown(0, 0);
  assert.equal(mugs[0].posture, 'upside-down');
  const task = planNextFlip(mugs, mugs, arms, seeds);
  assert.equal(task.kind, 'handover', task.kind === 'idle' ? task.reason : `planned ${task.kind}`);
  if (task.kind !== 'handover') return;
  assert.notEqual(task.side, task.receiver);
  const giver = reachOf(task.side);
  const receiver = reachOf(task.receiver);
  // The joints planned put each hand where the plan says (forward kinematics of the IK solutions).
  const near = (
    q: Float64Array,
    t: { position: readonly number[]; approach: readonly number[] },
    reach: typeof giver,
  ) => {
    const at = reach.toolAt(q);
    return norm(sub(at.position, t.position as never)) < 0.003 && dot(at.approach, t.approach as never) > 0.99;
  };
  assert.ok(near(task.grasp.qGrasp, task.grasp.grasp, giver), 'giver at its grasp');
  assert.ok(near(task.qPresent, task.present, giver), 'giver at the handover');
  assert.ok(near(task.take.qGrasp, task.take.grasp, receiver), 'receiver at the rim');
  assert.ok(near(task.place.q, task.place.target, receiver), 'receiver at the release');
  // At the handover the mug lies near level in the air, its rim toward the receiver, which comes in along its axis.
  const f = mugFromTool(giver.toolAt(task.qPresent), task.grasp.toolInMug);
  assert.ok(Math.abs(f.z[2]) < 0.6, `mug axis at the handover ${f.z.map((v) => v.toFixed(2))}`);
  assert.ok(f.origin[2] > 0.15, 'the mug is handed over in the air');
  assert.ok(dot(task.take.grasp.approach, f.z) < -0.9, 'the receiver comes in from the rim along the axis');
  // The two arms keep apart, and the two hands do not overlap.
  assert.ok(polylineDistance(giver.skeletonAt(task.qPresent), receiver.skeletonAt(task.take.qGrasp)) >= 0.06);
  assert.equal(handsOverlap(giver.toolAt(task.qPresent), receiver.toolAt(task.take.qGrasp)), false);
  // Held by the rim as planned, at the release the mug stands rim up (the receiver's FK at the planned joints).
  const atRelease = mugFromTool(receiver.toolAt(task.place.q), task.take.toolInMug);
  assert.ok(atRelease.z[2] > 0.99, `mug axis at the release ${atRelease.z.map((v) => v.toFixed(2))}`);
  assert.ok(
    atRelease.origin[2] > -0.002 && atRelease.origin[2] < 0.03,
    `set down on the table (base at ${atRelease.origin[2].toFixed(3)} m)`,
  );
});

test('with the handover switched off (or unplannable) the upside-down mug is laid on its side first, as before', () => {
  const mugs = upsideDown(0, 0);
  const task = planNextFlip(mugs, mugs, arms, seeds, { handover: false });
  assert.equal(task.kind, 'flip');
  if (task.kind === 'flip') assert.equal(task.place.goal, 'lying');
});

test('hands that overlap are told apart from hands that do not', () => {
  const a = { position: [0, 0, 0.3] as const, approach: [0, 1, 0] as const, closing: [0, 0, 1] as const };
  assert.equal(handsOverlap(a, { ...a, position: [0, 0.01, 0.3] }), true);
  assert.equal(handsOverlap(a, { position: [0, 0.3, 0.3], approach: [0, -1, 0], closing: [1, 0, 0] }), false);
});

// Through the one rollout loop (SimRig in Rapier physics, the task's own scoring): a layout of a
// single upside-down mug in the middle of the table, from `tandem layouts sample --task
// mug-flipping --tiers 3 --per-tier 6 --seed 7` with its mugs replaced. 44 s of the task's 90: the
// receiver releases it upright at 38.8 s and the policy idles from then.
test('in the sim, one upside-down mug in the middle of the table is handed over and ends upright', async () => {
  const base = sampleLayoutSet({ task: MUG_FLIPPING.id, tiers: [3], perTier: 6, seed: 7 }).layouts[1];
  const layout = {
    ...base,
    objects: [{ id: 'mug-1', kind: 'mug-350ml', posture: 'upside-down' as const, pose: { x: 0, y: 0, yawRad: 0 } }],
  };
  const policy = new MugsPolicy();
  const { episode } = await runSimRollout({ task: MUG_FLIPPING, layout, policy, seed: 0, episodeSeconds: 44 });
  assert.equal(episode.status, 'valid', episode.reason);
  assert.ok(
    policy.log.some((l) => / hand over mug-1 /.test(l)),
    policy.log.join('\n'),
  );
  assert.ok(!policy.log.some((l) => /lay on its side/.test(l)), policy.log.join('\n'));
  assert.deepEqual(
    episode.endStates?.map((e) => e.upright),
    [true],
    policy.log.join('\n'),
  );
});
