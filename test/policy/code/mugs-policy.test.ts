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
    assert.match(
      (e as Error).message,
      /^code:mug-flipping cannot run here: code policies read object poses the real rig cannot see/,
    );
    return true;
  });
});

test('objects other than mugs are refused by name', () => {
  assert.throws(
    () =>
      readMugs({
        objects: [{ id: 'bottle-1', kind: 'bottle-500ml', position: [0, 0, 0], quaternion: [0, 0, 0, 1] }],
        fixtures: [],
      }),
    /object 'bottle-1' is a 'bottle-500ml'/,
  );
});

/** The mug's axis at the planned release, through the arm's own forward kinematics at the planned joints. */
function axisAtRelease(task: Extract<ReturnType<typeof planNextFlip>, { kind: 'flip' }>): [number, number, number] {
  const reach = arms.find((a) => a.side === task.side)!;
  const tool = reach.toolAt(task.place.q);
  const cross = (u: readonly number[], v: readonly number[]) => [
    u[1] * v[2] - u[2] * v[1],
    u[2] * v[0] - u[0] * v[2],
    u[0] * v[1] - u[1] * v[0],
  ];
  const { approach, closing } = task.grasp.toolInMug;
  // The mug's own z in the tool basis (approach, closing, approach × closing) stays fixed while it is held.
  const b = cross(approach, closing);
  const tb = cross(tool.approach, tool.closing);
  return [0, 1, 2].map((i) => approach[2] * tool.approach[i] + closing[2] * tool.closing[i] + b[2] * tb[i]) as [
    number,
    number,
    number,
  ];
}

test('a lying mug, whichever way it points, is only ever planned to stand rim up (never turned the wrong way round by the wrist)', () => {
  let planned = 0;
  for (let k = 0; k < 12; k++) {
    const yaw = (k * Math.PI) / 6;
    // Lying (a quarter turn about its own y), then turned about the vertical: rim toward `yaw`.
    const q = [-Math.sin(yaw / 2) * r, Math.cos(yaw / 2) * r, Math.sin(yaw / 2) * r, Math.cos(yaw / 2) * r] as const;
    const mugs = readMugs({
      objects: [{ id: 'mug-1', kind: 'mug-350ml', position: [-0.05, -0.12, 0.041], quaternion: q }],
      fixtures: [],
    });
    assert.equal(mugs[0].posture, 'lying');
    const task = planNextFlip(mugs, mugs, arms, seeds, {}, false);
    if (task.kind !== 'flip') continue;
    planned++;
    assert.equal(task.place.goal, 'upright');
    const axis = axisAtRelease(task);
    assert.ok(
      dot(axis, [0, 0, 1]) > 0.99,
      `rim toward ${yaw.toFixed(2)} rad: the axis at release is ${axis.map((v) => v.toFixed(2))}`,
    );
  }
  // The arms reach some of these: the assertion above is not vacuous.
  assert.ok(planned >= 3, `only ${planned} of 12 planned`);
});

test('with every mug upright there is nothing to plan: the policy idles', () => {
  const upright = readMugs({
    objects: [{ id: 'mug-1', kind: 'mug-350ml', position: [-0.05, -0.2, 0], quaternion: [0, 0, 0, 1] }],
    fixtures: [],
  });
  assert.deepEqual(planNextFlip(upright, [], arms, seeds), { kind: 'idle', reason: 'every mug is upright' });
});

test('without a handover, an upside-down mug is planned to be laid on its side first (the wrist cannot turn it half a circle)', () => {
  const mugs = readMugs({
    objects: [{ id: 'mug-1', kind: 'mug-350ml', position: [-0.1, -0.15, 0.095], quaternion: [1, 0, 0, 0] }],
    fixtures: [],
  });
  assert.equal(mugs[0].posture, 'upside-down');
  const task = planNextFlip(mugs, mugs, arms, seeds, { handover: false });
  assert.equal(task.kind, 'flip', task.kind === 'idle' ? task.reason : '');
  if (task.kind === 'flip') {
    assert.equal(task.place.goal, 'lying');
    assert.equal(task.grasp.style, 'upside-down-top');
  }
});
