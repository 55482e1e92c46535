/**
 * The camera calibration record: intrinsics and mounting of `cam_high` and the two wrist cameras.
 * Versioned and hashed like every calibration (ARCHITECTURE.md "Data"): its id is the SHA-256 of
 * its canonical JSON (RFC 8785), so a rollout can record which camera model produced its images
 * and a loaded record that was edited by hand is refused.
 *
 * Camera frame convention (OpenCV / ROS optical frame): x right in the image, y down, z along the
 * optical axis (out of the lens). Pixel (0, 0) is the centre of the top-left pixel, so a centred
 * principal point of a W-pixel-wide image is cx = (W − 1) / 2.
 *
 * Mounting: each camera's pose is given in a mount frame — the table frame (`table`) or a link
 * frame of the rig named as in scene snapshots (`left_gripper`, `right_gripper`): a wrist camera
 * then follows its gripper wherever the arm goes.
 *
 * Pure: no Node built-ins, so the UI and the calibration tools can read the same record.
 */
import canonicalize from 'canonicalize';
import { sha256 } from '@noble/hashes/sha2.js';
import { bytesToHex, utf8ToBytes } from '@noble/hashes/utils.js';
import type { Pose3 } from '../../tasks/geometry.js';
import { CAMERA_NAMES, type CameraName } from '../../policy/contract.js';

export interface CameraIntrinsics {
  readonly widthPx: number;
  readonly heightPx: number;
  /** Focal lengths in pixels. */
  readonly fxPx: number;
  readonly fyPx: number;
  /** Principal point in pixels (pixel-centre convention, see the file comment). */
  readonly cxPx: number;
  readonly cyPx: number;
}

export interface CameraModel {
  readonly intrinsics: CameraIntrinsics;
  /** `table`, or a rig link name from the scene snapshot (`left_gripper`). */
  readonly mountFrame: string;
  /** The camera's optical frame in its mount frame. */
  readonly pose: Pose3;
  /** Render clipping distances, metres (not part of a real camera; kept so renders are reproducible). */
  readonly nearM: number;
  readonly farM: number;
}

export interface CameraCalibration {
  /** Free-form label ("default", "station-2 2026-11-30"). */
  readonly name: string;
  /** Bumped whenever any number changes; together with the hash it names the record. */
  readonly version: number;
  readonly cameras: Readonly<Record<CameraName, CameraModel>>;
}

/** A calibration record with its id. */
export interface HashedCameraCalibration {
  readonly calibration: CameraCalibration;
  /** SHA-256 (hex) of the RFC 8785 canonical JSON of `calibration`. */
  readonly sha256: string;
}

/** 224 × 224 RGB, the input size of the common VLA vision towers. */
export const DEFAULT_IMAGE_SIZE_PX = 224;

const centred = (sizePx: number, fPx: number): CameraIntrinsics => ({
  widthPx: sizePx,
  heightPx: sizePx,
  fxPx: fPx,
  fyPx: fPx,
  cxPx: (sizePx - 1) / 2,
  cyPx: (sizePx - 1) / 2,
});

/**
 * Wrist camera on the gripper: 50 mm off the flange axis on the gripper's −x side (above the
 * gripper at the home pose), 75 mm down the approach axis — level with the front of the palm, so
 * the palm does not block its view — tilted 20° towards the fingers so both fingertips sit in the
 * lower part of the image, as on ALOHA-style wrist mounts. Image down is the gripper's +x, image
 * right its +y. ≈88° horizontal field of view.
 */
const WRIST_POSE: Pose3 = { position: [-0.05, 0, -0.075], quaternion: [0.696364, 0.696364, 0.122788, 0.122788] };

/**
 * Defaults until the camera calibration tool measures the real cameras. `cam_high` stands behind
 * the arms, 0.9 m above the table, looking across the table at (0.05, 0, 0); ≈79° horizontal
 * field of view covers the whole 1.0 × 1.2 m table top.
 */
export const DEFAULT_CAMERA_CALIBRATION: CameraCalibration = {
  name: 'default',
  version: 1,
  cameras: {
    cam_high: {
      intrinsics: centred(DEFAULT_IMAGE_SIZE_PX, 135),
      mountFrame: 'table',
      pose: { position: [-0.6, 0, 0.9], quaternion: [-0.672807, 0.672807, -0.217555, 0.217555] },
      nearM: 0.05,
      farM: 5,
    },
    cam_left_wrist: {
      intrinsics: centred(DEFAULT_IMAGE_SIZE_PX, 115),
      mountFrame: 'left_gripper',
      pose: WRIST_POSE,
      nearM: 0.01,
      farM: 5,
    },
    cam_right_wrist: {
      intrinsics: centred(DEFAULT_IMAGE_SIZE_PX, 115),
      mountFrame: 'right_gripper',
      pose: WRIST_POSE,
      nearM: 0.01,
      farM: 5,
    },
  },
};

/** A camera calibration that cannot be used, with the reason in words. */
export class CameraCalibrationError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'CameraCalibrationError';
  }
}

export function cameraCalibrationSha256(calibration: CameraCalibration): string {
  const json = canonicalize(calibration);
  if (json === undefined)
    throw new CameraCalibrationError('The camera calibration cannot be written as canonical JSON.');
  return bytesToHex(sha256(utf8ToBytes(json)));
}

export function hashCameraCalibration(calibration: CameraCalibration): HashedCameraCalibration {
  validateCameraCalibration(calibration);
  return { calibration, sha256: cameraCalibrationSha256(calibration) };
}

/**
 * Checks a record read from a file or the store: every camera present with sane numbers, and —
 * when a hash is given — that the content still matches it (refuses hand edits).
 */
export function validateCameraCalibration(value: unknown, expectedSha256?: string): CameraCalibration {
  const bad = (what: string): never => {
    throw new CameraCalibrationError(`The camera calibration is not usable: ${what}.`);
  };
  if (typeof value !== 'object' || value === null) bad('it is not a JSON object');
  const rec = value as Record<string, unknown>;
  if (typeof rec.name !== 'string') bad('"name" must be a string');
  if (!Number.isInteger(rec.version) || (rec.version as number) < 1) bad('"version" must be a positive integer');
  if (typeof rec.cameras !== 'object' || rec.cameras === null) bad('"cameras" is missing');
  const cameras = rec.cameras as Record<string, unknown>;
  for (const name of Object.keys(cameras)) {
    if (!(CAMERA_NAMES as readonly string[]).includes(name))
      bad(`camera "${name}" is not one of ${CAMERA_NAMES.join(', ')}`);
  }
  for (const name of CAMERA_NAMES) {
    const cam = cameras[name] as Record<string, unknown> | undefined;
    if (typeof cam !== 'object' || cam === null) bad(`camera "${name}" is missing`);
    const c = cam as Record<string, unknown>;
    const k = c.intrinsics as Record<string, unknown> | undefined;
    if (typeof k !== 'object' || k === null) bad(`${name} has no intrinsics`);
    const intr = k as Record<string, unknown>;
    for (const f of ['widthPx', 'heightPx']) {
      const v = intr[f];
      if (!Number.isInteger(v) || (v as number) < 8 || (v as number) > 4096)
        bad(`${name} ${f} must be a whole number of pixels between 8 and 4096`);
    }
    for (const f of ['fxPx', 'fyPx']) {
      const v = intr[f];
      if (typeof v !== 'number' || !Number.isFinite(v) || v <= 0)
        bad(`${name} ${f} must be a positive number of pixels`);
    }
    for (const f of ['cxPx', 'cyPx']) {
      const v = intr[f];
      if (typeof v !== 'number' || !Number.isFinite(v)) bad(`${name} ${f} must be a number of pixels`);
    }
    if (typeof c.mountFrame !== 'string' || c.mountFrame.length === 0)
      bad(`${name} needs a mountFrame ("table" or a link name)`);
    const pose = c.pose as Pose3 | undefined;
    const finite = (a: unknown, n: number): boolean =>
      Array.isArray(a) && a.length === n && a.every((v) => typeof v === 'number' && Number.isFinite(v));
    if (!pose || !finite(pose.position, 3) || !finite(pose.quaternion, 4))
      bad(`${name} pose needs a finite position [x, y, z] and quaternion [x, y, z, w]`);
    const qn = Math.hypot(...(pose as Pose3).quaternion);
    if (Math.abs(qn - 1) > 1e-3) bad(`${name} pose quaternion has length ${qn.toFixed(4)}, not 1`);
    if (typeof c.nearM !== 'number' || typeof c.farM !== 'number' || !(c.nearM > 0) || !(c.farM > c.nearM))
      bad(`${name} needs 0 < nearM < farM`);
  }
  const calibration = value as CameraCalibration;
  if (expectedSha256 !== undefined) {
    const actual = cameraCalibrationSha256(calibration);
    if (actual !== expectedSha256) {
      throw new CameraCalibrationError(
        `The camera calibration "${calibration.name}" v${calibration.version} does not match its recorded hash (recorded ${expectedSha256.slice(0, 12)}…, content ${actual.slice(0, 12)}…): it was changed after it was saved. Re-run the camera calibration or restore the saved record.`,
      );
    }
  }
  return calibration;
}
