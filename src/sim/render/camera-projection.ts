/**
 * Camera geometry from a calibration record: where a camera is for a given scene (wrist cameras
 * ride their gripper link), the pinhole projection of a table point to a pixel, and the same model
 * as a GL projection matrix for the renderer. Pure math, no I/O.
 */
import type { Pose3 } from '../../tasks/geometry.js';
import { composeFrames, frameToPose, invertFrame, newFrame, poseToFrame } from '../../rig/kinematics.js';
import type { CameraIntrinsics, CameraModel } from './camera-calibration.js';
import type { SnapshotLink } from './scene-snapshot.js';

/** A camera the scene cannot place, with the reason in words. */
export class CameraPlacementError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'CameraPlacementError';
  }
}

/** The camera's optical frame (x right, y down, z forward) in the table frame. */
export function cameraPoseInTable(name: string, camera: CameraModel, links: readonly SnapshotLink[]): Pose3 {
  if (camera.mountFrame === 'table') return camera.pose;
  const mount = links.find((l) => l.name === camera.mountFrame);
  if (!mount) {
    throw new CameraPlacementError(
      `Camera ${name} is mounted on "${camera.mountFrame}", but the scene has no such link (it has ${links.length ? links.map((l) => l.name).join(', ') : 'no links'}).`,
    );
  }
  return frameToPose(composeFrames(poseToFrame(mount.pose), poseToFrame(camera.pose)));
}

/**
 * Pinhole projection (no lens distortion) of a table-frame point: pixel (u, v) in the
 * pixel-centre convention and the depth along the optical axis. Depth ≤ 0 means behind the camera.
 */
export function projectToPixel(
  intrinsics: CameraIntrinsics,
  cameraPose: Pose3,
  pointTable: readonly [number, number, number],
): { u: number; v: number; depthM: number } {
  const inv = invertFrame(poseToFrame(cameraPose));
  const R = inv.rotation;
  const p = inv.position;
  const [x, y, z] = pointTable;
  const cx = R[0] * x + R[1] * y + R[2] * z + p[0];
  const cy = R[3] * x + R[4] * y + R[5] * z + p[1];
  const cz = R[6] * x + R[7] * y + R[8] * z + p[2];
  return {
    u: (intrinsics.fxPx * cx) / cz + intrinsics.cxPx,
    v: (intrinsics.fyPx * cy) / cz + intrinsics.cyPx,
    depthM: cz,
  };
}

/** The optical frame turned into a GL camera frame (y up, looking down −z): half a turn about x. */
export function glCameraPose(opticalPose: Pose3): Pose3 {
  const flip = newFrame();
  flip.rotation.set([1, 0, 0, 0, -1, 0, 0, 0, -1]);
  return frameToPose(composeFrames(poseToFrame(opticalPose), flip));
}

/**
 * GL projection matrix (column-major) reproducing the pinhole model exactly: a point that projects
 * to pixel centre (u, v) lands in window pixel (u + ½, v + ½) counted from the top-left corner.
 */
export function glProjectionMatrix(k: CameraIntrinsics, nearM: number, farM: number): number[] {
  const W = k.widthPx;
  const H = k.heightPx;
  // Rows of the 4×4 matrix; derived in docs/sim-cameras.md ("Projection").
  const m00 = (2 * k.fxPx) / W;
  const m02 = 1 - (2 * (k.cxPx + 0.5)) / W;
  const m11 = (2 * k.fyPx) / H;
  const m12 = (2 * (k.cyPx + 0.5)) / H - 1;
  const m22 = -(farM + nearM) / (farM - nearM);
  const m23 = (-2 * farM * nearM) / (farM - nearM);
  // Column-major: column 0, column 1, …
  return [m00, 0, 0, 0, 0, m11, 0, 0, m02, m12, m22, -1, 0, 0, m23, 0];
}
