/**
 * Turns a scene snapshot and a camera list into the page's frame: which looks exist, where every
 * body is, where every camera is and how it projects. All geometry happens here, in Node, so the
 * page only draws; bad snapshots are refused here with a sentence naming the culprit.
 */
import type { Pose3 } from '../../tasks/geometry.js';
import type { CameraName } from '../../policy/contract.js';
import { composeFrames, frameToPose, newFrame, poseToFrame } from '../../rig/kinematics.js';
import type { CameraCalibration } from './camera-calibration.js';
import { cameraPoseInTable, glCameraPose, glProjectionMatrix } from './camera-projection.js';
import type { PageCamera } from './page-protocol.js';
import type { SceneBody, Visual } from '../../scene3d/visual.js';
import { catalogueVisuals, cellBodies, fixtureVisualId, objectVisualId } from '../../scene3d/cell-visuals.js';
import { FINGER_CENTRE_Z_M, FINGER_VISUAL_ID, fingerOffsetsM, linkVisualId, rigVisuals } from './rig-visual.js';
import type { SceneSnapshot, SceneTask } from './scene-snapshot.js';

/** A snapshot the renderer cannot draw, with the reason in words. */
export class SceneSnapshotError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'SceneSnapshotError';
  }
}

/** Full stroke of the YAM linear gripper (src/rig/yam.ts). */
const DEFAULT_STROKE_M = 0.096;
const HALF_OPEN = 0.5;

/** Every look a snapshot of this task can use: the rig, the cell and the task's catalogue. */
export function sceneVisuals(task: SceneTask): Record<string, Visual> {
  return { ...rigVisuals(), ...catalogueVisuals(task) };
}

function checkPose(what: string, pose: Pose3): void {
  const ok =
    Array.isArray(pose?.position) &&
    Array.isArray(pose?.quaternion) &&
    pose.position.length === 3 &&
    pose.quaternion.length === 4 &&
    [...pose.position, ...pose.quaternion].every(Number.isFinite) &&
    Math.hypot(...pose.quaternion) > 1e-6;
  if (!ok)
    throw new SceneSnapshotError(
      `The scene cannot be drawn: the pose of ${what} is not a finite position and rotation (${JSON.stringify(pose)}).`,
    );
}

/** Bodies of a snapshot: cell, rig links and fingers, fixtures, objects. */
export function snapshotBodies(snapshot: SceneSnapshot, strokeM = DEFAULT_STROKE_M): SceneBody[] {
  const bodies: SceneBody[] = cellBodies();
  const linkFrame = newFrame();
  const offset = newFrame();
  const world = newFrame();
  for (const link of snapshot.links) {
    checkPose(`rig link ${link.name}`, link.pose);
    const sep = link.name.indexOf('_');
    const side = link.name.slice(0, sep);
    const local = link.name.slice(sep + 1);
    if (sep < 0 || (side !== 'left' && side !== 'right')) {
      throw new SceneSnapshotError(
        `The scene cannot be drawn: rig link "${link.name}" is not named "left_<link>" or "right_<link>".`,
      );
    }
    bodies.push({ key: `link:${link.name}`, visual: linkVisualId(local), pose: link.pose });
    if (local === 'gripper') {
      const open = snapshot.grippers?.[side] ?? HALF_OPEN;
      if (!Number.isFinite(open))
        throw new SceneSnapshotError(`The scene cannot be drawn: the ${side} gripper opening is ${open}.`);
      poseToFrame(link.pose, linkFrame);
      fingerOffsetsM(open, strokeM).forEach((y, i) => {
        offset.position.set([0, y, FINGER_CENTRE_Z_M]);
        composeFrames(linkFrame, offset, world);
        bodies.push({ key: `finger:${side}:${i}`, visual: FINGER_VISUAL_ID, pose: frameToPose(world) });
      });
    }
  }
  const objectKinds = new Set(snapshot.task.objectKinds.map((k) => k.id));
  const fixtureKinds = new Set(snapshot.task.fixtureKinds.map((k) => k.id));
  for (const f of snapshot.fixtures) {
    if (!fixtureKinds.has(f.kind))
      throw new SceneSnapshotError(
        `The scene cannot be drawn: fixture "${f.id}" is of kind "${f.kind}", which task ${snapshot.task.id} does not define.`,
      );
    checkPose(`fixture ${f.id}`, f.pose);
    bodies.push({ key: `fixture:${f.id}`, visual: fixtureVisualId(f.kind), pose: f.pose });
  }
  for (const o of snapshot.objects) {
    if (!objectKinds.has(o.kind))
      throw new SceneSnapshotError(
        `The scene cannot be drawn: object "${o.id}" is of kind "${o.kind}", which task ${snapshot.task.id} does not define.`,
      );
    checkPose(`object ${o.id}`, o.pose);
    bodies.push({ key: `object:${o.id}`, visual: objectVisualId(o.kind), pose: o.pose });
  }
  return bodies;
}

/** The page's cameras for a snapshot, in the order asked. */
export function snapshotCameras(
  snapshot: SceneSnapshot,
  calibration: CameraCalibration,
  cameras: readonly CameraName[],
): PageCamera[] {
  return cameras.map((name) => {
    const model = calibration.cameras[name];
    if (!model) throw new SceneSnapshotError(`The camera calibration "${calibration.name}" has no camera ${name}.`);
    const optical = cameraPoseInTable(name, model, snapshot.links);
    return {
      name,
      widthPx: model.intrinsics.widthPx,
      heightPx: model.intrinsics.heightPx,
      projection: glProjectionMatrix(model.intrinsics, model.nearM, model.farM),
      pose: glCameraPose(optical),
    };
  });
}
