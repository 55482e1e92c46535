/**
 * The torque feed-forward every YAM rig sends with its MIT commands, real or sim — one
 * implementation, so real and sim arms sag (or do not) the same way and system identification
 * never fits a difference that is only in the controllers.
 *
 * Like the vendor follower loop: τff = gravity(q) × per-joint factor + Coulomb × sign(dq), where
 * gravity(q) is the arm model's static inverse dynamics (zero velocity and acceleration) from its
 * link masses and centres of mass. A gravity torque beyond what the motor can deliver (or the
 * vendor's 25 N·m sanity bound) means the model or the readings are wrong: the rig treats it as a
 * fault and holds safely instead of sending it.
 *
 * Pure: no Node built-ins.
 */
import type { ArmModel, ArmSide, RigFault } from './contract.js';
import { linkFrames, newFrame, LINK_NAMES, quaternionToRotation, type Frame } from './kinematics.js';
import {
  YAM_CHAIN,
  YAM_COULOMB_FRICTION_NM,
  YAM_FINGER_MASS_KG,
  YAM_GRAVITY_COMP_SCALE,
  YAM_LINK_MASS_KG,
} from './yam.js';

export const GRAVITY_MS2 = 9.81;
/** The vendor stack treats a model gravity torque above this as an error. */
export const GRAVITY_TORQUE_SANITY_NM = 25;
/** Below this joint speed the Coulomb term is off: the sign of a standing joint's velocity is noise, and ±0.3 N·m chatter would shake a held pose. */
export const COULOMB_DEADBAND_RAD_S = 0.02;

/**
 * Where the gripper's mass sits in the gripper frame (approach −z, fingers along ±y). The sim
 * twin builds its palm and finger bodies on these centres, so its arms weigh what this model says.
 */
export const GRIPPER_MASS_CENTRES = {
  /** Palm (gripper body) centre along the approach axis. */
  palmZM: -0.04,
  /** Finger centre along the approach axis. */
  fingerZM: -0.11,
  /** A finger's half thickness: its centre sits this far beyond its opening along ±y. */
  fingerHalfThicknessM: 0.006,
} as const;

/**
 * Static gravity torque of each arm joint (6) for joint angles q and the gripper opening
 * (0 closed … 1 open): the torque each motor must supply to hold the arm still. Links 1–5 carry
 * their mass at the middle of the segment to the next joint (the sim's capsules), the gripper at
 * its palm centre, each finger at its pad.
 */
export class ArmGravityModel {
  private readonly frames: Frame[] = LINK_NAMES.map(() => newFrame());
  /** Gravity in the arm's base frame, m/s². */
  private readonly g = new Float64Array(3);
  private readonly masses: number[];
  /** Centres of mass in their link frames: links 1..6 (gripper last), then the two fingers (in the gripper frame). */
  private readonly coms: number[][];
  private readonly halfStrokeM: number;
  private readonly com = new Float64Array(24);

  /**
   * `payloadKg`: extra mass carried at the palm centre (a tool held by the gripper).
   * `toolKg`: a tool that replaces the gripper and its fingers (a leader arm's teaching handle),
   * its mass at the palm centre; the fingers then weigh nothing.
   */
  constructor(
    readonly arm: ArmModel,
    payloadKg = 0,
    toolKg?: number,
  ) {
    const R = quaternionToRotation(arm.basePose.quaternion);
    // g_base = Rᵀ · (0, 0, −g): the base may be mounted tilted.
    for (let k = 0; k < 3; k++) this.g[k] = -GRAVITY_MS2 * R[6 + k];
    this.masses = [...LINK_NAMES.slice(1).map((n) => YAM_LINK_MASS_KG[n]), YAM_FINGER_MASS_KG, YAM_FINGER_MASS_KG];
    if (toolKg !== undefined) {
      this.masses[5] = toolKg;
      this.masses[6] = this.masses[7] = 0;
    }
    this.masses[5] += payloadKg;
    this.coms = [
      ...[1, 2, 3, 4, 5].map((i) => YAM_CHAIN[i].xyz.map((v) => v / 2)),
      [0, 0, GRIPPER_MASS_CENTRES.palmZM],
      [0, 0, GRIPPER_MASS_CENTRES.fingerZM],
      [0, 0, GRIPPER_MASS_CENTRES.fingerZM],
    ];
    this.halfStrokeM = arm.gripper.strokeM / 2;
  }

  /** Writes the six joints' gravity torques (N·m) into out. Allocation-free. */
  torques(q: ArrayLike<number>, gripperOpening: number, out: Float64Array): Float64Array {
    const f = linkFrames(q, this.frames);
    const s = Math.min(Math.max(gripperOpening, 0), 1) * this.halfStrokeM;
    const com = this.com;
    for (let k = 0; k < 8; k++) {
      const link = k < 6 ? k + 1 : 6;
      const R = f[link].rotation;
      const P = f[link].position;
      const c = this.coms[k];
      const y = k < 6 ? c[1] : (k === 6 ? 1 : -1) * (GRIPPER_MASS_CENTRES.fingerHalfThicknessM + s);
      com[k * 3] = P[0] + R[0] * c[0] + R[1] * y + R[2] * c[2];
      com[k * 3 + 1] = P[1] + R[3] * c[0] + R[4] * y + R[5] * c[2];
      com[k * 3 + 2] = P[2] + R[6] * c[0] + R[7] * y + R[8] * c[2];
    }
    const [gx, gy, gz] = this.g;
    for (let j = 0; j < 6; j++) {
      // Joint j turns link j+1 about its axis, through link j+1's origin.
      const R = f[j + 1].rotation;
      const o = f[j + 1].position;
      const a = YAM_CHAIN[j].axis;
      const ax = R[0] * a[0] + R[1] * a[1] + R[2] * a[2];
      const ay = R[3] * a[0] + R[4] * a[1] + R[5] * a[2];
      const az = R[6] * a[0] + R[7] * a[1] + R[8] * a[2];
      let t = 0;
      // Joint j carries links j+1..6 (body index ≥ j) and both fingers.
      for (let k = j; k < 8; k++) {
        const m = this.masses[k];
        const dx = com[k * 3] - o[0];
        const dy = com[k * 3 + 1] - o[1];
        const dz = com[k * 3 + 2] - o[2];
        // ((d × m·g) · a)
        t += m * ((dy * gz - dz * gy) * ax + (dz * gx - dx * gz) * ay + (dx * gy - dy * gx) * az);
      }
      out[j] = -t;
    }
    return out;
  }
}

/** How much of each term a rig sends: the vendor's numbers for its own model on real arms, or none of the corrections where the world is the model. */
export interface FeedForwardSettings {
  /** Per joint (6): gravity × this. */
  readonly gravityFactor: readonly number[];
  /** Per joint (6): Coulomb friction feed-forward, N·m, by velocity sign. */
  readonly coulombNm: readonly number[];
}

/**
 * The vendor stack's settings, for real YAM arms: its URDF masses under-weigh the real arm
 * (cables, fasteners; ~30 mrad sag on joints 3–4 without the factors) and the gearboxes' Coulomb
 * friction is its estimate.
 */
export const VENDOR_FEED_FORWARD: FeedForwardSettings = {
  gravityFactor: YAM_GRAVITY_COMP_SCALE,
  coulombNm: YAM_COULOMB_FRICTION_NM,
};

/**
 * For worlds whose arms weigh exactly what the model says (the sim twin, the emulated cell): plain
 * gravity, no Coulomb term. The vendor's factors would over-compensate there (a held wrist 30 mrad
 * high), and the sim twin's results were measured without them.
 */
export const MODEL_EXACT_FEED_FORWARD: FeedForwardSettings = {
  gravityFactor: [1, 1, 1, 1, 1, 1],
  coulombNm: [0, 0, 0, 0, 0, 0],
};

/** A settings record from a config file: six finite numbers each, factors 0.5–1.5, Coulomb 0–2 N·m; or a sentence. */
export function feedForwardProblem(s: unknown): string | undefined {
  if (s === null || typeof s !== 'object')
    return 'feedForward must be an object with gravityFactor and coulombNm (six numbers each)';
  const { gravityFactor, coulombNm } = s as Record<string, unknown>;
  const six = (v: unknown, lo: number, hi: number): boolean =>
    Array.isArray(v) && v.length === 6 && v.every((x) => typeof x === 'number' && x >= lo && x <= hi);
  if (!six(gravityFactor, 0.5, 1.5)) return 'feedForward.gravityFactor must be six numbers from 0.5 to 1.5';
  if (!six(coulombNm, 0, 2)) return 'feedForward.coulombNm must be six numbers from 0 to 2 N·m';
  return undefined;
}

/**
 * The vendor-style feed-forward for one arm: gravity × factor + Coulomb × sign(velocity), each
 * joint clamped to its motor's torque. compute() returns a fault sentence instead when the model
 * gravity torque is beyond the motor's limit or the sanity bound.
 */
export class ArmFeedForward {
  private readonly gravity: ArmGravityModel;
  private readonly g = new Float64Array(6);
  private readonly factor: readonly number[];
  private readonly coulombNm: readonly number[];

  constructor(
    readonly arm: ArmModel,
    settings: FeedForwardSettings = VENDOR_FEED_FORWARD,
    payloadKg = 0,
  ) {
    this.gravity = new ArmGravityModel(arm, payloadKg);
    this.factor = settings.gravityFactor;
    this.coulombNm = settings.coulombNm;
  }

  /**
   * τff for the six joints into out, from measured joint angles and velocities (the state's entries
   * from `offset`) and the gripper opening. Returns undefined, or why it cannot be sent (then out is zeros).
   */
  compute(
    position: ArrayLike<number>,
    velocity: ArrayLike<number>,
    offset: number,
    out: Float64Array,
  ): string | undefined {
    const q = SCRATCH_Q;
    for (let j = 0; j < 6; j++) q[j] = position[offset + j];
    for (let j = 0; j < 6; j++) {
      if (!Number.isFinite(q[j])) {
        out.fill(0);
        return `the ${this.arm.joints[j].name} has no valid position, so its gravity cannot be computed`;
      }
    }
    this.gravity.torques(q, position[offset + 6], this.g);
    for (let j = 0; j < 6; j++) {
      const spec = this.arm.joints[j];
      const gravity = this.g[j] * this.factor[j];
      const limit = Math.min(spec.maxTorqueNm, GRAVITY_TORQUE_SANITY_NM);
      if (!(Math.abs(gravity) <= limit)) {
        out.fill(0);
        return `the arm model asks ${gravity.toFixed(1)} N·m of the ${spec.name} to hold it against gravity, beyond the ${limit.toFixed(0)} N·m it may deliver — check the arm's base pose, payload and joint zeros`;
      }
      const v = velocity[offset + j];
      const coulomb =
        v > COULOMB_DEADBAND_RAD_S ? this.coulombNm[j] : v < -COULOMB_DEADBAND_RAD_S ? -this.coulombNm[j] : 0;
      const t = gravity + coulomb;
      out[j] = t > spec.maxTorqueNm ? spec.maxTorqueNm : t < -spec.maxTorqueNm ? -spec.maxTorqueNm : t;
    }
    return undefined;
  }
}

const SCRATCH_Q = new Float64Array(6);

/** The fault a rig raises when ArmFeedForward.compute says why it cannot send an arm's feed-forward. */
export function feedForwardFault(side: ArmSide, why: string): RigFault {
  return { kind: 'limit', arm: side, message: `Not sending the ${side} arm's gravity feed-forward: ${why}.` };
}
