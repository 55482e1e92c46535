/**
 * What SimRig and the sim rollout need from a physics world, whichever engine steps it: the two
 * arms' measured joints, one physics step under the motors' commands, the blow-up check, and what
 * the policy, the cameras, the task events and the scoring read. The Rapier SimScene
 * (src/sim/scene.ts) and the MuJoCo scene (src/sim/mujoco) both are one; nothing above them asks which.
 */
import type { ArmModel } from '../rig/contract.js';
import type { ObjectSighting } from '../tasks/task-events.js';
import type { ObjectEndState } from '../tasks/types.js';
import type { SceneSnapshot } from './render/scene-snapshot.js';
import type { PrivilegedThing, SceneOptions } from './scene.js';
import type { MotorCommand } from './arm/motor-command.js';

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
