import { test } from 'node:test';
import assert from 'node:assert/strict';
import { parse } from '@foxglove/rosmsg';
import { MessageReader, MessageWriter } from '@foxglove/rosmsg2-serialization';
import { yamRigModel } from '../../src/rig/yam.js';
import { stateIndex, type RigState } from '../../src/rig/contract.js';
import {
  JOINT_STATE_DEFINITION,
  JOINT_TRAJECTORY_DEFINITION,
  jointStateToMeasured,
  rigCommandToJointTrajectory,
  rigStateToJointState,
  stateNames,
  toRosTime,
} from '../../ros/messages.js';

const model = yamRigModel();

function state(): RigState {
  const position = Float64Array.from({ length: 14 }, (_, k) => k / 10);
  return {
    timeS: 12.25,
    mode: 'active',
    position,
    velocity: position.map((x) => -x),
    effort: position.map((x) => 2 * x),
    faults: [],
  };
}

test('RigState → JointState: 14 names in policy order with the grippers, stamp in sec/nanosec', () => {
  const msg = rigStateToJointState(state(), model, 12.25);
  assert.deepEqual(msg.header.stamp, { sec: 12, nanosec: 250_000_000 });
  assert.equal(msg.name.length, 14);
  assert.equal(msg.name[0], 'left_joint1');
  assert.equal(msg.name[6], 'left_gripper');
  assert.equal(msg.name[13], 'right_gripper');
  assert.equal(msg.position[stateIndex('right', 2)], 0.9);
  assert.ok(Math.abs(msg.effort[3] - 0.6) < 1e-12);
});

test('JointState → state reads by name in any order, ignores extra joints, and lists missing ones', () => {
  const names = stateNames(model);
  const shuffled = [...names].reverse();
  const m = jointStateToMeasured(
    {
      header: { stamp: toRosTime(3.5), frame_id: '' },
      name: [...shuffled, 'camera_pan'],
      position: [...shuffled.map((n) => names.indexOf(n) / 10), 9],
      velocity: [],
      effort: [],
    },
    model,
  );
  assert.deepEqual(
    Array.from(m.position),
    names.map((_, k) => k / 10),
  );
  assert.deepEqual(Array.from(m.velocity), new Array(14).fill(0), 'empty velocity arrays are allowed');
  assert.equal(m.timeS, 3.5);
  assert.deepEqual(m.missing, []);
  const partial = jointStateToMeasured(
    {
      header: { stamp: toRosTime(0), frame_id: '' },
      name: names.slice(0, 7),
      position: new Array(7).fill(0),
      velocity: [],
      effort: [],
    },
    model,
  );
  assert.deepEqual(partial.missing, names.slice(7));
  assert.ok(Number.isNaN(partial.position[7]));
});

test('RigCommand → one-point JointTrajectory; arms and grippers can be left out', () => {
  const pos = Float64Array.from({ length: 14 }, (_, k) => k);
  const t = rigCommandToJointTrajectory({ position: pos }, model, 1, 0.008);
  assert.equal(t.joint_names.length, 14);
  assert.deepEqual(t.points[0].positions, Array.from(pos));
  assert.deepEqual(t.points[0].time_from_start, { sec: 0, nanosec: 8_000_000 });
  assert.deepEqual(t.points[0].velocities, []);
  const right = rigCommandToJointTrajectory({ position: pos, velocity: pos }, model, 1, 0.008, {
    arms: [1],
    withoutGrippers: true,
  });
  assert.deepEqual(right.joint_names, [
    'right_joint1',
    'right_joint2',
    'right_joint3',
    'right_joint4',
    'right_joint5',
    'right_joint6',
  ]);
  assert.deepEqual(right.points[0].positions, [7, 8, 9, 10, 11, 12]);
  assert.deepEqual(right.points[0].velocities, [7, 8, 9, 10, 11, 12]);
});

test('the mapped messages encode as ROS 2 CDR and decode back unchanged', () => {
  const js = rigStateToJointState(state(), model, 12.25, 'base');
  const jsDef = parse(JOINT_STATE_DEFINITION, { ros2: true });
  const jsBytes = new MessageWriter(jsDef).writeMessage(js);
  const jsBack = new MessageReader(jsDef).readMessage<typeof js>(jsBytes);
  assert.deepEqual(jsBack.name, js.name);
  assert.deepEqual(Array.from(jsBack.position), js.position);
  assert.deepEqual(jsBack.header, { stamp: { sec: 12, nanosec: 250_000_000 }, frame_id: 'base' });
  const jt = rigCommandToJointTrajectory({ position: state().position }, model, 2, 0.004);
  const jtDef = parse(JOINT_TRAJECTORY_DEFINITION, { ros2: true });
  const jtBack = new MessageReader(jtDef).readMessage<typeof jt>(new MessageWriter(jtDef).writeMessage(jt));
  assert.deepEqual(jtBack.joint_names, jt.joint_names);
  assert.deepEqual(Array.from(jtBack.points[0].positions), jt.points[0].positions);
  assert.deepEqual(jtBack.points[0].time_from_start, { sec: 0, nanosec: 4_000_000 });
});
