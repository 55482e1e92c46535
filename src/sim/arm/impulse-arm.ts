/**
 * The default sim arm joints: six revolute impulse joints, each with Rapier's force-based velocity
 * motor, which carries the law's damping implicitly (SimArm's header has the algebra). Bodies are
 * their links' frames.
 */
import type { JointData, RigidBody, UnitImpulseJoint, World } from '@dimforge/rapier3d-deterministic-compat';
import type { ArmModel } from '../../rig/contract.js';
import type { Quat } from '../../pose/quaternion.js';
import type { Rapier } from '../rapier.js';
import type { ArmJointModel } from './joint-model.js';

export class ImpulseArmJoints implements ArmJointModel {
  readonly joints: UnitImpulseJoint[] = [];

  constructor(private readonly model: ArmModel) {}

  bodyToLink(): Quat {
    return [0, 0, 0, 1];
  }

  connect(R: Rapier, world: World, i: number, data: JointData, parent: RigidBody, child: RigidBody): void {
    const joint = world.createImpulseJoint(data, parent, child, true) as UnitImpulseJoint;
    joint.configureMotorModel(R.MotorModel.ForceBased);
    joint.setMotorMaxForce(this.model.joints[i].maxTorqueNm);
    joint.setContactsEnabled(false);
    this.joints.push(joint);
  }

  carry(): void {}

  readLinkRotation(
    b: number,
    r: { x: number; y: number; z: number; w: number },
    _bodyToLink: Quat,
    out: Float64Array,
  ): void {
    out[b * 4] = r.x;
    out[b * 4 + 1] = r.y;
    out[b * 4 + 2] = r.z;
    out[b * 4 + 3] = r.w;
  }

  damp(i: number, D: number, v: number, solverMinusMeasured: number): void {
    // The motor drives the solver's velocity, so its target carries the solver's offset from the measured one.
    this.joints[i].configureMotorVelocity(v + solverMinusMeasured, D);
  }

  finishDrive(): void {}
}
