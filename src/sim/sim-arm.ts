/**
 * One YAM arm in Rapier: fixed base, six links on revolute impulse joints, the gripper body and
 * two fingers on prismatic joints, built from the chain in src/rig/yam.ts at joint angles q0.
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
 */
import type { ImpulseJoint, RigidBody, UnitImpulseJoint, World } from '@dimforge/rapier3d-deterministic-compat';
import type { ArmModel } from '../rig/contract.js';
import { linkFramesTable, rotationToQuaternion, rpyToRotation, LINK_NAMES } from '../rig/kinematics.js';
import { YAM_CHAIN, YAM_FINGER_MASS_KG, YAM_LIMIT_BUFFER_RAD, YAM_LINK_MASS_KG } from '../rig/yam.js';
import { GRIPPER_MASS_CENTRES } from '../rig/gravity.js';
import { motorTorqueScales, type SimCalibration } from './calibration.js';
import { GROUPS, quatMul, quatRotate } from './colliders.js';
import type { Rapier } from './rapier.js';

type Quat = readonly [number, number, number, number];

/**
 * Gripper geometry in the gripper frame (approach −z, fingers open along ±y). Body centres are the
 * rig's gravity model's (src/rig/gravity.ts), so the arms weigh in the sim what the rigs' gravity
 * feed-forward says they weigh.
 */
export const GRIPPER_GEOMETRY = {
  palmHalfM: [0.03, 0.06, 0.04] as const,
  palmCentreZM: GRIPPER_MASS_CENTRES.palmZM,
  fingerHalfM: [0.012, GRIPPER_MASS_CENTRES.fingerHalfThicknessM, 0.03] as const,
  /** Finger centre along the approach axis; fingertips at −0.14, the pads meet around −0.12. */
  fingerCentreZM: GRIPPER_MASS_CENTRES.fingerZM,
} as const;

/** See the constructor: conditions the solver, physically irrelevant. */
const LINK1_OFF_AXIS_INERTIA_KGM2 = 0.5;
export const LINK_RADIUS_M = [0.045, 0.04, 0.035, 0.03, 0.03, 0.03];
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

export interface MotorCommand {
  /** Per arm joint (6): target position/velocity, gains, feedforward torque. */
  readonly q: Float64Array;
  readonly dq: Float64Array;
  readonly kp: Float64Array;
  readonly kd: Float64Array;
  readonly tauFf: Float64Array;
  /** Gripper, normalised 0 closed … 1 open, and the motor gains (kp = 0: limp). */
  gripper: number;
  gripperKp: number;
  gripperKd: number;
}

export function newMotorCommand(): MotorCommand {
  return { q: new Float64Array(6), dq: new Float64Array(6), kp: new Float64Array(6), kd: new Float64Array(6), tauFf: new Float64Array(6), gripper: 1, gripperKp: 0, gripperKd: 0 };
}

export class SimArm {
  /** base_link, link1..link5, gripper (the same order as kinematics LINK_NAMES). */
  readonly links: RigidBody[] = [];
  readonly fingers: RigidBody[] = [];
  private readonly joints: UnitImpulseJoint[] = [];
  private readonly fingerJoints: UnitImpulseJoint[] = [];
  /** Parent link's frame → child's zero-angle frame rotation, per joint. */
  private readonly fixedRot: Quat[];
  private readonly qUnwrapped = new Float64Array(6);
  readonly q = new Float64Array(6);
  readonly dq = new Float64Array(6);
  /** Relative angular velocity of the bodies about each axis, as the solver sees it. */
  private readonly dqSolver = new Float64Array(6);
  /** False until the first step: before it, q has no history to difference. */
  private primed = false;
  /** Torque each joint motor applied at the last step (the MIT law, clamped), N·m. */
  readonly effort = new Float64Array(6);
  /** Link rotations (7 × xyzw) and angular velocities (7 × xyz) read once per step; base fixed. */
  private readonly linkRot = new Float64Array(28);
  private readonly linkAngvel = new Float64Array(21);
  /** Each joint's axis in the world, from the last reading. */
  private readonly axisWorld = new Float64Array(18);
  /** Last finger motor setting (target, kp, kd): Rapier is told only when it changes. */
  private readonly fingerMotor = new Float64Array([NaN, NaN, NaN]);
  /** Torque per link body (7 × xyz) accumulated for one step. */
  private readonly torqueScratch = new Float64Array(21);
  /**
   * Mass (kg) and centre of mass in the body's own frame of each carried body: links 1..6 then
   * the two fingers (the order gravityTorque sums over).
   */
  private readonly carriedMass = new Float64Array(8);
  private readonly carriedCom = new Float64Array(24);
  /** Link frame origins in the world (7 × xyz), from the base pose and the measured rotations. */
  private readonly linkOrigin = new Float64Array(21);
  /** Joint torques that hold the arm against gravity, at the last reading (see gravityTorque). */
  private readonly holdTorque = new Float64Array(6);
  private readonly comScratch = new Float64Array(24);
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
    this.fixedRot = YAM_CHAIN.map((c) => rotationToQuaternion(rpyToRotation(c.rpy)));
    this.halfStrokeM = model.gripper.strokeM / 2;
    this.gripperRatio = model.gripper.motorTravelRad / this.halfStrokeM;
    this.torqueScale = motorTorqueScales(cal);
    const frames = linkFramesTable(model, q0);
    for (let i = 0; i < LINK_NAMES.length; i++) {
      const f = frames[i];
      const rot = rotationToQuaternion(f.rotation);
      const desc = (i === 0 ? R.RigidBodyDesc.fixed() : R.RigidBodyDesc.dynamic())
        .setTranslation(f.position[0], f.position[1], f.position[2])
        .setRotation({ x: rot[0], y: rot[1], z: rot[2], w: rot[3] })
        .setGravityScale(0)
        .setCanSleep(false);
      const body = world.createRigidBody(desc);
      const mass = YAM_LINK_MASS_KG[LINK_NAMES[i]];
      if (i === 0) {
        world.createCollider(R.ColliderDesc.cylinder(0.034, 0.05).setTranslation(0, 0, 0.034).setRotation({ x: Math.SQRT1_2, y: 0, z: 0, w: Math.SQRT1_2 }).setCollisionGroups(GROUPS.armLink[model.side]), body);
      } else if (i < 6) {
        const end = YAM_CHAIN[i].xyz; // next joint's origin in this link's frame
        const len = Math.hypot(end[0], end[1], end[2]);
        const r = LINK_RADIUS_M[i];
        // Capsule along the segment origin → next joint, built on Rapier's y axis then turned onto it.
        const dir: [number, number, number] = [end[0] / len, end[1] / len, end[2] / len];
        const q = quatBetweenY(dir);
        world.createCollider(
          R.ColliderDesc.capsule(Math.max(len / 2 - r, 0.001), r)
            .setTranslation(end[0] / 2, end[1] / 2, end[2] / 2)
            .setRotation({ x: q[0], y: q[1], z: q[2], w: q[3] })
            .setMass(mass)
            .setCollisionGroups(GROUPS.armLink[model.side]),
          body,
        );
      } else {
        const g = GRIPPER_GEOMETRY;
        world.createCollider(
          R.ColliderDesc.cuboid(g.palmHalfM[0], g.palmHalfM[1], g.palmHalfM[2]).setTranslation(0, 0, g.palmCentreZM).setMass(mass).setFriction(cal.fingerFriction).setCollisionGroups(GROUPS.hand[model.side]),
          body,
        );
      }
      if (i === 1) {
        // link1 turns only about joint 1's axis (its own x) on a fixed base, so its inertia
        // about y and z never enters the true dynamics. Rapier's impulse solver, though, sees
        // link1's tiny inertia there when it passes joint 2's torque on, and loses most of it;
        // a large off-axis inertia restores the conditioning without changing the physics.
        body.setAdditionalMassProperties(0, { x: 0, y: 0, z: 0 }, { x: cal.joints[0].armatureKgM2, y: LINK1_OFF_AXIS_INERTIA_KGM2, z: LINK1_OFF_AXIS_INERTIA_KGM2 }, { x: 0, y: 0, z: 0, w: 1 }, false);
      } else if (i >= 2) {
        const arm = cal.joints[i - 1].armatureKgM2;
        // Reflected rotor inertia about the joint axis only (principal frame turned so x = axis).
        const qa = quatBetweenX(YAM_CHAIN[i - 1].axis);
        body.setAdditionalMassProperties(0, { x: 0, y: 0, z: 0 }, { x: arm, y: 1e-9, z: 1e-9 }, { x: qa[0], y: qa[1], z: qa[2], w: qa[3] }, false);
      }
      this.links.push(body);
    }
    const br = this.links[0].rotation();
    this.linkRot.set([br.x, br.y, br.z, br.w], 0);
    for (let i = 0; i < 6; i++) {
      const c = YAM_CHAIN[i];
      const axis1 = quatRotate(this.fixedRot[i], c.axis);
      const data = R.JointData.revoluteWithAxes({ x: c.xyz[0], y: c.xyz[1], z: c.xyz[2] }, { x: 0, y: 0, z: 0 }, { x: axis1[0], y: axis1[1], z: axis1[2] }, { x: c.axis[0], y: c.axis[1], z: c.axis[2] });
      const joint = world.createImpulseJoint(data, this.links[i], this.links[i + 1], true) as UnitImpulseJoint;
      joint.configureMotorModel(R.MotorModel.ForceBased);
      joint.setMotorMaxForce(model.joints[i].maxTorqueNm);
      joint.setContactsEnabled(false);
      this.joints.push(joint);
      this.qUnwrapped[i] = q0[i];
    }
    this.readJoints();
    this.dq.fill(0);
    // Fingers: body frames at the gripper frame shifted along ±y by (half thickness + opening).
    const gripperBody = this.links[6];
    const gt = gripperBody.translation();
    const gr = gripperBody.rotation();
    const gq: Quat = [gr.x, gr.y, gr.z, gr.w];
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
        R.ColliderDesc.cuboid(g.fingerHalfM[0], g.fingerHalfM[1], g.fingerHalfM[2]).setMass(YAM_FINGER_MASS_KG).setFriction(cal.fingerFriction).setCollisionGroups(GROUPS.hand[model.side]),
        body,
      );
      const data = R.JointData.prismatic({ x: 0, y: sign * g.fingerHalfM[1], z: g.fingerCentreZM }, { x: 0, y: 0, z: 0 }, { x: 0, y: sign, z: 0 });
      data.limitsEnabled = true;
      data.limits = [0, this.halfStrokeM + 0.002];
      const joint = world.createImpulseJoint(data, gripperBody, body, true) as UnitImpulseJoint;
      joint.configureMotorModel(R.MotorModel.ForceBased);
      joint.setContactsEnabled(false);
      this.fingers.push(body);
      this.fingerJoints.push(joint);
    }
    const base = this.links[0].translation();
    this.linkOrigin.set([base.x, base.y, base.z], 0);
    [...this.links.slice(1), ...this.fingers].forEach((b, k) => {
      const c = b.localCom();
      // The fingers' reflected rotor mass resists their motion only: the rotor's weight is the gripper's.
      this.carriedMass[k] = k >= 6 && fingerReflectedMassKg > 0 ? YAM_FINGER_MASS_KG : b.mass();
      this.carriedCom.set([c.x, c.y, c.z], k * 3);
    });
    this.readJoints();
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
      rot[b * 4] = r.x;
      rot[b * 4 + 1] = r.y;
      rot[b * 4 + 2] = r.z;
      rot[b * 4 + 3] = r.w;
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
      const rel = quatMul([-zero[0], -zero[1], -zero[2], zero[3]], cq);
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
      this.dqSolver[i] = (av[cv] - av[pv]) * aw[0] + (av[cv + 1] - av[pv + 1]) * aw[1] + (av[cv + 2] - av[pv + 2]) * aw[2];
      // The joint velocity is how the angle actually moved over the last step. The bodies'
      // velocities carry a constant "phantom" part wherever the solver's position correction
      // cancels it each step; damping that would act like a spring offset (a static error).
      this.dq[i] = this.primed ? (angle - this.q[i]) / dt : this.dqSolver[i];
      this.q[i] = angle;
    }
    if (this.fingers.length === 2) {
      const gt = this.links[6].translation();
      const gq: Quat = [rot[24], rot[25], rot[26], rot[27]];
      const inv: Quat = [-gq[0], -gq[1], -gq[2], gq[3]];
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
      const stiffness = (raw > tMax ? tMax : raw < -tMax ? -tMax : raw) - this.holdTorque[i] - END_STOP_STIFFNESS_PER_KP * spec.kp * intoStop;
      // Damping (motor kd toward dq*, passive damping, regularised Coulomb friction): implicit,
      // in Rapier's velocity motor, limited to the torque the motor has left.
      const friction = jc.frictionNm / Math.max(Math.abs(dq), FRICTION_VELOCITY_EPS);
      // In the stop, damping (implicit, so always stable) takes most of the impact's energy.
      const D = kd + jc.dampingNms + friction + (intoStop !== 0 ? END_STOP_DAMPING_PER_KD * spec.kd : 0);
      this.joints[i].configureMotorVelocity((kd * cmd.dq[i]) / D + (this.dqSolver[i] - dq), D);
      const law = raw + kd * (cmd.dq[i] - dq);
      this.effort[i] = (law > tMax ? tMax : law < -tMax ? -tMax : law) / ts;
      const o = (i + 1) * 3;
      const p = i * 3;
      for (let k = 0; k < 3; k++) {
        const t = stiffness * this.axisWorld[p + k];
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
    const force = Math.max(-maxForce, Math.min(maxForce, kpLin * (target - this.fingerOpeningM) - kdLin * this.fingerVelocityMs));
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
    const com = this.comScratch;
    const gq: Quat = [rot[24], rot[25], rot[26], rot[27]];
    for (let k = 0; k < 8; k++) {
      const c: [number, number, number] = [this.carriedCom[k * 3], this.carriedCom[k * 3 + 1], this.carriedCom[k * 3 + 2]];
      let w: [number, number, number];
      let o: number;
      if (k < 6) {
        const p = (k + 1) * 4;
        w = quatRotate([rot[p], rot[p + 1], rot[p + 2], rot[p + 3]], c);
        o = (k + 1) * 3;
      } else {
        // Fingers turn with the gripper and sit ±(half thickness + opening) along its y.
        const sign = k === 6 ? 1 : -1;
        w = quatRotate(gq, [c[0], c[1] + sign * (GRIPPER_GEOMETRY.fingerHalfM[1] + this.fingerOpeningM), c[2] + GRIPPER_GEOMETRY.fingerCentreZM]);
        o = 6 * 3;
      }
      com[k * 3] = org[o] + w[0];
      com[k * 3 + 1] = org[o + 1] + w[1];
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

  /** All the arm's joints, for removal or inspection. */
  allJoints(): ImpulseJoint[] {
    return [...this.joints, ...this.fingerJoints];
  }
}

function clamp01(x: number): number {
  return x < 0 ? 0 : x > 1 ? 1 : x;
}

/** Shortest rotation taking +y to the unit vector d. */
function quatBetweenY(d: readonly [number, number, number]): Quat {
  return quatBetween([0, 1, 0], d);
}
function quatBetweenX(d: readonly [number, number, number]): Quat {
  return quatBetween([1, 0, 0], d);
}
function quatBetween(a: readonly [number, number, number], b: readonly [number, number, number]): Quat {
  const d = a[0] * b[0] + a[1] * b[1] + a[2] * b[2];
  if (d < -0.999999) {
    // Opposite: half a turn about any axis perpendicular to a.
    const p = Math.abs(a[0]) < 0.9 ? [0, -a[2], a[1]] : [-a[2], 0, a[0]];
    const n = Math.hypot(p[0], p[1], p[2]);
    return [p[0] / n, p[1] / n, p[2] / n, 0];
  }
  const c: [number, number, number] = [a[1] * b[2] - a[2] * b[1], a[2] * b[0] - a[0] * b[2], a[0] * b[1] - a[1] * b[0]];
  const w = 1 + d;
  const n = Math.hypot(c[0], c[1], c[2], w);
  return [c[0] / n, c[1] / n, c[2] / n, w / n];
}
