/**
 * How a sim arm's six revolute joints are made and driven: impulse joints with Rapier's velocity
 * motor (impulse-arm.ts, the default) or one reduced-coordinate multibody whose damping is solved
 * in joint space (multibody-arm.ts, calibration armJoints 'multibody'). SimArm builds the bodies,
 * reads the joints and evaluates the motor law; the joint model owns what differs.
 */
import type { ImpulseJoint, JointData, RigidBody, World } from '@dimforge/rapier3d-deterministic-compat';
import type { ArmModel } from '../../rig/contract.js';
import type { Quat, Vec3 } from '../../pose/quaternion.js';
import type { Rapier } from '../rapier.js';

/** What a joint model reads of its arm: the arm's own arrays, updated in place at every reading. */
export interface ArmReading {
  readonly model: ArmModel;
  readonly physicsStepS: number;
  /** Link rotations in their kinematic frames (7 × xyzw, base first). */
  readonly linkRot: Float64Array;
  /** Each joint's axis in the world (6 × xyz). */
  readonly axisWorld: Float64Array;
  /** Link frame origins in the world (7 × xyz). */
  readonly linkOrigin: Float64Array;
  /** Each carried body's mass (links 1..6 then the two fingers) and centre of mass in the world (8 × xyz). */
  readonly carriedMass: Float64Array;
  readonly carriedComWorld: Float64Array;
  /** Relative angular velocity of the bodies about each axis, as the solver sees it. */
  readonly dqSolver: Float64Array;
}

export interface ArmJointModel {
  /**
   * The rotation from child link `i`'s body frame to its kinematic frame, given its parent's
   * (`parentToLink`), the joint's fixed turn, its axis and the start angle q0.
   */
  bodyToLink(R: Rapier, fixedRot: Quat, parentToLink: Quat, axis: Vec3, q0: number): Quat;
  /** Joins `parent` and `child` by the revolute joint `data` (arm joint `i`). */
  connect(R: Rapier, world: World, i: number, data: JointData, parent: RigidBody, child: RigidBody): void;
  /** Records carried body `k` (links 1..6, then the fingers); `fromLink` turns its body frame into its link's. */
  carry(k: number, body: RigidBody, fromLink: Quat): void;
  /** Writes the kinematic-frame rotation of link `b`, whose body reads `r`, into `out` at `b * 4`. */
  readLinkRotation(
    b: number,
    r: { x: number; y: number; z: number; w: number },
    bodyToLink: Quat,
    out: Float64Array,
  ): void;
  /**
   * Joint `i`'s implicit damping this step: D (N·m·s/rad) toward the joint velocity `v`;
   * `solverMinusMeasured` is how far the solver's joint velocity is from the measured one.
   */
  damp(i: number, D: number, v: number, solverMinusMeasured: number): void;
  /** After every joint's damp: adds to `drive` (N·m per joint) the damping the model solves itself, if any. */
  finishDrive(drive: Float64Array): void;
  /** The model's arm impulse joints (none on a multibody). */
  readonly joints: readonly ImpulseJoint[];
}
