/**
 * The sim calibration record: every physical parameter of the twin that is not in the rig model
 * or the task catalogue. Versioned and hashed so each rollout can say which physics it ran on;
 * the SysID work fits these numbers from teleop recordings and bumps `version`.
 */
import { createHash } from 'node:crypto';
import canonicalize from 'canonicalize';

export interface JointCalibration {
  /** Passive viscous damping, N·m·s/rad. */
  readonly dampingNms: number;
  /** Coulomb friction, N·m. */
  readonly frictionNm: number;
  /** Reflected rotor inertia about the joint axis, kg·m². */
  readonly armatureKgM2: number;
}

export interface SimCalibration {
  readonly name: string;
  readonly version: number;
  /** Physics step, seconds; the rig is read/written at the control rate with physics sub-stepped beneath. */
  readonly physicsStepS: number;
  /** Rapier solver iterations per step: each is a substep of physicsStepS / solverIterations. */
  readonly solverIterations: number;
  /**
   * Projected Gauss–Seidel passes inside each substep (Rapier's numInternalPgsIterations).
   * Cheaper than a substep; what lets friction in a two-finger grasp converge at a coarse step.
   */
  readonly pgsIterations: number;
  /** Let resting objects sleep (skips their integration until touched). */
  readonly allowSleep: boolean;
  /** Per arm joint (6), the same for both arms. */
  readonly joints: readonly JointCalibration[];
  /** Scales the catalogue's object masses and frictions (1 = the catalogue's numbers). */
  readonly objectMassScale: number;
  readonly objectFrictionScale: number;
  /** Friction of the table top and of the gripper fingers' pads. */
  readonly tableFriction: number;
  readonly fingerFriction: number;
  /**
   * Largest squeeze per finger, N. The motor model maps the gripper motor's torque limit to
   * several hundred newtons, which the real gripper's current limit never delivers.
   */
  readonly gripperMaxForceN: number;
  /** Restitution of every contact (0 = no bounce). */
  readonly restitution: number;
  /**
   * Per arm joint (6): torque each motor delivers per N·m the MIT law asks of it (its true torque
   * constant over the nominal one), the same for both arms. Absent = 1 everywhere; left out of
   * records that do not fit it, so the default record's id stays what stored rollouts carry.
   */
  readonly motorTorqueScale?: readonly number[];
  /**
   * Delay from a command being written to the motors acting on it, seconds (bus, adapter and the
   * motor's own reply). Absent = 0. Time-averaged over each physics step, so a fit sees a smooth
   * effect of latencies shorter than one step.
   */
  readonly commandLatencyS?: number;
  /**
   * The gripper motor's rotor inertia seen at each finger through the rack, kg (absent: 0, the
   * fingers move as light bodies). Rapier gives a body one mass in every direction, so this also
   * moves with the hand when the arm turns (≈ twice this at the hand, both fingers) — in the
   * emulated cell and the twin alike, which is why system identification can see it in arm motion.
   */
  readonly fingerReflectedMassKg?: number;
  /**
   * How the arms' chains are jointed in Rapier. Absent or 'impulse': six revolute impulse joints
   * per arm, damping in Rapier's implicit velocity motor (what every stored result ran). 'multibody':
   * an experiment (issue 17 item 4, docs/sim.md): the six revolute joints as one reduced-coordinate
   * multibody, driven by explicit torques (rapier.js 0.21 gives multibody joints no motors).
   */
  readonly armJoints?: 'impulse' | 'multibody';
  /**
   * Which physics engine runs the record. Absent or 'rapier': the Rapier world of src/sim/scene.ts
   * (what every stored result ran; left out so those records keep their ids). 'mujoco': MuJoCo 3
   * (mujoco-js) on the scene the MJCF exporter writes for the layout (src/sim/mujoco, docs/sim.md).
   */
  readonly engine?: SimEngine;
  /**
   * The version of the scene the engine builds, on engines other than Rapier (whose physics the
   * record's own `version` names): each change of MuJoCo's contacts or drive bumps it, so results
   * of different physics never share an id. A MuJoCo record must name the current one
   * (MUJOCO_SCENE_VERSION); `withEngine` writes it.
   */
  readonly engineVersion?: number;
  /** Where a fitted record came from (system identification); absent for hand-made records. */
  readonly lineage?: CalibrationLineage;
}

/** The episodes and record a fitted calibration came from, and how well it tracks held-out episodes. */
export interface CalibrationLineage {
  /** What made it, e.g. 'tandem sysid fit'. */
  readonly method: string;
  /** Id (SHA-256) of the record the fit started from. */
  readonly fromSha256: string;
  readonly episodes: readonly { readonly file: string; readonly sha256: string; readonly role: 'fit' | 'holdout' }[];
  /** RMS joint-angle error of the replay on the held-out episodes, per arm joint (12, policy order without grippers), rad: the start record and this one. */
  readonly heldOutRmsRad?: { readonly before: readonly number[]; readonly after: readonly number[] };
}

/** The physics engines a sim calibration can name. */
export const SIM_ENGINES = ['rapier', 'mujoco'] as const;
export type SimEngine = (typeof SIM_ENGINES)[number];

/**
 * The MuJoCo scene this code builds. 1: MuJoCo's default contacts, the servos' kv in the implicit
 * step even when clamped (grasps did not hold); 2: stiff finger-pad contacts, elliptic cones, multiccd, a
 * clamped servo as its constant force (docs/sim.md "Two engines").
 */
export const MUJOCO_SCENE_VERSION = 2;

/** The engine a record runs on (absent: Rapier). */
export function simEngineOf(cal: SimCalibration): SimEngine {
  return cal.engine ?? 'rapier';
}

/**
 * The record on another engine (`--engine`): 'rapier' drops the field, so a Rapier record keeps
 * the id it had before engines were named; 'mujoco' sets it, which is another id.
 */
export function withEngine(cal: SimCalibration, engine: SimEngine): SimCalibration {
  const rest: { -readonly [K in keyof SimCalibration]: SimCalibration[K] } = { ...cal };
  delete rest.engine;
  delete rest.engineVersion;
  return engine === 'rapier' ? rest : { ...rest, engine, engineVersion: MUJOCO_SCENE_VERSION };
}

/** Why `value` names no engine (a sentence without its full stop), or undefined. */
export function engineNameProblem(value: unknown): string | undefined {
  if ((SIM_ENGINES as readonly unknown[]).includes(value)) return undefined;
  return `engine must be ${SIM_ENGINES.map((e) => `'${e}'`).join(' or ')}, not ${typeof value === 'string' ? `'${value}'` : String(value)}`;
}

export const DEFAULT_SIM_CALIBRATION: SimCalibration = {
  name: 'yam-default',
  version: 4,
  physicsStepS: 1 / 250,
  solverIterations: 4,
  // With 2 passes (v3) a bottle held in a side-on body grasp crept out along the fingers at
  // ≈ 1.3 mm/s and fell mid-carry where the 1 ms × 8 reference held it (0.4 mm/s); with 4 it does
  // not creep, for ≈ 4% of the step's cost (docs/sim.md).
  pgsIterations: 4,
  allowSleep: true,
  // Damping and friction from the vendor's idle damping and Coulomb estimates; armature is a
  // guess of the geared rotor inertia (DM4340 40:1, DM4310 10:1) until SysID fits it.
  joints: [
    { dampingNms: 0.1, frictionNm: 0.3, armatureKgM2: 0.02 },
    { dampingNms: 0.1, frictionNm: 0.3, armatureKgM2: 0.02 },
    { dampingNms: 0.1, frictionNm: 0.3, armatureKgM2: 0.02 },
    { dampingNms: 0.3, frictionNm: 0.06, armatureKgM2: 0.002 },
    { dampingNms: 0.05, frictionNm: 0.06, armatureKgM2: 0.002 },
    { dampingNms: 0.05, frictionNm: 0.06, armatureKgM2: 0.002 },
  ],
  objectMassScale: 1,
  objectFrictionScale: 1,
  tableFriction: 0.6,
  fingerFriction: 1.2,
  // 15 N holds a filled 0.5 l bottle with 3× margin; at 40 N the stiff fingers sank into it
  // (a 65 mm body read as 23–45 mm) and grasps slipped (measured by the bottles code policy).
  gripperMaxForceN: 15,
  restitution: 0,
};

/** The record's canonical JSON (RFC 8785): the bytes its hash covers and the store keeps. */
export function simCalibrationJson(cal: SimCalibration): string {
  const text = canonicalize(cal);
  if (text === undefined) throw new Error('sim calibration is not JSON-serialisable');
  return text;
}

/** SHA-256 (hex) of the record's canonical JSON: the id rollouts store. */
export function simCalibrationHash(cal: SimCalibration): string {
  return createHash('sha256').update(simCalibrationJson(cal)).digest('hex');
}

/** Per joint (6): the motor torque scale a record runs (1 where it names none). */
export function motorTorqueScales(cal: SimCalibration): readonly number[] {
  return cal.motorTorqueScale ?? UNIT_TORQUE_SCALE;
}
const UNIT_TORQUE_SCALE: readonly number[] = [1, 1, 1, 1, 1, 1];

/** The store's calibration kind for sim parameters. */
export const SIM_CALIBRATION_KIND = 'sim-parameters';

/** A copy of `base` with some fields replaced (benchmarks and the fine reference step use this). */
export function withCalibration(base: SimCalibration, changes: Partial<SimCalibration>): SimCalibration {
  return { ...base, ...changes };
}

/** Values the physics cannot take (a calibration read from a file, say): the problem in one sentence, or undefined. */
export function calibrationProblem(cal: SimCalibration): string | undefined {
  if (!(cal.physicsStepS > 0 && cal.physicsStepS <= 0.02))
    return `physicsStepS must be in (0, 0.02] s, not ${cal.physicsStepS}`;
  if (!Number.isInteger(cal.solverIterations) || cal.solverIterations < 1)
    return `solverIterations must be a whole number ≥ 1, not ${cal.solverIterations}`;
  if (!Number.isInteger(cal.pgsIterations) || cal.pgsIterations < 1)
    return `pgsIterations must be a whole number ≥ 1, not ${cal.pgsIterations}`;
  if (cal.joints.length !== 6) return `joints must list 6 arm joints, not ${cal.joints.length}`;
  for (const [k, v] of Object.entries(cal)) {
    if (typeof v === 'number' && !Number.isFinite(v)) return `${k} must be a finite number`;
  }
  if (!Number.isInteger(cal.version) || cal.version < 0)
    return `version must be a whole number ≥ 0, not ${cal.version}`;
  for (const k of ['objectMassScale', 'gripperMaxForceN'] as const) {
    if (!(cal[k] > 0)) return `${k} must be greater than 0, not ${cal[k]}`;
  }
  for (const k of ['objectFrictionScale', 'tableFriction', 'fingerFriction'] as const) {
    if (!(cal[k] >= 0)) return `${k} must be 0 or more, not ${cal[k]}`;
  }
  if (!(cal.restitution >= 0 && cal.restitution <= 1)) return `restitution must be from 0 to 1, not ${cal.restitution}`;
  for (const [j, joint] of cal.joints.entries()) {
    for (const k of Object.keys(joint) as (keyof JointCalibration)[]) {
      if (!Number.isFinite(joint[k]) || joint[k] < 0)
        return `joints[${j}].${k} must be a finite number ≥ 0, not ${joint[k]}`;
    }
  }
  if (cal.motorTorqueScale !== undefined) {
    if (cal.motorTorqueScale.length !== 6)
      return `motorTorqueScale must list 6 arm joints, not ${cal.motorTorqueScale.length}`;
    for (const [j, v] of cal.motorTorqueScale.entries())
      if (!(Number.isFinite(v) && v > 0)) return `motorTorqueScale[${j}] must be greater than 0, not ${v}`;
  }
  if (cal.commandLatencyS !== undefined && !(Number.isFinite(cal.commandLatencyS) && cal.commandLatencyS >= 0))
    return `commandLatencyS must be 0 or more, not ${cal.commandLatencyS}`;
  if (
    cal.fingerReflectedMassKg !== undefined &&
    !(Number.isFinite(cal.fingerReflectedMassKg) && cal.fingerReflectedMassKg >= 0)
  )
    return `fingerReflectedMassKg must be 0 or more, not ${cal.fingerReflectedMassKg}`;
  if (cal.armJoints !== undefined && cal.armJoints !== 'impulse' && cal.armJoints !== 'multibody')
    return `armJoints must be 'impulse' or 'multibody', not ${String(cal.armJoints)}`;
  if (cal.engine !== undefined) {
    const p = engineNameProblem(cal.engine);
    if (p !== undefined) return p;
  }
  if (cal.engine === 'mujoco' && cal.engineVersion !== MUJOCO_SCENE_VERSION) {
    return `engineVersion must be ${MUJOCO_SCENE_VERSION} with engine 'mujoco', not ${cal.engineVersion ?? 'absent'}: this tandem builds MuJoCo scene ${MUJOCO_SCENE_VERSION} only (scene 1's grasps did not hold); pass --engine mujoco or set the field`;
  }
  if (cal.engine !== 'mujoco' && cal.engineVersion !== undefined)
    return `engineVersion names a MuJoCo scene version; leave it out for engine '${simEngineOf(cal)}'`;
  // A MuJoCo arm is always a reduced-coordinate chain of hinges; Rapier's multibody arms are an
  // experiment of that engine's, which MuJoCo cannot be asked to run any other way.
  if (cal.engine === 'mujoco' && cal.armJoints === 'multibody')
    return `armJoints 'multibody' is a Rapier arm model that the mujoco engine cannot represent (its arms are always hinge chains): leave armJoints out for engine 'mujoco'`;
  return undefined;
}
