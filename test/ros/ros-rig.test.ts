import { test } from 'node:test';
import assert from 'node:assert/strict';
import { SteppedClock } from '../../src/rig/clocks.js';
import { yamRigModel } from '../../src/rig/yam.js';
import { RigError } from '../../src/rig/contract.js';
import { MirrorRig } from '../../src/rig/mirror-rig.js';
import { RosRig } from '../../ros/ros-rig.js';
import { JointStateMirror } from '../../ros/joint-state-mirror.js';
import { ROS_UNAVAILABLE_PREFIX, loadRos, resetRosLoaderForTests } from '../../ros/rclnodejs-loader.js';
import { describeRigContract, tickThrough } from '../rig/contract-suite.js';
import { FakeYamRosDriver, InMemoryRosGraph } from './in-memory-ros.js';
import type { JointStateMsg, JointTrajectoryMsg } from '../../ros/messages.js';

const HOME = [0, 0.02, 0.02, 0, 0, 0, 0.5, 0, 0.02, 0.02, 0, 0, 0, 0.5];

function rosRigUnderTest() {
  const model = yamRigModel();
  const graph = new InMemoryRosGraph();
  const driver = new FakeYamRosDriver(graph, model, HOME);
  const clock = new SteppedClock((t) => driver.stepTo(t));
  const rig = new RosRig({ node: graph.createNode('tandem'), model, clock });
  driver.publish();
  return { rig, clock, driver, graph };
}

// A fault, as a ROS 2 stack shows one: its driver stops publishing JointState (RosRig sees no
// per-arm motor errors, so the fault is the whole rig's); cleared when it publishes again.
describeRigContract('RosRig over an in-memory ROS graph', async () => {
  const { rig, clock, driver } = rosRigUnderTest();
  return {
    rig,
    clock,
    advance: (s: number) => tickThrough(rig, clock, s),
    dispose: async () => {},
    injectFault: () => void (driver.silent = true),
    clearFaults: () => {
      driver.silent = false;
      driver.publish();
    },
  };
});

test('RosRig publishes only supervised targets, and damps through the emergency_stop service', async () => {
  const { rig, clock, driver, graph } = rosRigUnderTest();
  await rig.configure();
  await rig.activate();
  const target = Float64Array.from(HOME);
  target[0] = 9; // far beyond joint 1's limit
  rig.write({ position: target });
  rig.tick();
  const last = graph.published.filter((p) => p.topic === '/yam/joint_command').pop()!.msg as JointTrajectoryMsg;
  assert.ok(
    last.points[0].positions[0] <= yamRigModel().arms[0].joints[0].maxRad,
    'the clamp happened before ROS saw it',
  );
  rig.estop('test');
  await tickThrough(rig, clock, 0.02);
  assert.equal(driver.estopped, true);
  assert.equal(rig.read().mode, 'estopped');
});

test('RosRig: no JointState → configure refuses with the topic named; a silent topic while running is a fault', async () => {
  const graph = new InMemoryRosGraph();
  const clock = new SteppedClock();
  const rig = new RosRig({ node: graph.createNode('t'), clock, firstStateTimeoutMs: 50 });
  await assert.rejects(
    rig.configure(),
    (e: unknown) =>
      e instanceof RigError &&
      /No JointState on \/yam\/joint_states within 0.05 s; is the YAM ROS 2 driver running/.test(e.message),
  );
  const u = rosRigUnderTest();
  await u.rig.configure();
  await u.rig.activate();
  // The driver dies: the clock moves but nobody publishes.
  u.driver.publish = () => {};
  await tickThrough(u.rig, u.clock, 0.3);
  const s = u.rig.read();
  assert.equal(s.mode, 'fault');
  assert.match(
    s.faults[0].message,
    /No JointState on \/yam\/joint_states for \d+ ms; the ROS 2 driver or the network stopped\./,
  );
});

test("JointStateMirror publishes any rig's state as sensor_msgs/msg/JointState each tick", async () => {
  const graph = new InMemoryRosGraph();
  const clock = new SteppedClock();
  const mirror = new JointStateMirror(new MirrorRig({ model: yamRigModel(), clock }), graph.createNode('m'), {
    everyNthTick: 2,
  });
  await mirror.configure();
  await mirror.activate();
  await tickThrough(mirror, clock, 0.04);
  const msgs = graph.published.filter((p) => p.topic === '/tandem/joint_states');
  assert.equal(msgs.length, 5);
  assert.equal(msgs[0].type, 'sensor_msgs/msg/JointState');
  const js = msgs[4].msg as JointStateMsg;
  assert.equal(js.name.length, 14);
  assert.equal(js.name[13], 'right_gripper');
});

test('without rclnodejs the bridge says so once, clearly, and does not throw', async () => {
  resetRosLoaderForTests();
  const said: string[] = [];
  const missing = () => Promise.reject(new Error("Cannot find package 'rclnodejs' imported from /work/main/ros"));
  const a = await loadRos({ importer: missing, warn: (m) => said.push(m) });
  const b = await loadRos({ importer: missing, warn: (m) => said.push(m) });
  assert.equal(a.available, false);
  assert.equal(b.available, false);
  assert.equal(said.length, 1);
  assert.ok(said[0].startsWith(`${ROS_UNAVAILABLE_PREFIX}: Cannot find package 'rclnodejs'`));
  assert.match(said[0], /everything else works/);
  resetRosLoaderForTests();
  // And the real import on this machine (no ROS 2) takes the same path.
  const real = await loadRos({ warn: () => {} });
  assert.equal(real.available, false);
});
