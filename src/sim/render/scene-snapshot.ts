/**
 * What a camera sees, as plain data: every rig link frame, every object and fixture pose, and the
 * task whose catalogue says what each kind looks like. The sim fills one per camera request; the
 * renderer draws it; the station UI's 3D view can draw the same thing from a replayed episode.
 *
 * All poses are in the table frame (src/tasks/geometry.ts). Pure: no Node built-ins.
 */
import type { Pose3 } from '../../tasks/geometry.js';
import type { SceneTask } from '../../scene3d/cell-visuals.js';
import type { ArmSide, RigModel } from '../../rig/contract.js';
import { DOF_PER_ARM, JOINTS_PER_ARM, stateIndex } from '../../rig/contract.js';
import { frameToPose, LINK_NAMES, linkFramesTable } from '../../rig/kinematics.js';

/** One rig link: `${side}_${link}` with link one of kinematics.ts LINK_NAMES ("left_gripper"). */
export interface SnapshotLink {
  readonly name: string;
  readonly pose: Pose3;
}

/** One object or fixture instance: its layout id, its catalogue kind, its pose (origin = centre of its base). */
export interface SnapshotBody {
  readonly id: string;
  readonly kind: string;
  readonly pose: Pose3;
}

/** The catalogue part of a task (src/scene3d, shared with the UI's 3D view). */
export type { SceneTask };

export interface SceneSnapshot {
  readonly task: SceneTask;
  readonly links: readonly SnapshotLink[];
  /** Gripper opening per arm, YAM convention 0 = closed … 1 = open; absent arms are drawn half open. */
  readonly grippers?: Partial<Readonly<Record<ArmSide, number>>>;
  readonly objects: readonly SnapshotBody[];
  readonly fixtures: readonly SnapshotBody[];
}

export function linkName(side: ArmSide, link: string): string {
  return `${side}_${link}`;
}

/**
 * Link frames of both arms for a 14-entry state (policy order), through the rig model's base
 * poses and the one forward kinematics in src/rig — what SimRig puts in a snapshot.
 */
export function rigSnapshotLinks(model: RigModel, position: ArrayLike<number>): SnapshotLink[] {
  const links: SnapshotLink[] = [];
  const q = new Float64Array(JOINTS_PER_ARM);
  for (const arm of model.arms) {
    for (let j = 0; j < JOINTS_PER_ARM; j++) q[j] = position[stateIndex(arm.side, j)];
    const frames = linkFramesTable(arm, q);
    frames.forEach((f, i) => links.push({ name: linkName(arm.side, LINK_NAMES[i]), pose: frameToPose(f) }));
  }
  return links;
}

/** Gripper openings of a 14-entry state (policy order). */
export function rigSnapshotGrippers(model: RigModel, position: ArrayLike<number>): Partial<Record<ArmSide, number>> {
  const out: Partial<Record<ArmSide, number>> = {};
  for (const arm of model.arms) out[arm.side] = position[stateIndex(arm.side, DOF_PER_ARM - 1)];
  return out;
}
