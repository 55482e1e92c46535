/**
 * The emulated cell's cameras: `cam_high` and both wrist cameras drawn from the cell's own world
 * through the sim's renderer, mounted where the cell truth says they really are — the station's
 * camera calibration (the default) moved by the truth's mounting errors. The station sees only the
 * images; the offsets stay hidden like the rest of the truth.
 */
import { quatMul } from '../sim/colliders.js';
import { ChromiumRenderer } from '../sim/render/chromium-renderer.js';
import { DEFAULT_CAMERA_CALIBRATION, type CameraCalibration, type CameraModel } from '../sim/render/camera-calibration.js';
import { sceneCameraSource } from '../sim/render/scene-camera-source.js';
import type { Renderer } from '../sim/render/renderer.js';
import { CAMERA_NAMES, type CameraName } from '../policy/contract.js';
import type { CameraPoseOffset, HashedCellTruth } from './cell-truth.js';
import type { CellWorld } from './cell-world.js';

/** A small rotation about the mount frame's x, y, z (radians) as a quaternion (xyzw), composed z·y·x. */
function smallRotation(r: readonly [number, number, number]): [number, number, number, number] {
  const axis = (i: number, a: number): [number, number, number, number] => {
    const q: [number, number, number, number] = [0, 0, 0, Math.cos(a / 2)];
    q[i] = Math.sin(a / 2);
    return q;
  };
  return quatMul(axis(2, r[2]), quatMul(axis(1, r[1]), axis(0, r[0])));
}

function mounted(model: CameraModel, o: CameraPoseOffset): CameraModel {
  const p = model.pose.position;
  return {
    ...model,
    pose: {
      position: [p[0] + o.positionM[0], p[1] + o.positionM[1], p[2] + o.positionM[2]],
      quaternion: quatMul(smallRotation(o.rotationRad), model.pose.quaternion),
    },
  };
}

/** Where the cell's cameras really are: `calibrated` moved by the truth's mounting errors (none at gap 'none'). */
export function cellCameraMounting(truth: HashedCellTruth, calibrated: CameraCalibration = DEFAULT_CAMERA_CALIBRATION): CameraCalibration {
  const cameras = Object.fromEntries(CAMERA_NAMES.map((n) => [n, mounted(calibrated.cameras[n], truth.truth.cameraOffsets[n])])) as Record<CameraName, CameraModel>;
  return { name: `emulated-cell ${truth.sha256.slice(0, 12)}`, version: 1, cameras };
}

export interface CellCameras {
  /** The rollout's camera source (the sim's own kind): every listed camera from the same instant of the cell's world. */
  readonly source: ReturnType<typeof sceneCameraSource>;
  /** Wall time (s, the world's clock) of the last capture's snapshot. */
  readonly lastCaptureS: () => number;
  readonly renderer: Renderer;
  close(): Promise<void>;
}

/** The cell's cameras through a Chromium renderer of their own (started on the first image). */
export function cellCameras(world: CellWorld, options: { executablePath?: string } = {}): CellCameras {
  const renderer = new ChromiumRenderer({ calibration: cellCameraMounting(world.truth), executablePath: options.executablePath });
  let last = NaN;
  const source = sceneCameraSource(renderer, () => {
    last = performance.now() / 1000;
    return world.snapshot();
  });
  return { source, renderer, lastCaptureS: () => last, close: () => renderer.close() };
}
