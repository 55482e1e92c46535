import { test } from 'node:test';
import assert from 'node:assert/strict';
import { yamRigModel } from '../../../src/rig/yam.js';
import { codePolicyFromSpec, MugsPolicy, PrivilegedStateRequiredError } from '../../../src/policy/code/index.js';
import { planNextFlip } from '../../../src/policy/code/mugs-planner.js';
import { readMugs } from '../../../src/policy/code/mugs-policy.js';
import { armReach } from '../../../src/policy/code/arm-reach.js';
import { parkPose } from '../../../src/policy/code/arm-moves.js';
import { dot } from '../../../src/policy/code/frames.js';

const rigModel = yamRigModel();
const ctx = { seed: 1, prompt: 'turn all the mugs upright', rigModel, controlHz: 50 };
const home = new Float32Array([0, 0, 0, 0, 0, 0, 1, 0, 0, 0, 0, 0, 0, 1]);
const arms = rigModel.arms.map((a) => armReach(a));
const seeds = { left: parkPose('left'), right: parkPose('right') };
const r = Math.SQRT1_2;

test('the spec code:mug-flipping opens the mug policy; it needs privileged state and has its own checkpoint hash', () => {
  const p = codePolicyFromSpec('code:mug-flipping');
  assert.ok(p instanceof MugsPolicy);
  assert.equal(p.info.name, 'code:mug-flipping');
  assert.equal(p.info.needsPrivilegedState, true);
  assert.notEqual(p.info.checkpointSha256, codePolicyFromSpec('code:bottles-in-the-bin')?.info.checkpointSha256);
  assert.throws(() => codePolicyFromSpec('code:mug-flipping?skill=0.5'), /has no graded variant/);
});

test('without privileged state it refuses in words an operator understands', async () => {
  const p = new MugsPolicy();
  await p.reset(ctx);
  await assert.rejects(p.infer({ timeS: 0, state: home, images: {}, prompt: ctx.prompt }), (e: unknown) => {
    assert.ok(e instanceof PrivilegedStateRequiredError);
    assert.match((e as Error).message, /^code:mug-flipping cannot run here: code policies read object poses the real rig cannot see/);
    return true;
  });
});

test('objects other than mugs are refused by name', () => {
  assert.throws(() => readMugs({ objects: [{ id: 'bottle-1', kind: 'bottle-500ml', position: [0, 0, 0], quaternion: [0, 0, 0, 1] }], fixtures: [] }), /object 'bottle-1' is a 'bottle-500ml'/);
});

test('a lying mug whose rim points away from the right arm is planned to stand: the release holds it upright, rim up', () => {
  // Lying along +x (its rim toward the far edge of the table), the handle toward −y; the right arm's side.
  const mugs = readMugs({ objects: [{ id: 'mug-1', kind: 'mug-350ml', position: [-0.05, -0.2, 0.041], quaternion: [0, r, 0, r] }], fixtures: [] });
  assert.equal(mugs[0].posture, 'lying');
  const task = planNextFlip(mugs, mugs, arms, seeds);
  assert.equal(task.kind, 'flip', task.kind === 'idle' ? task.reason : '');
  if (task.kind !== 'flip') return;
  assert.equal(task.place.goal, 'upright');
  // The hand at the release, as the arm's own kinematics put it, carries the mug's axis to vertical.
  const reach = arms.find((a) => a.side === task.side)!;
  const tool = reach.toolAt(task.place.q);
  const { approach, closing } = task.grasp.toolInMug;
  const b = [approach[1] * closing[2] - approach[2] * closing[1], approach[2] * closing[0] - approach[0] * closing[2], approach[0] * closing[1] - approach[1] * closing[0]] as const;
  // The mug's axis (0, 0, 1) in the tool basis is (approach_z, closing_z, b_z) of the mug frame.
  const axisInTool = [approach[2], closing[2], b[2]] as const;
  const tb = [tool.approach[1] * tool.closing[2] - tool.approach[2] * tool.closing[1], tool.approach[2] * tool.closing[0] - tool.approach[0] * tool.closing[2], tool.approach[0] * tool.closing[1] - tool.approach[1] * tool.closing[0]] as const;
  const axisAtRelease = [0, 1, 2].map((i) => axisInTool[0] * tool.approach[i] + axisInTool[1] * tool.closing[i] + axisInTool[2] * tb[i]) as [number, number, number];
  assert.ok(dot(axisAtRelease, [0, 0, 1]) > 0.99, `axis at release ${axisAtRelease.map((v) => v.toFixed(2))}`);
});

test('with every mug upright there is nothing to plan: the policy idles', () => {
  const upright = readMugs({ objects: [{ id: 'mug-1', kind: 'mug-350ml', position: [-0.05, -0.2, 0], quaternion: [0, 0, 0, 1] }], fixtures: [] });
  assert.deepEqual(planNextFlip(upright, [], arms, seeds), { kind: 'idle', reason: 'every mug is upright' });
});

test('an upside-down mug is planned to be laid on its side first (the wrist cannot turn it half a circle)', () => {
  const mugs = readMugs({ objects: [{ id: 'mug-1', kind: 'mug-350ml', position: [-0.1, -0.15, 0.095], quaternion: [1, 0, 0, 0] }], fixtures: [] });
  assert.equal(mugs[0].posture, 'upside-down');
  const task = planNextFlip(mugs, mugs, arms, seeds);
  assert.equal(task.kind, 'flip', task.kind === 'idle' ? task.reason : '');
  if (task.kind === 'flip') {
    assert.equal(task.place.goal, 'lying');
    assert.equal(task.grasp.style, 'upside-down-top');
  }
});
