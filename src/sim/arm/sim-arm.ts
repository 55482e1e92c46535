/**
 * One YAM arm in Rapier: fixed base, six links on revolute joints, the gripper body and two
 * fingers on prismatic joints, built from the chain in src/rig/yam.ts at joint angles q0.
 *
 * Joint drive: the real motors run the MIT law τ = kp(q*−q) + kd(dq*−dq) + τff, clamped to the
 * motor's torque range. We evaluate the stiffness and feedforward terms ourselves from the
 * measured angle each physics step, and hand the damping term to Rapier's force-based velocity
 * motor with the sum folded into its target velocity:
 *     τ = E + kd(dq* − dq) − c·dq = D·(v − dq),  D = kd + c,  v = (E + kd·dq*) / D,
 * with the motor's max force set to the torque limit, so the clamp applies to the whole law.
 * Keeping the damping implicit is what lets the light wrist (≈5e-4 kg·m²) run the real kd = 1.5
 * at a 4 ms step; an explicit kd there is unstable (kd·dt/I ≫ 2). Coulomb friction joins the
 * implicit damping as f / max(|dq|, ε), a regularised sign(dq) that cannot chatter.
 * Joint angles are measured from the bodies' poses (twist about the joint axis), so they never
 * depend on Rapier's internal angle reference.
 *
 * The fingers are stiff (kp·r² ≈ 2e5 N/m per finger), so they use Rapier's implicit position
 * motor; a prismatic joint's coordinate is unambiguous (translation along the axis).
 *
 * How the six revolute joints are made and damped is the joint model's (joint-model.ts): impulse
 * joints with the velocity motor above (impulse-arm.ts), or with calibration armJoints 'multibody'
 * one reduced-coordinate multibody whose damping is solved in joint space (multibody-arm.ts).
 */
import type { ImpulseJoint, RigidBody, UnitImpulseJoint, World } from '@dimforge/rapier3d-deterministic-compat';
import type { ArmModel } from '../../rig/contract.js';
import { linkFramesTable, rotationToQuaternion, rpyToRotation, LINK_NAMES } from '../../rig/kinematics.js';
import { YAM_CHAIN, YAM_FINGER_MASS_KG, YAM_LIMIT_BUFFER_RAD, YAM_LINK_MASS_KG } from '../../rig/yam.js';
import { motorTorqueScales, type SimCalibration } from '../calibration.js';
import { GROUPS } from '../colliders.js';
import { quatConj, quatMul, quatRotate, type Quat } from '../../pose/quaternion.js';
import type { Rapier } from '../rapier.js';
import { quatBetweenX, quatBetweenY, quatObj, rotate, turn, xyz } from './body-frames.js';
import { GRIPPER_GEOMETRY, LINK_RADIUS_M } from './geometry.js';
import { ImpulseArmJoints } from './impulse-arm.js';
import type { ArmJointModel, ArmReading } from './joint-model.js';
import type { MotorCommand } from './motor-command.js';
import { MultibodyArmJoints } from './multibody-arm.js';

/** See buildLinks: conditions the solver, physically irrelevant. */
const LINK1_OFF_AXIS_INERTIA_KGM2 = 0.5;
const FRICTION_VELOCITY_EPS = 0.02;
/**
 * Mechanical end stops, modelled as a stiff one-sided spring beyond each joint's limit widened by
 * the vendor's clamping buffer (the real arm's software never commands past that; only a push
 * from outside — a collision, a squeeze — can drive a joint there). Stiffness is a multiple of
 * the joint's kp, so the light wrist stays stable at the coarsest step.
 */
const END_STOP_BEYOND_LIMIT_RAD = YAM_LIMIT_BUFFER_RAD;
const END_STOP_STIFFNESS_PER_KP = 10;
const END_STOP_DAMPING_PER_KD = 2;
const UNWRAP_TWO_PI = 2 * Math.PI;

/** The joint model a calibration's armJoints names. */
const JOINT_MODELS: Readonly<Record<NonNullable<SimCalibration['armJoints']>, (arm: ArmReading) => ArmJointModel>> = {
  impulse: (arm) => new ImpulseArmJoints(arm.model),
  multibody: (arm) => new MultibodyArmJoints(arm),
};

export class SimArm implements ArmReading {
  /** base_link, link1..link5, gripper (the same order as kinematics LINK_NAMES). */
  readonly links: RigidBody[] = [];
  readonly fingers: RigidBody[] = [];
  private readonly jointModel: ArmJointModel;
  /**
   * Per link: the rotation from its body's frame to the link's kinematic frame (identity on the
   * impulse arm). A multibody starts every joint at coordinate 0, where Rapier's joint frames
   * (derived from the axes alone) coincide; each multibody link's body is turned about its joint
   * axis so that coordinate 0 is the start angle q0, and everything in body coordinates
   * (colliders, mass frames, anchors) is given through this rotation.
   */
  private readonly bodyToLink: Quat[] = [];
  private readonly fingerJoints: UnitImpulseJoint[] = [];
  /** Parent link's frame → child's zero-angle frame rotation, per joint. */
  private readonly fixedRot: Quat[];
  private readonly qUnwrapped = new Float64Array(6);
  readonly q = new Float64Array(6);
  readonly dq = new Float64Array(6);
  /** Relative angular velocity of the bodies about each axis, as the solver sees it. */
  readonly dqSolver = new Float64Array(6);
  /** False until the first step: before it, q has no history to difference. */
  private primed = false;
  /** Torque each joint motor applied at the last step (the MIT law, clamped), N·m. */
  readonly effort = new Float64Array(6);
  /** Link rotations (7 × xyzw) and angular velocities (7 × xyz) read once per step; base fixed. */
  readonly linkRot = new Float64Array(28);
  private readonly linkAngvel = new Float64Array(21);
  /** Each joint's axis in the world, from the last reading. */
  readonly axisWorld = new Float64Array(18);
  /** Last finger motor setting (target, kp, kd): Rapier is told only when it changes. */
  private readonly fingerMotor = new Float64Array([NaN, NaN, NaN]);
  /** Torque per link body (7 × xyz) accumulated for one step. */
  private readonly torqueScratch = new Float64Array(21);
  /**
   * Mass (kg) and centre of mass in its link's frame of each carried body: links 1..6 then
   * the two fingers (the order gravityTorque sums over).
   */
  readonly carriedMass = new Float64Array(8);
  private readonly carriedCom = new Float64Array(24);
  /** Link frame origins in the world (7 × xyz), from the base pose and the measured rotations. */
  readonly linkOrigin = new Float64Array(21);
  /** Joint torques that hold the arm against gravity, at the last reading (see gravityTorque). */
  private readonly holdTorque = new Float64Array(6);
  /** The carried bodies' centres of mass in the world (8 × xyz), at the last reading. */
  readonly carriedComWorld = new Float64Array(24);
  /** Per joint, this step: the explicit torque (stiffness, gravity, end stop, and what the joint model adds). */
  private readonly drive = new Float64Array(6);
  private readonly gravityZ: number;
  /** Finger opening per finger (m) and its velocity. */
  fingerOpeningM = 0;
  fingerVelocityMs = 0;
  gripperEffortNm = 0;
  private readonly halfStrokeM: number;
  private readonly lowerStopRad: readonly number[];
  /** Motor radians per metre of one finger's travel. */
  private readonly gripperRatio: number;
  /** Per joint: torque delivered per N·m asked (the calibration's motor torque scale). */
  private readonly torqueScale: readonly number[];
  readonly physicsStepS: number;

  constructor(
    R: Rapier,
    world: World,
    readonly model: ArmModel,
    private readonly cal: SimCalibration,
    q0: ArrayLike<number>,
    gripper0: number,
    /** Per joint (6): where the lower mechanical stop sits; default each limit widened by the vendor's buffer. */
    lowerStopsRad?: readonly number[],
    /** Gripper motor rotor inertia seen at each finger (kg), moving with the finger but weighing nothing extra. Default 0. */
    fingerReflectedMassKg = 0,
  ) {
    this.lowerStopRad = model.joints.map((j, i) => lowerStopsRad?.[i] ?? j.minRad - END_STOP_BEYOND_LIMIT_RAD);
    this.gravityZ = world.gravity.z;
    this.physicsStepS = cal.physicsStepS;
    this.fixedRot = YAM_CHAIN.map((c) => rotationToQuaternion(rpyToRotation(c.rpy)));
    this.halfStrokeM = model.gripper.strokeM / 2;
    this.gripperRatio = model.gripper.motorTravelRad / this.halfStrokeM;
    this.torqueScale = motorTorqueScales(cal);
    this.jointModel = JOINT_MODELS[cal.armJoints ?? 'impulse'](this);
    const toLink = this.bodyToLink;
    toLink.push([0, 0, 0, 1]);
    for (let i = 0; i < 6; i++)
      toLink.push(this.jointModel.bodyToLink(R, this.fixedRot[i], toLink[i], YAM_CHAIN[i].axis, q0[i]));
    this.buildLinks(R, world, q0);
    this.connectLinks(R, world, q0);
    this.readJoints();
    this.dq.fill(0);
    this.buildFingers(R, world, gripper0, fingerReflectedMassKg);
    this.carryBodies(fingerReflectedMassKg);
    this.readJoints();
  }

  /** The base and link bodies at q0, with their colliders and reflected rotor inertia. */
  private buildLinks(R: Rapier, world: World, q0: ArrayLike<number>): void {
    const { model, cal } = this;
    const toLink = this.bodyToLink;
    const frames = linkFramesTable(model, q0);
    for (let i = 0; i < LINK_NAMES.length; i++) {
      const f = frames[i];
      const rot = turn(rotationToQuaternion(f.rotation), quatConj(toLink[i]));
      // Body-frame coordinates of a point or rotation given in the link's frame (body = link · bodyToLink⁻¹).
      const inBody = (v: readonly [number, number, number]): { x: number; y: number; z: number } => {
        const w = rotate(toLink[i], v);
        return { x: w[0], y: w[1], z: w[2] };
      };
      const rotInBody = (r: Quat): { x: number; y: number; z: number; w: number } => {
        const w = turn(toLink[i], r);
        return { x: w[0], y: w[1], z: w[2], w: w[3] };
      };
      const desc = (i === 0 ? R.RigidBodyDesc.fixed() : R.RigidBodyDesc.dynamic())
        .setTranslation(f.position[0], f.position[1], f.position[2])
        .setRotation({ x: rot[0], y: rot[1], z: rot[2], w: rot[3] })
        .setGravityScale(0)
        .setCanSleep(false);
      const body = world.createRigidBody(desc);
      const mass = YAM_LINK_MASS_KG[LINK_NAMES[i]];
      if (i === 0) {
        world.createCollider(
          R.ColliderDesc.cylinder(0.034, 0.05)
            .setTranslation(0, 0, 0.034)
            .setRotation({ x: Math.SQRT1_2, y: 0, z: 0, w: Math.SQRT1_2 })
            .setCollisionGroups(GROUPS.armLink[model.side]),
          body,
        );
      } else if (i < 6) {
        const end = YAM_CHAIN[i].xyz; // next joint's origin in this link's frame
        const len = Math.hypot(end[0], end[1], end[2]);
        const r = LINK_RADIUS_M[i];
        // Capsule along the segment origin → next joint, built on Rapier's y axis then turned onto it.
        const dir: [number, number, number] = [end[0] / len, end[1] / len, end[2] / len];
        const q = quatBetweenY(dir);
        const c = inBody([end[0] / 2, end[1] / 2, end[2] / 2]);
        world.createCollider(
          R.ColliderDesc.capsule(Math.max(len / 2 - r, 0.001), r)
            .setTranslation(c.x, c.y, c.z)
            .setRotation(rotInBody(q))
            .setMass(mass)
            .setCollisionGroups(GROUPS.armLink[model.side]),
          body,
        );
      } else {
        const g = GRIPPER_GEOMETRY;
        world.createCollider(
          R.ColliderDesc.cuboid(g.palmHalfM[0], g.palmHalfM[1], g.palmHalfM[2])
            .setTranslation(...xyz(inBody([0, 0, g.palmCentreZM])))
            .setRotation(rotInBody([0, 0, 0, 1]))
            .setMass(mass)
            .setFriction(cal.fingerFriction)
            .setCollisionGroups(GROUPS.hand[model.side]),
          body,
        );
      }
      if (i === 1) {
        // link1 turns only about joint 1's axis (its own x) on a fixed base, so its inertia
        // about y and z never enters the true dynamics. Rapier's impulse solver, though, sees
        // link1's tiny inertia there when it passes joint 2's torque on, and loses most of it;
        // a large off-axis inertia restores the conditioning without changing the physics.
        body.setAdditionalMassProperties(
          0,
          { x: 0, y: 0, z: 0 },
          { x: cal.joints[0].armatureKgM2, y: LINK1_OFF_AXIS_INERTIA_KGM2, z: LINK1_OFF_AXIS_INERTIA_KGM2 },
          rotInBody([0, 0, 0, 1]),
          false,
        );
      } else if (i >= 2) {
        const arm = cal.joints[i - 1].armatureKgM2;
        // Reflected rotor inertia about the joint axis only (principal frame turned so x = axis).
        const qa = quatBetweenX(YAM_CHAIN[i - 1].axis);
        body.setAdditionalMassProperties(0, { x: 0, y: 0, z: 0 }, { x: arm, y: 1e-9, z: 1e-9 }, rotInBody(qa), false);
      }
      this.links.push(body);
    }
  }

  /** The six revolute joints, through the joint model. */
  private connectLinks(R: Rapier, world: World, q0: ArrayLike<number>): void {
    const toLink = this.bodyToLink;
    const br = this.links[0].rotation();
    this.linkRot.set([br.x, br.y, br.z, br.w], 0);
    for (let i = 0; i < 6; i++) {
      const c = YAM_CHAIN[i];
      const axis1 = rotate(toLink[i], quatRotate(this.fixedRot[i], c.axis));
      const anchor1 = rotate(toLink[i], c.xyz);
      // The child's body turns about this very axis (bodyToLink), so the axis reads the same in its body frame.
      const data = R.JointData.revoluteWithAxes(
        { x: anchor1[0], y: anchor1[1], z: anchor1[2] },
        { x: 0, y: 0, z: 0 },
        { x: axis1[0], y: axis1[1], z: axis1[2] },
        { x: c.axis[0], y: c.axis[1], z: c.axis[2] },
      );
      this.qUnwrapped[i] = q0[i];
      this.jointModel.connect(R, world, i, data, this.links[i], this.links[i + 1]);
    }
  }

  /** Fingers: body frames at the gripper frame shifted along ±y by (half thickness + opening). */
  private buildFingers(R: Rapier, world: World, gripper0: number, fingerReflectedMassKg: number): void {
    const { model, cal } = this;
    const gripperBody = this.links[6];
    const gt = gripperBody.translation();
    const gr = gripperBody.rotation();
    const toGripper = this.bodyToLink[6];
    // Link-frame rotation of the gripper; the fingers' bodies share the gripper body's frame.
    const gq: Quat = turn([gr.x, gr.y, gr.z, gr.w], toGripper);
    const inGripperBody = (v: readonly [number, number, number]): { x: number; y: number; z: number } => {
      const w = rotate(toGripper, v);
      return { x: w[0], y: w[1], z: w[2] };
    };
    const s0 = clamp01(gripper0) * this.halfStrokeM;
    const g = GRIPPER_GEOMETRY;
    for (const sign of [1, -1]) {
      const local: [number, number, number] = [0, sign * (g.fingerHalfM[1] + s0), g.fingerCentreZM];
      const w = quatRotate(gq, local);
      const body = world.createRigidBody(
        R.RigidBodyDesc.dynamic()
          .setTranslation(gt.x + w[0], gt.y + w[1], gt.z + w[2])
          .setRotation(gr)
          .setGravityScale(0)
          .setCanSleep(false)
          .setAdditionalMass(fingerReflectedMassKg),
      );
      world.createCollider(
        R.ColliderDesc.cuboid(g.fingerHalfM[0], g.fingerHalfM[1], g.fingerHalfM[2])
          .setRotation(quatObj(toGripper))
          .setMass(YAM_FINGER_MASS_KG)
          .setFriction(cal.fingerFriction)
          .setCollisionGroups(GROUPS.hand[model.side]),
        body,
      );
      const data = R.JointData.prismatic(
        inGripperBody([0, sign * g.fingerHalfM[1], g.fingerCentreZM]),
        { x: 0, y: 0, z: 0 },
        inGripperBody([0, sign, 0]),
      );
      data.limitsEnabled = true;
      data.limits = [0, this.halfStrokeM + 0.002];
      const joint = world.createImpulseJoint(data, gripperBody, body, true) as UnitImpulseJoint;
      joint.configureMotorModel(R.MotorModel.ForceBased);
      joint.setContactsEnabled(false);
      this.fingers.push(body);
      this.fingerJoints.push(joint);
    }
  }

  /** Each carried body's mass and centre of mass in its link's frame, for gravityTorque (and the joint model's). */
  private carryBodies(fingerReflectedMassKg: number): void {
    const toLink = this.bodyToLink;
    const base = this.links[0].translation();
    this.linkOrigin.set([base.x, base.y, base.z], 0);
    [...this.links.slice(1), ...this.fingers].forEach((b, k) => {
      const lc = b.localCom();
      const fromLink = quatConj(toLink[k < 6 ? k + 1 : 6]);
      const c = rotate(fromLink, [lc.x, lc.y, lc.z]);
      // The fingers' reflected rotor mass resists their motion only: the rotor's weight is the gripper's.
      this.carriedMass[k] = k >= 6 && fingerReflectedMassKg > 0 ? YAM_FINGER_MASS_KG : b.mass();
      this.carriedCom.set(c, k * 3);
      this.jointModel.carry(k, b, fromLink);
    });
  }

  /**
   * Measures joint angles/velocities and the finger opening from the bodies (`afterStep`: a
   * physics step just ran). Each body is read once: every Rapier accessor crosses into
   * WebAssembly and allocates, and at thousands of steps per second those calls cost more than
   * the physics.
   */
  readJoints(afterStep = false): void {
    const rot = this.linkRot;
    const av = this.linkAngvel;
    for (let b = 1; b < 7; b++) {
      const body = this.links[b];
      const r = body.rotation();
      this.jointModel.readLinkRotation(b, r, this.bodyToLink[b], rot);
      const w = body.angvel();
      av[b * 3] = w.x;
      av[b * 3 + 1] = w.y;
      av[b * 3 + 2] = w.z;
    }
    const dt = this.cal.physicsStepS;
    for (let i = 0; i < 6; i++) {
      const p = i * 4;
      const c = (i + 1) * 4;
      const zero = quatMul([rot[p], rot[p + 1], rot[p + 2], rot[p + 3]], this.fixedRot[i]);
      const cq: Quat = [rot[c], rot[c + 1], rot[c + 2], rot[c + 3]];
      const rel = quatMul(quatConj(zero), cq);
      const a = YAM_CHAIN[i].axis;
      let angle = 2 * Math.atan2(rel[0] * a[0] + rel[1] * a[1] + rel[2] * a[2], rel[3]);
      // Unwrap against the previous reading so joint 1 (range > π on one side) stays continuous.
      const prev = this.qUnwrapped[i];
      angle += UNWRAP_TWO_PI * Math.round((prev - angle) / UNWRAP_TWO_PI);
      this.qUnwrapped[i] = angle;
      const aw = quatRotate(cq, a);
      this.axisWorld[i * 3] = aw[0];
      this.axisWorld[i * 3 + 1] = aw[1];
      this.axisWorld[i * 3 + 2] = aw[2];
      const pv = i * 3;
      const cv = (i + 1) * 3;
      this.dqSolver[i] =
        (av[cv] - av[pv]) * aw[0] + (av[cv + 1] - av[pv + 1]) * aw[1] + (av[cv + 2] - av[pv + 2]) * aw[2];
      // The joint velocity is how the angle actually moved over the last step. The bodies'
      // velocities carry a constant "phantom" part wherever the solver's position correction
      // cancels it each step; damping that would act like a spring offset (a static error).
      this.dq[i] = this.primed ? (angle - this.q[i]) / dt : this.dqSolver[i];
      this.q[i] = angle;
    }
    if (this.fingers.length === 2) {
      const gt = this.links[6].translation();
      const gq: Quat = [rot[24], rot[25], rot[26], rot[27]];
      const inv = quatConj(gq);
      let s = 0;
      for (let k = 0; k < 2; k++) {
        const ft = this.fingers[k].translation();
        const local = quatRotate(inv, [ft.x - gt.x, ft.y - gt.y, ft.z - gt.z]);
        s += (k === 0 ? local[1] : -local[1]) - GRIPPER_GEOMETRY.fingerHalfM[1];
      }
      const opening = s / 2;
      this.fingerVelocityMs = this.primed ? (opening - this.fingerOpeningM) / dt : 0;
      this.fingerOpeningM = opening;
    }
    if (this.carriedMass[0] > 0) this.computeHoldTorque();
    if (afterStep) this.primed = true;
  }

  /** Normalised gripper opening, 0 closed … 1 open. */
  gripperPosition(): number {
    return this.fingerOpeningM / this.halfStrokeM;
  }
  gripperVelocity(): number {
    return this.fingerVelocityMs / this.halfStrokeM;
  }

  /** Sets every joint motor for the next physics step from the motor command and measured state. */
  applyDrive(cmd: MotorCommand): void {
    const torques = this.torqueScratch;
    torques.fill(0);
    for (let i = 0; i < 6; i++) {
      const spec = this.model.joints[i];
      const jc = this.cal.joints[i];
      const q = this.q[i];
      const dq = this.dq[i];
      // A motor whose torque constant is off by s delivers s times every term of the law it runs
      // (as the emulated cell's motors do), and still reports the torque it was asked for.
      const ts = this.torqueScale[i];
      const kd = cmd.kd[i] * ts;
      const tMax = spec.maxTorqueNm;
      // Stiffness + feedforward: applied as an explicit torque pair, clamped to the motor's range.
      const raw = ts * (cmd.kp[i] * (cmd.q[i] - q) + cmd.tauFf[i]);
      const over = q - (spec.maxRad + END_STOP_BEYOND_LIMIT_RAD);
      const under = q - this.lowerStopRad[i];
      const intoStop = over > 0 ? over : under < 0 ? under : 0;
      // Gravity on the arm's own bodies enters as its joint-space generalized force (the links are
      // built with gravity scale 0): the same dynamics for a fixed-base chain, but the solver no
      // longer has to carry the arm's weight through six joints, which it did only approximately
      // (a slow creep of the light wrist, growing with the substep). Neither it nor the end stop is
      // a motor torque, so both are outside the clamp.
      const stiffness =
        (raw > tMax ? tMax : raw < -tMax ? -tMax : raw) -
        this.holdTorque[i] -
        END_STOP_STIFFNESS_PER_KP * spec.kp * intoStop;
      // Damping (motor kd toward dq*, passive damping, regularised Coulomb friction): implicit,
      // in Rapier's velocity motor, limited to the torque the motor has left.
      const friction = jc.frictionNm / Math.max(Math.abs(dq), FRICTION_VELOCITY_EPS);
      // In the stop, damping (implicit, so always stable) takes most of the impact's energy.
      const D = kd + jc.dampingNms + friction + (intoStop !== 0 ? END_STOP_DAMPING_PER_KD * spec.kd : 0);
      this.drive[i] = stiffness;
      this.jointModel.damp(i, D, (kd * cmd.dq[i]) / D, this.dqSolver[i] - dq);
      const law = raw + kd * (cmd.dq[i] - dq);
      this.effort[i] = (law > tMax ? tMax : law < -tMax ? -tMax : law) / ts;
    }
    this.jointModel.finishDrive(this.drive);
    for (let i = 0; i < 6; i++) {
      const o = (i + 1) * 3;
      const p = i * 3;
      for (let k = 0; k < 3; k++) {
        const t = this.drive[i] * this.axisWorld[p + k];
        torques[o + k] += t;
        torques[p + k] -= t;
      }
    }
    // A torque held over the step's solver substeps (an impulse at the step's start is partly
    // absorbed by the joints' position correction: a static error growing with the step).
    for (let b = 1; b < 7; b++) {
      this.links[b].resetTorques(false);
      this.links[b].addTorque({ x: torques[b * 3], y: torques[b * 3 + 1], z: torques[b * 3 + 2] }, false);
    }
    const kpLin = (cmd.gripperKp * this.gripperRatio * this.gripperRatio) / 2;
    const kdLin = (cmd.gripperKd * this.gripperRatio * this.gripperRatio) / 2;
    const maxForce = Math.min((this.model.gripper.maxTorqueNm * this.gripperRatio) / 2, this.cal.gripperMaxForceN);
    const target = clamp01(cmd.gripper) * this.halfStrokeM;
    if (target !== this.fingerMotor[0] || kpLin !== this.fingerMotor[1] || kdLin !== this.fingerMotor[2]) {
      this.fingerMotor[0] = target;
      this.fingerMotor[1] = kpLin;
      this.fingerMotor[2] = kdLin;
      for (const j of this.fingerJoints) {
        j.configureMotor(target, 0, kpLin, Math.max(kdLin, 1e-3));
        j.setMotorMaxForce(maxForce);
      }
    }
    const force = Math.max(
      -maxForce,
      Math.min(maxForce, kpLin * (target - this.fingerOpeningM) - kdLin * this.fingerVelocityMs),
    );
    this.gripperEffortNm = (2 * force) / this.gripperRatio;
  }

  /**
   * Torque each joint must supply to hold the arm still against gravity (what the YAM driver
   * sends as τff), at the last reading: for joint j, −Σ over the bodies it carries of
   * ((com − origin_j) × m·g) · axis_j.
   */
  gravityTorque(out: Float64Array): Float64Array {
    out.set(this.holdTorque);
    return out;
  }

  /** holdTorque from the measured link rotations, the base pose and the finger opening (no Rapier calls). */
  private computeHoldTorque(): void {
    const rot = this.linkRot;
    const org = this.linkOrigin;
    // Link origins down the chain: child origin = parent origin + R_parent · joint offset.
    for (let i = 0; i < 6; i++) {
      const p = i * 4;
      const off = quatRotate([rot[p], rot[p + 1], rot[p + 2], rot[p + 3]], YAM_CHAIN[i].xyz);
      org[(i + 1) * 3] = org[i * 3] + off[0];
      org[(i + 1) * 3 + 1] = org[i * 3 + 1] + off[1];
      org[(i + 1) * 3 + 2] = org[i * 3 + 2] + off[2];
    }
    const com = this.carriedComWorld;
    const gq: Quat = [rot[24], rot[25], rot[26], rot[27]];
    for (let k = 0; k < 8; k++) {
      const c: [number, number, number] = [
        this.carriedCom[k * 3],
        this.carriedCom[k * 3 + 1],
        this.carriedCom[k * 3 + 2],
      ];
      let w: [number, number, number];
      let o: number;
      if (k < 6) {
        const p = (k + 1) * 4;
        w = quatRotate([rot[p], rot[p + 1], rot[p + 2], rot[p + 3]], c);
        o = (k + 1) * 3;
      } else {
        // Fingers turn with the gripper and sit ±(half thickness + opening) along its y.
        const sign = k === 6 ? 1 : -1;
        w = quatRotate(gq, [
          c[0],
          c[1] + sign * (GRIPPER_GEOMETRY.fingerHalfM[1] + this.fingerOpeningM),
          c[2] + GRIPPER_GEOMETRY.fingerCentreZM,
        ]);
        o = 6 * 3;
      }
      com[k * 3] = org[o] + w[0];
      com[k * 3 + 1] = org[o + 1] + w[1];
      com[k * 3 + 2] = org[o + 2] + w[2];
    }
    for (let j = 0; j < 6; j++) {
      const o = (j + 1) * 3;
      const ax = this.axisWorld[j * 3];
      const ay = this.axisWorld[j * 3 + 1];
      let t = 0;
      // Joint j carries links j+1.. (index ≥ j among the carried bodies) and both fingers.
      for (let k = j; k < 8; k++) {
        const fz = this.carriedMass[k] * this.gravityZ;
        // (d × F)·a with F = (0, 0, fz): (dy·fz)·ax − (dx·fz)·ay
        t += (com[k * 3 + 1] - org[o + 1]) * fz * ax - (com[k * 3] - org[o]) * fz * ay;
      }
      this.holdTorque[j] = -t;
    }
  }

  /** Link i's kinematic frame in its body's frame (identity on the impulse arm); the fingers' bodies share the gripper's (i = 6). */
  bodyToLinkRotation(i: number): Quat {
    return this.bodyToLink[i];
  }

  /** Link i's rotation (xyzw) in its kinematic frame, as of the last reading (the base: its body's). */
  linkRotation(i: number): Quat {
    const r = this.linkRot;
    return [r[i * 4], r[i * 4 + 1], r[i * 4 + 2], r[i * 4 + 3]];
  }

  /** All the arm's impulse joints (a multibody arm's: the fingers' only), for removal or inspection. */
  allJoints(): ImpulseJoint[] {
    return [...this.jointModel.joints, ...this.fingerJoints];
  }
}

function clamp01(x: number): number {
  return x < 0 ? 0 : x > 1 ? 1 : x;
}
