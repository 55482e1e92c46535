/**
 * The one judgement of a blown-up arm that both physics engines' scenes (Rapier and MuJoCo) use:
 * a NaN, a joint far outside its limits, a joint spinning, a NaN finger — each named in words.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { armInstability, JOINT_BLOWUP_MARGIN_RAD, MAX_JOINT_SPEED_RADS } from '../../src/sim/scene.js';
import { yamRigModel } from '../../src/rig/yam.js';

const model = yamRigModel().arms[0];
const arm = (edit: (a: { q: Float64Array; dq: Float64Array; fingerOpeningM: number }) => void) => {
  const a = { model, q: new Float64Array(6), dq: new Float64Array(6), fingerOpeningM: 0.02 };
  edit(a);
  return a;
};

test('an arm at rest inside its limits is trusted; each way of blowing up is named', () => {
  assert.equal(armInstability(arm(() => {})), undefined);
  const j2 = model.joints[1];
  assert.equal(armInstability(arm((a) => (a.dq[1] = Number.NaN))), `${j2.name} reads NaN`);
  const far = j2.maxRad + JOINT_BLOWUP_MARGIN_RAD + 0.1;
  assert.equal(
    armInstability(arm((a) => (a.q[1] = far))),
    `${j2.name} is at ${far.toFixed(2)} rad, far outside its limits [${j2.minRad.toFixed(2)}, ${j2.maxRad.toFixed(2)}]`,
  );
  // Inside the blow-up margin beyond a limit is still the arm, not a blown-up world.
  assert.equal(armInstability(arm((a) => (a.q[1] = j2.maxRad + JOINT_BLOWUP_MARGIN_RAD / 2))), undefined);
  assert.equal(
    armInstability(arm((a) => (a.dq[1] = -(MAX_JOINT_SPEED_RADS + 1)))),
    `${j2.name} spins at ${(-(MAX_JOINT_SPEED_RADS + 1)).toFixed(0)} rad/s`,
  );
  assert.equal(armInstability(arm((a) => (a.fingerOpeningM = Number.NaN))), `${model.gripper.name} reads NaN`);
});
