/**
 * Kinematics of one YAM arm: forward kinematics, every link frame and the geometric Jacobian
 * (inverse kinematics: inverse-kinematics.ts). Pure math on the chain in yam.ts — no I/O, no Node
 * built-ins — so the sim, the code policies, URDF export and the UI's 3D view all agree.
 *
 * Conventions
 * - A `Frame` is a rigid transform: `rotation` 3×3 row-major (9 entries), `position` in metres.
 *   Its columns are the frame's x/y/z axes expressed in the parent frame.
 * - "Base frame" is the arm's `base_link`; "table frame" is geometry.ts's frame, reached through
 *   the arm's `basePose`.
 * - The end-effector frame is the `gripper` link (after joint 6). Its −z axis points out of the
 *   flange towards the fingers (the approach axis); the fingers open along its ±y axis.
 * - Joint vectors are the arm's 6 joints in chain order (radians); the gripper is not in the chain.
 *
 * Written here rather than taken from a library because none of the maintained JS robotics
 * packages gives a pure, allocation-light DLS IK with joint limits that can run inside a
 * pure room and a worker thread; the math is ~300 lines and checked against finite differences.
 */
import type { Pose3 } from '../tasks/geometry.js';
import type { ArmModel } from './contract.js';
import { YAM_CHAIN, type ChainJoint } from './yam.js';

export interface Frame {
  /** 3×3 rotation, row-major. */
  readonly rotation: Float64Array;
  /** Metres. */
  readonly position: Float64Array;
}

export const ARM_JOINT_COUNT = 6;
/** Names of the frames linkFrames() returns, in order: base, link1..link5, gripper (end effector). */
export const LINK_NAMES: readonly string[] = ['base_link', ...YAM_CHAIN.map((c) => c.child)];
/** The gripper-frame axis that points from the flange towards the fingers. */
export const APPROACH_AXIS_LOCAL: readonly [number, number, number] = [0, 0, -1];

export function newFrame(): Frame {
  const f = { rotation: new Float64Array(9), position: new Float64Array(3) };
  f.rotation[0] = f.rotation[4] = f.rotation[8] = 1;
  return f;
}

export function copyFrame(src: Frame, out: Frame = newFrame()): Frame {
  out.rotation.set(src.rotation);
  out.position.set(src.position);
  return out;
}

/** out = a · b (may alias either input). */
export function composeFrames(a: Frame, b: Frame, out: Frame = newFrame()): Frame {
  const A = a.rotation;
  const B = b.rotation;
  const r = TMP_R;
  for (let i = 0; i < 3; i++) {
    for (let j = 0; j < 3; j++) r[i * 3 + j] = A[i * 3] * B[j] + A[i * 3 + 1] * B[3 + j] + A[i * 3 + 2] * B[6 + j];
  }
  const bp = b.position;
  const px = A[0] * bp[0] + A[1] * bp[1] + A[2] * bp[2] + a.position[0];
  const py = A[3] * bp[0] + A[4] * bp[1] + A[5] * bp[2] + a.position[1];
  const pz = A[6] * bp[0] + A[7] * bp[1] + A[8] * bp[2] + a.position[2];
  out.rotation.set(r);
  out.position[0] = px;
  out.position[1] = py;
  out.position[2] = pz;
  return out;
}
const TMP_R = new Float64Array(9);

/** Rotation from roll-pitch-yaw applied as R = Rz(yaw)·Ry(pitch)·Rx(roll) (URDF convention). */
export function rpyToRotation(
  rpy: readonly [number, number, number],
  out: Float64Array = new Float64Array(9),
): Float64Array {
  const [r, p, y] = rpy;
  const cr = Math.cos(r),
    sr = Math.sin(r),
    cp = Math.cos(p),
    sp = Math.sin(p),
    cy = Math.cos(y),
    sy = Math.sin(y);
  out[0] = cy * cp;
  out[1] = cy * sp * sr - sy * cr;
  out[2] = cy * sp * cr + sy * sr;
  out[3] = sy * cp;
  out[4] = sy * sp * sr + cy * cr;
  out[5] = sy * sp * cr - cy * sr;
  out[6] = -sp;
  out[7] = cp * sr;
  out[8] = cp * cr;
  return out;
}

/** Rotation → roll-pitch-yaw with R = Rz(yaw)·Ry(pitch)·Rx(roll) (URDF convention). */
export function rotationToRpy(R: ArrayLike<number>): [number, number, number] {
  const sp = clamp(-R[6], -1, 1);
  const pitch = Math.asin(sp);
  if (Math.abs(sp) > 1 - 1e-12) {
    // Gimbal lock: put all of the remaining rotation into yaw.
    return [0, pitch, Math.atan2(-R[1], R[4])];
  }
  return [Math.atan2(R[7], R[8]), pitch, Math.atan2(R[3], R[0])];
}

/** Rotation by `angle` about the unit `axis` (Rodrigues). */
export function axisAngleToRotation(
  axis: ArrayLike<number>,
  angle: number,
  out: Float64Array = new Float64Array(9),
): Float64Array {
  const x = axis[0],
    y = axis[1],
    z = axis[2];
  const c = Math.cos(angle),
    s = Math.sin(angle),
    t = 1 - c;
  out[0] = t * x * x + c;
  out[1] = t * x * y - s * z;
  out[2] = t * x * z + s * y;
  out[3] = t * x * y + s * z;
  out[4] = t * y * y + c;
  out[5] = t * y * z - s * x;
  out[6] = t * x * z - s * y;
  out[7] = t * y * z + s * x;
  out[8] = t * z * z + c;
  return out;
}

/** Unit quaternion (x, y, z, w) → rotation. */
export function quaternionToRotation(
  q: readonly [number, number, number, number],
  out: Float64Array = new Float64Array(9),
): Float64Array {
  const n = Math.hypot(q[0], q[1], q[2], q[3]) || 1;
  const x = q[0] / n,
    y = q[1] / n,
    z = q[2] / n,
    w = q[3] / n;
  out[0] = 1 - 2 * (y * y + z * z);
  out[1] = 2 * (x * y - z * w);
  out[2] = 2 * (x * z + y * w);
  out[3] = 2 * (x * y + z * w);
  out[4] = 1 - 2 * (x * x + z * z);
  out[5] = 2 * (y * z - x * w);
  out[6] = 2 * (x * z - y * w);
  out[7] = 2 * (y * z + x * w);
  out[8] = 1 - 2 * (x * x + y * y);
  return out;
}

/** Rotation → unit quaternion (x, y, z, w), w ≥ 0. */
export function rotationToQuaternion(R: ArrayLike<number>): [number, number, number, number] {
  const tr = R[0] + R[4] + R[8];
  let x: number, y: number, z: number, w: number;
  if (tr > 0) {
    const s = Math.sqrt(tr + 1) * 2;
    w = s / 4;
    x = (R[7] - R[5]) / s;
    y = (R[2] - R[6]) / s;
    z = (R[3] - R[1]) / s;
  } else if (R[0] > R[4] && R[0] > R[8]) {
    const s = Math.sqrt(1 + R[0] - R[4] - R[8]) * 2;
    w = (R[7] - R[5]) / s;
    x = s / 4;
    y = (R[1] + R[3]) / s;
    z = (R[2] + R[6]) / s;
  } else if (R[4] > R[8]) {
    const s = Math.sqrt(1 + R[4] - R[0] - R[8]) * 2;
    w = (R[2] - R[6]) / s;
    x = (R[1] + R[3]) / s;
    y = s / 4;
    z = (R[5] + R[7]) / s;
  } else {
    const s = Math.sqrt(1 + R[8] - R[0] - R[4]) * 2;
    w = (R[3] - R[1]) / s;
    x = (R[2] + R[6]) / s;
    y = (R[5] + R[7]) / s;
    z = s / 4;
  }
  return w < 0 ? [-x, -y, -z, -w] : [x, y, z, w];
}

export function poseToFrame(pose: Pose3, out: Frame = newFrame()): Frame {
  quaternionToRotation(pose.quaternion, out.rotation);
  out.position[0] = pose.position[0];
  out.position[1] = pose.position[1];
  out.position[2] = pose.position[2];
  return out;
}

export function frameToPose(f: Frame): Pose3 {
  return { position: [f.position[0], f.position[1], f.position[2]], quaternion: rotationToQuaternion(f.rotation) };
}

/** Inverse of a rigid transform. */
export function invertFrame(f: Frame, out: Frame = newFrame()): Frame {
  const R = f.rotation;
  const p = f.position;
  const t = TMP_R;
  t[0] = R[0];
  t[1] = R[3];
  t[2] = R[6];
  t[3] = R[1];
  t[4] = R[4];
  t[5] = R[7];
  t[6] = R[2];
  t[7] = R[5];
  t[8] = R[8];
  const x = -(t[0] * p[0] + t[1] * p[1] + t[2] * p[2]);
  const y = -(t[3] * p[0] + t[4] * p[1] + t[5] * p[2]);
  const z = -(t[6] * p[0] + t[7] * p[1] + t[8] * p[2]);
  out.rotation.set(t);
  out.position[0] = x;
  out.position[1] = y;
  out.position[2] = z;
  return out;
}

/** Fixed part of each chain joint (origin xyz + rpy), computed once. */
const FIXED: readonly Frame[] = YAM_CHAIN.map((c: ChainJoint) => {
  const f = newFrame();
  rpyToRotation(c.rpy, f.rotation);
  f.position.set(c.xyz);
  return f;
});

/**
 * Every link frame in the arm's base frame for joint angles q (6 entries):
 * [base_link, link1, …, link5, gripper]. Pass `out` (7 frames) to avoid allocation.
 *
 * Written out by hand (R_{i+1} = R_i · R_fixed,i · Rot(axis_i, q_i), p_{i+1} = p_i + R_i · xyz_i)
 * because the code policies' IK evaluates it hundreds of thousands of times per episode.
 */
export function linkFrames(q: ArrayLike<number>, out: Frame[] = LINK_NAMES.map(() => newFrame())): Frame[] {
  const base = out[0];
  base.rotation.fill(0);
  base.rotation[0] = base.rotation[4] = base.rotation[8] = 1;
  base.position.fill(0);
  for (let i = 0; i < ARM_JOINT_COUNT; i++) {
    const R = out[i].rotation;
    const P = out[i].position;
    const F = FIXED[i].rotation;
    const t = FIXED[i].position;
    const o = out[i + 1];
    o.position[0] = P[0] + R[0] * t[0] + R[1] * t[1] + R[2] * t[2];
    o.position[1] = P[1] + R[3] * t[0] + R[4] * t[1] + R[5] * t[2];
    o.position[2] = P[2] + R[6] * t[0] + R[7] * t[1] + R[8] * t[2];
    // M = R · F
    const m0 = R[0] * F[0] + R[1] * F[3] + R[2] * F[6],
      m1 = R[0] * F[1] + R[1] * F[4] + R[2] * F[7],
      m2 = R[0] * F[2] + R[1] * F[5] + R[2] * F[8];
    const m3 = R[3] * F[0] + R[4] * F[3] + R[5] * F[6],
      m4 = R[3] * F[1] + R[4] * F[4] + R[5] * F[7],
      m5 = R[3] * F[2] + R[4] * F[5] + R[5] * F[8];
    const m6 = R[6] * F[0] + R[7] * F[3] + R[8] * F[6],
      m7 = R[6] * F[1] + R[7] * F[4] + R[8] * F[7],
      m8 = R[6] * F[2] + R[7] * F[5] + R[8] * F[8];
    // out = M · Rot(axis, q) (Rodrigues)
    const a = YAM_CHAIN[i].axis;
    const x = a[0],
      y = a[1],
      z = a[2];
    const c = Math.cos(q[i]),
      s = Math.sin(q[i]),
      k = 1 - c;
    const r0 = k * x * x + c,
      r1 = k * x * y - s * z,
      r2 = k * x * z + s * y;
    const r3 = k * x * y + s * z,
      r4 = k * y * y + c,
      r5 = k * y * z - s * x;
    const r6 = k * x * z - s * y,
      r7 = k * y * z + s * x,
      r8 = k * z * z + c;
    const O = o.rotation;
    O[0] = m0 * r0 + m1 * r3 + m2 * r6;
    O[1] = m0 * r1 + m1 * r4 + m2 * r7;
    O[2] = m0 * r2 + m1 * r5 + m2 * r8;
    O[3] = m3 * r0 + m4 * r3 + m5 * r6;
    O[4] = m3 * r1 + m4 * r4 + m5 * r7;
    O[5] = m3 * r2 + m4 * r5 + m5 * r8;
    O[6] = m6 * r0 + m7 * r3 + m8 * r6;
    O[7] = m6 * r1 + m7 * r4 + m8 * r7;
    O[8] = m6 * r2 + m7 * r5 + m8 * r8;
  }
  return out;
}

const SCRATCH_LINKS: Frame[] = LINK_NAMES.map(() => newFrame());

/** End-effector (gripper link) frame in the arm's base frame. */
export function forwardKinematics(q: ArrayLike<number>, out: Frame = newFrame()): Frame {
  linkFrames(q, SCRATCH_LINKS);
  return copyFrame(SCRATCH_LINKS[ARM_JOINT_COUNT], out);
}

/** A base-frame frame expressed in the table frame through the arm's base pose. */
export function baseToTable(basePose: Pose3, f: Frame, out: Frame = newFrame()): Frame {
  return composeFrames(poseToFrame(basePose), f, out);
}

/** A table-frame frame expressed in the arm's base frame. */
export function tableToBase(basePose: Pose3, f: Frame, out: Frame = newFrame()): Frame {
  return composeFrames(invertFrame(poseToFrame(basePose)), f, out);
}

/** End-effector frame in the table frame. */
export function forwardKinematicsTable(
  arm: Pick<ArmModel, 'basePose'>,
  q: ArrayLike<number>,
  out: Frame = newFrame(),
): Frame {
  return baseToTable(arm.basePose, forwardKinematics(q, out), out);
}

/** Every link frame in the table frame (the renderer's and the UI's view of an arm). */
export function linkFramesTable(
  arm: Pick<ArmModel, 'basePose'>,
  q: ArrayLike<number>,
  out: Frame[] = LINK_NAMES.map(() => newFrame()),
): Frame[] {
  linkFrames(q, out);
  const base = poseToFrame(arm.basePose);
  for (const f of out) composeFrames(base, f, f);
  return out;
}

/**
 * Geometric Jacobian (6×6, row-major: rows vx, vy, vz, wx, wy, wz; columns joints 1..6) in the
 * base frame, for the point `toolOffset` (metres, in the gripper frame; default the flange origin).
 */
export function jacobian(
  q: ArrayLike<number>,
  out: Float64Array = new Float64Array(36),
  toolOffset: ArrayLike<number> = ZERO3,
): Float64Array {
  return jacobianOfFrames(linkFrames(q, SCRATCH_LINKS), out, toolOffset);
}

/** jacobian() from link frames already computed for the same joint angles. */
export function jacobianOfFrames(
  frames: readonly Frame[],
  out: Float64Array,
  toolOffset: ArrayLike<number>,
): Float64Array {
  const ee = frames[ARM_JOINT_COUNT];
  const R = ee.rotation;
  const px = ee.position[0] + R[0] * toolOffset[0] + R[1] * toolOffset[1] + R[2] * toolOffset[2];
  const py = ee.position[1] + R[3] * toolOffset[0] + R[4] * toolOffset[1] + R[5] * toolOffset[2];
  const pz = ee.position[2] + R[6] * toolOffset[0] + R[7] * toolOffset[1] + R[8] * toolOffset[2];
  for (let i = 0; i < ARM_JOINT_COUNT; i++) {
    // Joint i rotates link i+1 about its own axis; the axis is the same before and after the rotation.
    const f = frames[i + 1];
    const a = YAM_CHAIN[i].axis;
    const Ri = f.rotation;
    const zx = Ri[0] * a[0] + Ri[1] * a[1] + Ri[2] * a[2];
    const zy = Ri[3] * a[0] + Ri[4] * a[1] + Ri[5] * a[2];
    const zz = Ri[6] * a[0] + Ri[7] * a[1] + Ri[8] * a[2];
    const dx = px - f.position[0],
      dy = py - f.position[1],
      dz = pz - f.position[2];
    out[0 * 6 + i] = zy * dz - zz * dy;
    out[1 * 6 + i] = zz * dx - zx * dz;
    out[2 * 6 + i] = zx * dy - zy * dx;
    out[3 * 6 + i] = zx;
    out[4 * 6 + i] = zy;
    out[5 * 6 + i] = zz;
  }
  return out;
}
const ZERO3: readonly number[] = [0, 0, 0];

function clamp(x: number, lo: number, hi: number): number {
  return x < lo ? lo : x > hi ? hi : x;
}
