/**
 * What SimRig and the sim rollout need from a physics world, whichever engine steps it: the two
 * arms' measured joints, one physics step under the motors' commands, the blow-up check, and what
 * the policy, the cameras, the task events and the scoring read. The Rapier SimScene
 * (src/sim/scene.ts) and the MuJoCo scene (src/sim/mujoco) both are one; nothing above them asks which.
 */
import type { ObjectSighting } from '../tasks/task-events.js';
import type { SceneSnapshot } from './render/scene-snapshot.js';
import type { ArmModel, RigModel } from '../rig/contract.js';
import type { Layout, ObjectEndState, TaskDefinition } from '../tasks/types.js';
import type { SimCalibration } from './calibration.js';
import type { MotorCommand } from './arm/motor-command.js';

/** What a scene is built from, whichever engine builds it. */
export interface SceneOptions {
  readonly rigModel: RigModel;
  readonly task: TaskDefinition;
  readonly layout: Layout;
  readonly calibration: SimCalibration;
  /** Start state, policy order (14): 6 joints + gripper per arm. Default: home pose, grippers open. */
  readonly startPosition?: ArrayLike<number>;
  /**
   * Per-rollout placement noise, like an operator placing to projected cues (≈2 mm): each object
   * and movable fixture is shifted by N(0, sigmaM) per axis and turned by N(0, sigmaYawRad).
   * Seeded, so the same seed places the same way. Default: none.
   */
  readonly placementNoise?: { readonly seed: number; readonly sigmaM: number; readonly sigmaYawRad: number };
  /**
   * Per arm joint (6): where each joint's lower mechanical stop sits. Default the limits widened by
   * the vendor's clamping buffer (the sim twin's arms are always powered). The emulated cell puts
   * joints 2–3's stops a hair inside their lower limits, where a real unpowered YAM rests folded.
   */
  readonly lowerStopsRad?: readonly number[];
  /** The gripper motor's rotor inertia seen at each finger, kg (default: the calibration's, else 0: light fingers). */
  readonly fingerReflectedMassKg?: number;
}

/** An object or fixture's pose, for the privileged-state readers (code policies, scoring). */
export interface PrivilegedThing {
  readonly id: string;
  readonly kind: string;
  readonly position: readonly [number, number, number];
  readonly quaternion: readonly [number, number, number, number];
}

/** One arm as the rig reads it after each physics step. */
export interface PhysicsArm {
  readonly model: ArmModel;
  /** Joint angles (rad), velocities (rad/s) and the torque each motor delivered (N·m, as asked), per arm joint. */
  readonly q: Float64Array;
  readonly dq: Float64Array;
  readonly effort: Float64Array;
  readonly gripperEffortNm: number;
  /** Normalised gripper opening (0 closed … 1 open) and its rate. */
  gripperPosition(): number;
  gripperVelocity(): number;
}

export interface PhysicsScene {
  readonly opts: SceneOptions;
  readonly arms: readonly PhysicsArm[];
  /** Physics steps taken (SimRig may jump it forward on a blown-up world). */
  steps: number;
  /** One physics step with these motor commands (per arm). */
  step(commands: readonly MotorCommand[]): void;
  /** Why the simulation can no longer be trusted, or undefined. */
  instability(): string | undefined;
  privilegedState(): { objects: PrivilegedThing[]; fixtures: PrivilegedThing[] };
  snapshot(): SceneSnapshot;
  /** Every body's state as numbers (what a final-state hash covers). */
  fingerprint(): Float64Array;
  endStates(): ObjectEndState[];
  sightings(): ObjectSighting[];
  offTableIds(): string[];
  free(): void;
}
