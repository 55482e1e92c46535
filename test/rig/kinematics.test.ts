import { test } from 'node:test';
import assert from 'node:assert/strict';
import {
  forwardKinematics,
  forwardKinematicsTable,
  jacobian,
  linkFrames,
  linkFramesTable,
  LINK_NAMES,
  frameToPose,
  poseToFrame,
  tableToBase,
} from '../../src/rig/kinematics.js';
import { rotationErrorVector, solveIk } from '../../src/rig/inverse-kinematics.js';
import { YAM_HOME_EE_POSITION_M, YAM_JOINT_LIMITS_RAD, yamArm } from '../../src/rig/yam.js';
import { mulberry32 } from '../../src/policy/code/seeded-random.js';

function randomQ(rand: () => number, margin = 0.05): Float64Array {
  return Float64Array.from(YAM_JOINT_LIMITS_RAD, ([lo, hi]) => lo + margin + rand() * (hi - lo - 2 * margin));
}

/**
 * The vendor's own URDF, as published: i2rt-robotics/i2rt, i2rt/robot_models/arm/yam/yam.urdf
 * (commit aae24d6c6d677b86f6be4d8bf030442a8d170d58; the arm of i2rt v1.2.4, whose chain
 * /work/shared/reference/yam-rig.md and src/rig/yam.ts transcribe). Fixed origin (xyz, rpy) of
 * joints dof_joint0 (root → base, fixed at 0) to dof_joint6 (link5 → gripper), copied digit for
 * digit, tiny Onshape round-off included. At q = 0 the joints add no rotation, so the home pose is
 * these origins composed — computed below without the code under test.
 */
const VENDOR_URDF_ORIGINS: readonly (readonly [
  readonly [number, number, number],
  readonly [number, number, number],
])[] = [
  [
    [0, 0, 0],
    [0, 1.5708, 1.5708],
  ],
  [
    [-0.068, -6.80012e-16, -5.41234e-16],
    [8.32667e-17, 2.01874e-17, -3.6657e-17],
  ],
  [
    [-0.0455, -0.0339, -0.02],
    [4.86604e-16, 3.99049e-14, -3.14159],
  ],
  [
    [4.08431e-7, -0.0688, 0.264],
    [-1.01074e-14, 7.11653e-14, -3.14159],
  ],
  [
    [-0.0600003, -0.0688, -0.244999],
    [1.03997e-14, -8.62366e-14, -4.39823e-15],
  ],
  [
    [-0.0405003, 0.0338995, -0.0739989],
    [-2.58127e-15, -1.37665e-15, -1.04686e-15],
  ],
  [
    [0.0404996, 2.39858e-7, -0.0356],
    [1.00451e-15, -4.22055e-16, -1.11022e-16],
  ],
];

type M3 = number[][];
const mul = (a: M3, b: M3): M3 => a.map((r) => [0, 1, 2].map((j) => r[0] * b[0][j] + r[1] * b[1][j] + r[2] * b[2][j]));
const apply = (a: M3, v: readonly number[]): number[] => a.map((r) => r[0] * v[0] + r[1] * v[1] + r[2] * v[2]);
/** URDF rpy: R = Rz(yaw)·Ry(pitch)·Rx(roll). */
function urdfRpy([r, p, y]: readonly [number, number, number]): M3 {
  const rz = [
    [Math.cos(y), -Math.sin(y), 0],
    [Math.sin(y), Math.cos(y), 0],
    [0, 0, 1],
  ];
  const ry = [
    [Math.cos(p), 0, Math.sin(p)],
    [0, 1, 0],
    [-Math.sin(p), 0, Math.cos(p)],
  ];
  const rx = [
    [1, 0, 0],
    [0, Math.cos(r), -Math.sin(r)],
    [0, Math.sin(r), Math.cos(r)],
  ];
  return mul(mul(rz, ry), rx);
}

test('forward kinematics at q = 0 gives the home pose of the vendor URDF (i2rt yam.urdf), composed independently', () => {
  let R: M3 = [
    [1, 0, 0],
    [0, 1, 0],
    [0, 0, 1],
  ];
  let p = [0, 0, 0];
  for (const [xyz, rpy] of VENDOR_URDF_ORIGINS) {
    p = apply(R, xyz).map((v, i) => v + p[i]);
    R = mul(R, urdfRpy(rpy));
  }
  // The URDF's root frame faces its −y where our base faces +x: its root→base rpy is (0, π/2, π/2),
  // ours (0, π/2, π). Turn its numbers +90° about the vertical into our base frame.
  const toOurs: M3 = [
    [0, -1, 0],
    [1, 0, 0],
    [0, 0, 1],
  ];
  const homeP = apply(toOurs, p);
  const homeR = mul(toOurs, R);
  const f = forwardKinematics([0, 0, 0, 0, 0, 0]);
  for (let i = 0; i < 3; i++) {
    assert.ok(
      Math.abs(f.position[i] - homeP[i]) < 5e-6,
      `position[${i}] = ${f.position[i]}, the URDF says ${homeP[i]}`,
    );
    assert.ok(
      Math.abs(YAM_HOME_EE_POSITION_M[i] - homeP[i]) < 5e-6,
      `YAM_HOME_EE_POSITION_M[${i}] = ${YAM_HOME_EE_POSITION_M[i]}, the URDF says ${homeP[i]}`,
    );
  }
  for (let i = 0; i < 9; i++)
    assert.ok(
      Math.abs(f.rotation[i] - homeR[Math.floor(i / 3)][i % 3]) < 1e-5,
      `rotation[${i}] = ${f.rotation[i]}, the URDF says ${homeR[Math.floor(i / 3)][i % 3]}`,
    );
  // And the numbers the reference sheet quotes: position (0.110597, 0, 0.173502), rows [0 0 −1; 0 −1 0; −1 0 0].
  [0.110597, 0, 0.173502].forEach((v, i) =>
    assert.ok(Math.abs(homeP[i] - v) < 2e-6, `URDF home position[${i}] ${homeP[i]} vs the sheet's ${v}`),
  );
  assert.deepEqual(
    homeR.flat().map((v) => Math.round(v) + 0),
    [0, 0, -1, 0, -1, 0, -1, 0, 0],
  );
});

test('linkFrames returns base..gripper with the gripper frame equal to FK, and joint 1 turns about base z', () => {
  const frames = linkFrames([0.3, 0.5, 0.7, 0.1, -0.2, 0.4]);
  assert.equal(frames.length, LINK_NAMES.length);
  assert.deepEqual(LINK_NAMES, ['base_link', 'link1', 'link2', 'link3', 'link4', 'link5', 'gripper']);
  const ee = forwardKinematics([0.3, 0.5, 0.7, 0.1, -0.2, 0.4]);
  assert.deepEqual(Array.from(frames[6].position), Array.from(ee.position));
  // Joint 1's axis (−1,0,0) under rpy (0, π/2, π) is the base's vertical: turning it keeps the EE height.
  const a = forwardKinematics([0, 0.5, 0.7, 0, 0, 0]);
  const b = forwardKinematics([1.0, 0.5, 0.7, 0, 0, 0]);
  assert.ok(Math.abs(a.position[2] - b.position[2]) < 1e-9);
  assert.ok(Math.abs(Math.hypot(a.position[0], a.position[1]) - Math.hypot(b.position[0], b.position[1])) < 1e-9);
});

test('table-frame FK goes through the arm base pose', () => {
  const arm = yamArm('left', {
    position: [-0.4, 0.3, 0.01],
    quaternion: [0, 0, Math.sin(Math.PI / 8), Math.cos(Math.PI / 8)],
  });
  const q = [0.2, 0.8, 0.9, -0.3, 0.1, 0.5];
  const inBase = forwardKinematics(q);
  const inTable = forwardKinematicsTable(arm, q);
  const back = tableToBase(arm.basePose, inTable);
  for (let i = 0; i < 3; i++) assert.ok(Math.abs(back.position[i] - inBase.position[i]) < 1e-12);
  // 45° yaw: a base-frame x offset becomes a (cos, sin) table offset.
  const home = forwardKinematicsTable(arm, [0, 0, 0, 0, 0, 0]);
  const c = Math.SQRT1_2;
  assert.ok(Math.abs(home.position[0] - (-0.4 + c * YAM_HOME_EE_POSITION_M[0])) < 1e-5);
  assert.ok(Math.abs(home.position[1] - (0.3 + c * YAM_HOME_EE_POSITION_M[0])) < 1e-5);
  assert.ok(Math.abs(home.position[2] - (0.01 + YAM_HOME_EE_POSITION_M[2])) < 1e-5);
  const frames = linkFramesTable(arm, q);
  assert.ok(Math.abs(frames[0].position[2] - 0.01) < 1e-12);
  // Pose round trip through quaternions.
  const again = poseToFrame(frameToPose(inTable));
  for (let i = 0; i < 9; i++) assert.ok(Math.abs(again.rotation[i] - inTable.rotation[i]) < 1e-12);
});

test('the Jacobian matches finite differences of FK (position and orientation)', () => {
  const rand = mulberry32(7);
  const tool = [0.01, -0.02, -0.12];
  for (let trial = 0; trial < 20; trial++) {
    const q = randomQ(rand);
    const J = jacobian(q, new Float64Array(36), tool);
    const h = 1e-6;
    for (let j = 0; j < 6; j++) {
      const qp = Float64Array.from(q);
      qp[j] += h;
      const qm = Float64Array.from(q);
      qm[j] -= h;
      const fp = forwardKinematics(qp);
      const fm = forwardKinematics(qm);
      const pt = (f: ReturnType<typeof forwardKinematics>) =>
        [0, 1, 2].map(
          (r) =>
            f.position[r] +
            f.rotation[r * 3] * tool[0] +
            f.rotation[r * 3 + 1] * tool[1] +
            f.rotation[r * 3 + 2] * tool[2],
        );
      const pp = pt(fp),
        pm = pt(fm);
      for (let r = 0; r < 3; r++) {
        const fd = (pp[r] - pm[r]) / (2 * h);
        assert.ok(
          Math.abs(fd - J[r * 6 + j]) < 1e-6,
          `trial ${trial} joint ${j} row ${r}: fd ${fd} vs J ${J[r * 6 + j]}`,
        );
      }
      const w = new Float64Array(3);
      rotationErrorVector(fp.rotation, fm.rotation, w);
      for (let r = 0; r < 3; r++) {
        const fd = w[r] / (2 * h);
        assert.ok(Math.abs(fd - J[(3 + r) * 6 + j]) < 1e-6, `trial ${trial} joint ${j} angular row ${r}`);
      }
    }
  }
});

test('IK round-trips random reachable full poses within limits', () => {
  const rand = mulberry32(42);
  let solved = 0;
  const trials = 40;
  for (let t = 0; t < trials; t++) {
    const qTrue = randomQ(rand);
    const target = forwardKinematics(qTrue);
    const r = solveIk({ position: target.position, rotation: target.rotation });
    if (!r.ok) continue;
    solved++;
    const f = forwardKinematics(r.q);
    assert.ok(
      Math.hypot(
        f.position[0] - target.position[0],
        f.position[1] - target.position[1],
        f.position[2] - target.position[2],
      ) < 5e-4,
    );
    const e = new Float64Array(3);
    rotationErrorVector(target.rotation, f.rotation, e);
    assert.ok(Math.hypot(e[0], e[1], e[2]) < 5e-3);
    r.q.forEach((v, i) =>
      assert.ok(v >= YAM_JOINT_LIMITS_RAD[i][0] && v <= YAM_JOINT_LIMITS_RAD[i][1], `joint ${i} = ${v} outside limits`),
    );
  }
  assert.ok(solved >= trials * 0.95, `solved ${solved}/${trials}`);
});

test('IK with an approach axis only: the gripper points where asked, rotation about it is free', () => {
  const rand = mulberry32(3);
  let solved = 0;
  for (let t = 0; t < 20; t++) {
    const target = forwardKinematics(randomQ(rand));
    const approach = [-target.rotation[2], -target.rotation[5], -target.rotation[8]];
    const r = solveIk({ position: target.position, approach });
    if (!r.ok) continue;
    solved++;
    const f = forwardKinematics(r.q);
    const dot = -f.rotation[2] * approach[0] - f.rotation[5] * approach[1] - f.rotation[8] * approach[2];
    assert.ok(dot > Math.cos(5e-3));
  }
  assert.ok(solved >= 19, `solved ${solved}/20`);
  // A top-down grasp point in front of the arm.
  const down = solveIk({ position: [0.35, 0.05, 0.08], approach: [0, 0, -1] });
  assert.ok(down.ok, down.ok ? '' : down.reason);
});

test('IK reports failure for unreachable targets instead of returning garbage', () => {
  const far = solveIk({ position: [1.5, 0, 0.2] });
  assert.equal(far.ok, false);
  assert.match(!far.ok ? far.reason : '', /No joint configuration within limits reaches the target/);
  assert.ok(far.positionErrorM > 0.5);
  const bad = solveIk({ position: [NaN, 0, 0] });
  assert.equal(bad.ok, false);
});

test('IK uses the given seed first (staying near the current pose) and is deterministic', () => {
  const q0 = Float64Array.from([0.4, 1.0, 1.2, 0.2, -0.3, 0.6]);
  const f = forwardKinematics(q0);
  const r1 = solveIk({ position: f.position, rotation: f.rotation }, { seed: q0 });
  assert.ok(r1.ok);
  assert.equal(r1.ok && r1.iterations, 0);
  const nudged = Float64Array.from(f.position);
  nudged[2] += 0.01;
  const a = solveIk({ position: nudged, rotation: f.rotation }, { seed: q0 });
  const b = solveIk({ position: nudged, rotation: f.rotation }, { seed: q0 });
  assert.ok(a.ok && b.ok);
  assert.deepEqual(Array.from(a.ok ? a.q : []), Array.from(b.ok ? b.q : []));
  if (a.ok) for (let i = 0; i < 6; i++) assert.ok(Math.abs(a.q[i] - q0[i]) < 0.2);
});

test('roll-pitch-yaw converts both ways (URDF origins), including at gimbal lock', async () => {
  const { rotationToRpy, rpyToRotation } = await import('../../src/rig/kinematics.js');
  const rand = mulberry32(11);
  const cases: [number, number, number][] = [
    [0, Math.PI / 2, Math.PI],
    [0.3, -Math.PI / 2, 1.0],
  ];
  for (let i = 0; i < 50; i++) cases.push([(rand() - 0.5) * 6, (rand() - 0.5) * 3, (rand() - 0.5) * 6]);
  for (const rpy of cases) {
    const R = rpyToRotation(rpy);
    const back = rpyToRotation(rotationToRpy(R));
    for (let k = 0; k < 9; k++) assert.ok(Math.abs(back[k] - R[k]) < 1e-9, `rpy ${rpy.join(',')}`);
  }
});
