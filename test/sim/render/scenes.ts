/** Scenes for the sim camera tests: the real rig model, forward kinematics and catalogue. */
import type { Pose3 } from '../../../src/tasks/geometry.js';
import { BIN, BOTTLE } from '../../../src/tasks/catalogue.js';
import { objectPose3 } from '../../../src/tasks/footprint.js';
import { yamRigModel } from '../../../src/rig/yam.js';
import { composeFrames, frameToPose, newFrame, poseToFrame } from '../../../src/rig/kinematics.js';
import { rigSnapshotGrippers, rigSnapshotLinks, type SceneSnapshot, type SceneTask, type SnapshotBody } from '../../../src/sim/render/scene-snapshot.js';
import type { RgbImage } from '../../../src/policy/contract.js';

export const RIG = yamRigModel();
export const BOTTLES_TASK: SceneTask = { id: 'bottles-in-the-bin', objectKinds: [BOTTLE], fixtureKinds: [BIN] };

/** A reaching pose for both arms (policy order, mirrored j1), grippers half open. */
export function reachingState(j1 = 0.2, j2 = 1.2, j3 = 1.0): Float64Array {
  const arm = [j1, j2, j3, -0.6, 0, 0, 0.5];
  const q = new Float64Array(14);
  for (let i = 0; i < 7; i++) {
    q[i] = arm[i];
    q[7 + i] = i === 0 ? -arm[i] : arm[i];
  }
  return q;
}

export function bottleAt(id: string, x: number, y: number): SnapshotBody {
  return { id, kind: BOTTLE.id, pose: objectPose3(BOTTLE, 'upright', { x, y, yawRad: 0 }) };
}

export function scene(state: Float64Array, objects: SnapshotBody[], fixtures: SnapshotBody[] = []): SceneSnapshot {
  return { task: BOTTLES_TASK, links: rigSnapshotLinks(RIG, state), grippers: rigSnapshotGrippers(RIG, state), objects, fixtures };
}

/** The pose `offset` expressed in the frame `parent` (both table-frame poses composed). */
export function compose(parent: Pose3, offset: Pose3): Pose3 {
  return frameToPose(composeFrames(poseToFrame(parent), poseToFrame(offset), newFrame()));
}

export function pixel(img: RgbImage, u: number, v: number): [number, number, number] {
  const x = Math.round(u);
  const y = Math.round(v);
  const i = (y * img.width + x) * 3;
  return [img.data[i], img.data[i + 1], img.data[i + 2]];
}

/** The catalogue's bottle blue under any light: blue clearly above red. */
export function looksBlue([r, g, b]: readonly number[]): boolean {
  return b > r + 60 && b > g;
}

export function differingPixels(a: RgbImage, b: RgbImage): number {
  let n = 0;
  for (let i = 0; i < a.data.length; i += 3) {
    if (a.data[i] !== b.data[i] || a.data[i + 1] !== b.data[i + 1] || a.data[i + 2] !== b.data[i + 2]) n += 1;
  }
  return n;
}
