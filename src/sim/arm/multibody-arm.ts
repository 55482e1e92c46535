/**
 * Sim arm joints as one Rapier multibody (calibration armJoints 'multibody', an experiment):
 * reduced coordinates, so the joints are exact at any substep. rapier.js gives multibody joints no
 * motor, so the law's damping is solved here in joint space (finishDrive), and no way to set a
 * coordinate, so the link bodies are turned about their axes to start at q0 (bodyToLink).
 * docs/sim.md "Multibody arms" has the measurements.
 */
import type { JointData, RigidBody, World } from '@dimforge/rapier3d-deterministic-compat';
import { quatConj, quatMul, quatRotate, type Quat, type Vec3 } from '../../pose/quaternion.js';
import type { Rapier } from '../rapier.js';
import { quatObj, turn } from './body-frames.js';
import type { ArmJointModel, ArmReading } from './joint-model.js';

/**
 * Rapier gives every multibody degree of freedom an implicit damping of 0.1 N·m·s/rad that
 * rapier.js 0.21 cannot change (measured: a free joint under a constant torque τ settles at
 * τ / 0.1 rad/s); the law's damping is reduced by it.
 */
const MULTIBODY_BUILTIN_DAMPING_NMS = 0.1;

export class MultibodyArmJoints implements ArmJointModel {
  readonly joints = [];
  /** Per joint, this step: the damping D and its target velocity v. */
  private readonly dampingD = new Float64Array(6);
  private readonly dampingV = new Float64Array(6);
  /** Each carried body's principal inertia (8 × xyz) and its principal frame in the link's frame. */
  private readonly carriedInertia = new Float64Array(24);
  private readonly carriedInertiaFrame: Quat[] = [];
  private readonly massScratch = new Float64Array(36);
  private readonly solveScratch = new Float64Array(36);
  private readonly rhsScratch = new Float64Array(6);
  private readonly inertiaScratch = new Float64Array(9);
  private readonly linScratch = new Float64Array(18);
  private readonly angScratch = new Float64Array(18);

  constructor(private readonly arm: ArmReading) {}

  bodyToLink(R: Rapier, fixedRot: Quat, parentToLink: Quat, axis: Vec3, q0: number): Quat {
    return multibodyBodyToLink(R, fixedRot, parentToLink, axis, q0);
  }

  connect(_R: Rapier, world: World, _i: number, data: JointData, parent: RigidBody, child: RigidBody): void {
    world.createMultibodyJoint(data, parent, child, true).setContactsEnabled(false);
  }

  carry(k: number, body: RigidBody, fromLink: Quat): void {
    const pi = body.principalInertia();
    const pf = body.principalInertiaLocalFrame();
    this.carriedInertia.set([pi.x, pi.y, pi.z], k * 3);
    this.carriedInertiaFrame.push(turn(fromLink, [pf.x, pf.y, pf.z, pf.w]));
  }

  readLinkRotation(
    b: number,
    r: { x: number; y: number; z: number; w: number },
    bodyToLink: Quat,
    out: Float64Array,
  ): void {
    out.set(quatMul([r.x, r.y, r.z, r.w], bodyToLink), b * 4);
  }

  damp(i: number, D: number, v: number): void {
    this.dampingD[i] = D;
    this.dampingV[i] = v;
  }

  /**
   * The damping torques D·(v − dq⁺), added to `drive` and held over the next step: the implicit
   * velocity motor of the impulse arm done by hand, as one linearly implicit step of the chain's
   * joint-space dynamics,
   *     (M + h·D)·dq⁺ = M·dq + h·(τ + D·v),
   * with M the joint-space mass matrix of the measured pose (links, armature, fingers carried by
   * the gripper) and τ the stiffness torques; contacts and Coriolis terms are left out of this
   * prediction (Rapier applies them). Rapier's own multibody damping already supplies part of D.
   */
  finishDrive(drive: Float64Array): void {
    const h = this.arm.physicsStepS;
    const M = this.jointMass();
    const A = this.solveScratch;
    const b = this.rhsScratch;
    const dqSolver = this.arm.dqSolver;
    for (let i = 0; i < 6; i++) {
      let mdq = 0;
      for (let j = 0; j < 6; j++) {
        A[i * 6 + j] = M[i * 6 + j];
        mdq += M[i * 6 + j] * dqSolver[j];
      }
      A[i * 6 + i] += h * this.dampingD[i];
      b[i] = mdq + h * (drive[i] + this.dampingD[i] * this.dampingV[i]);
    }
    choleskySolve6(A, b);
    for (let i = 0; i < 6; i++) {
      const D = this.dampingD[i];
      const v = this.dampingV[i];
      const explicit = Math.max(D - MULTIBODY_BUILTIN_DAMPING_NMS, 0);
      const t = explicit * (v - b[i]) + MULTIBODY_BUILTIN_DAMPING_NMS * v;
      const tMax = this.arm.model.joints[i].maxTorqueNm;
      drive[i] += t > tMax ? tMax : t < -tMax ? -tMax : t;
    }
  }

  /**
   * Joint-space mass matrix (6×6, row-major) at the last reading: Σ over the carried bodies of
   * m·Jvᵀ·Jv + Jωᵀ·I·Jω, where joint j moves every body it carries (links j+1.., the fingers) about
   * its axis through its origin.
   */
  private jointMass(): Float64Array {
    const M = this.massScratch;
    M.fill(0);
    const ax = this.arm.axisWorld;
    const org = this.arm.linkOrigin;
    const com = this.arm.carriedComWorld;
    const rot = this.arm.linkRot;
    const Iw = this.inertiaScratch;
    const lin = this.linScratch;
    const ang = this.angScratch;
    for (let k = 0; k < 8; k++) {
      // The body's inertia in the world: its link's rotation times its inertia in the link frame.
      const p = (k < 6 ? k + 1 : 6) * 4;
      const q: Quat = quatMul([rot[p], rot[p + 1], rot[p + 2], rot[p + 3]], this.carriedInertiaFrame[k]);
      worldInertia(q, this.carriedInertia, k * 3, Iw);
      const m = this.arm.carriedMass[k];
      const n = Math.min(k, 5) + 1; // joints 0..min(k,5) carry body k
      for (let j = 0; j < n; j++) {
        const a0 = ax[j * 3],
          a1 = ax[j * 3 + 1],
          a2 = ax[j * 3 + 2];
        const o = (j + 1) * 3;
        const r0 = com[k * 3] - org[o],
          r1 = com[k * 3 + 1] - org[o + 1],
          r2 = com[k * 3 + 2] - org[o + 2];
        lin[j * 3] = a1 * r2 - a2 * r1;
        lin[j * 3 + 1] = a2 * r0 - a0 * r2;
        lin[j * 3 + 2] = a0 * r1 - a1 * r0;
        ang[j * 3] = Iw[0] * a0 + Iw[1] * a1 + Iw[2] * a2;
        ang[j * 3 + 1] = Iw[3] * a0 + Iw[4] * a1 + Iw[5] * a2;
        ang[j * 3 + 2] = Iw[6] * a0 + Iw[7] * a1 + Iw[8] * a2;
      }
      for (let i = 0; i < n; i++) {
        for (let j = 0; j <= i; j++) {
          const v =
            m * (lin[i * 3] * lin[j * 3] + lin[i * 3 + 1] * lin[j * 3 + 1] + lin[i * 3 + 2] * lin[j * 3 + 2]) +
            ax[i * 3] * ang[j * 3] +
            ax[i * 3 + 1] * ang[j * 3 + 1] +
            ax[i * 3 + 2] * ang[j * 3 + 2];
          M[i * 6 + j] += v;
          if (i !== j) M[j * 6 + i] += v;
        }
      }
    }
    return M;
  }
}

/**
 * bodyToLink of a multibody arm's child link: a turn about the joint axis `axis` (child link frame)
 * such that the joint's coordinate 0 is the angle q0. Rapier builds a revolute joint's frames from
 * its axes alone, and rapier.js cannot set a multibody coordinate, so the offset between coordinate
 * 0 and the kinematic angle is measured on a two-body probe (parent fixed at identity, stepped once
 * at rest, where the multibody puts the child at coordinate 0) rather than re-derived from Rapier's
 * basis convention.
 */
function multibodyBodyToLink(R: Rapier, fixedRot: Quat, parentToLink: Quat, axis: Vec3, q0: number): Quat {
  const world = new R.World({ x: 0, y: 0, z: 0 });
  try {
    // Parent body frame at identity, so its link frame is parentToLink; the child at angle 0, probe body turned by nothing.
    const childAt0 = quatMul(parentToLink, fixedRot);
    const parent = world.createRigidBody(R.RigidBodyDesc.fixed());
    const child = world.createRigidBody(R.RigidBodyDesc.dynamic().setRotation(quatObj(childAt0)));
    world.createCollider(R.ColliderDesc.ball(0.01).setMass(1), child);
    const axis1 = quatRotate(parentToLink, quatRotate(fixedRot, axis));
    world.createMultibodyJoint(
      R.JointData.revoluteWithAxes(
        { x: 0, y: 0, z: 0 },
        { x: 0, y: 0, z: 0 },
        { x: axis1[0], y: axis1[1], z: axis1[2] },
        { x: axis[0], y: axis[1], z: axis[2] },
      ),
      parent,
      child,
      true,
    );
    world.step();
    const r = child.rotation();
    // The kinematic angle where the coordinate is 0: the twist about the axis from angle 0's pose.
    const rel = quatMul(quatConj(childAt0), [r.x, r.y, r.z, r.w]);
    const mu = 2 * Math.atan2(rel[0] * axis[0] + rel[1] * axis[1] + rel[2] * axis[2], rel[3]);
    // Turning the child's body by −(q0 − mu) about the axis moves coordinate 0 to q0 (the body frame is link · bodyToLink⁻¹).
    const half = (q0 - mu) / 2;
    return [axis[0] * Math.sin(half), axis[1] * Math.sin(half), axis[2] * Math.sin(half), Math.cos(half)];
  } finally {
    world.free();
  }
}

/** out (3×3 row-major) = R(q)·diag(d[at..at+2])·R(q)ᵀ. */
function worldInertia(q: Quat, d: Float64Array, at: number, out: Float64Array): void {
  const [x, y, z, w] = q;
  const r = [
    1 - 2 * (y * y + z * z),
    2 * (x * y - z * w),
    2 * (x * z + y * w),
    2 * (x * y + z * w),
    1 - 2 * (x * x + z * z),
    2 * (y * z - x * w),
    2 * (x * z - y * w),
    2 * (y * z + x * w),
    1 - 2 * (x * x + y * y),
  ];
  for (let i = 0; i < 3; i++) {
    for (let j = 0; j < 3; j++)
      out[i * 3 + j] =
        r[i * 3] * d[at] * r[j * 3] + r[i * 3 + 1] * d[at + 1] * r[j * 3 + 1] + r[i * 3 + 2] * d[at + 2] * r[j * 3 + 2];
  }
}

/** Solves A·x = b in place (b becomes x) for a symmetric positive definite 6×6 A (row-major; overwritten). */
function choleskySolve6(A: Float64Array, b: Float64Array): void {
  for (let j = 0; j < 6; j++) {
    let d = A[j * 6 + j];
    for (let k = 0; k < j; k++) d -= A[j * 6 + k] * A[j * 6 + k];
    const l = Math.sqrt(d);
    A[j * 6 + j] = l;
    for (let i = j + 1; i < 6; i++) {
      let s = A[i * 6 + j];
      for (let k = 0; k < j; k++) s -= A[i * 6 + k] * A[j * 6 + k];
      A[i * 6 + j] = s / l;
    }
  }
  for (let i = 0; i < 6; i++) {
    let s = b[i];
    for (let k = 0; k < i; k++) s -= A[i * 6 + k] * b[k];
    b[i] = s / A[i * 6 + i];
  }
  for (let i = 5; i >= 0; i--) {
    let s = b[i];
    for (let k = i + 1; k < 6; k++) s -= A[k * 6 + i] * b[k];
    b[i] = s / A[i * 6 + i];
  }
}
