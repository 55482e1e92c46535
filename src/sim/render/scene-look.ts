/**
 * A rollout's look: how its sim cameras see the same world differently — each camera nudged off
 * its calibrated pose, the light brighter or dimmer and from another direction, the objects and
 * the table in other colours. Drawn per rollout by a domain-randomization spec
 * (src/sim/randomization.ts) and applied only here, in the renderer's inputs: the physics never
 * sees it. Pure data and math, no I/O; no look means the calibrated, default picture, byte for byte.
 */
import type { Pose3 } from '../../tasks/geometry.js';
import { CAMERA_NAMES, type CameraName } from '../../policy/contract.js';
import {
  composeFrames,
  frameToPose,
  newFrame,
  poseToFrame,
  rotationToQuaternion,
  rpyToRotation,
} from '../../rig/kinematics.js';
import type { CameraCalibration } from './camera-calibration.js';
import type { Visual } from '../../scene3d/visual.js';
import { TABLE_VISUAL_ID } from '../../scene3d/cell-visuals.js';
import type { TableLight } from '../../scene3d/table-scene.js';

export type Vec3 = readonly [number, number, number];

/** A camera's offset in its own optical frame (x right, y down, z forward): metres, and roll/pitch/yaw radians. */
export interface CameraOffset {
  readonly positionM: Vec3;
  readonly rotationRad: Vec3;
}

/** The table light: every lamp's intensity scaled, the sun turned about the vertical and tilted up or down. */
export interface LightLook {
  readonly intensityScale: number;
  readonly sunAzimuthRad: number;
  readonly sunElevationRad: number;
}

export interface SceneLook {
  readonly cameras?: Partial<Readonly<Record<CameraName, CameraOffset>>>;
  readonly light?: LightLook;
  /** Multiplies the red, green and blue of every object and fixture (the catalogue's colours). */
  readonly objectColorScale?: Vec3;
  /** Multiplies the table top's colour. */
  readonly tableColorScale?: Vec3;
}

/** The light the page draws: every lamp's intensity scale and where the sun stands (table frame). */
export type PageLight = TableLight;

/** The sun of the default light (src/scene3d/table-scene.ts): above and behind the arms. */
export const DEFAULT_SUN_POSITION: Vec3 = [-0.6, 0.4, 1.5];

/** The calibration with each camera moved by its offset (composed in the camera's own frame). */
export function lookedCameraCalibration(
  calibration: CameraCalibration,
  look: SceneLook | undefined,
): CameraCalibration {
  if (!look?.cameras) return calibration;
  const cameras = { ...calibration.cameras };
  for (const name of CAMERA_NAMES) {
    const off = look.cameras[name];
    const model = cameras[name];
    if (!off || !model) continue;
    const offset: Pose3 = {
      position: [...off.positionM],
      quaternion: rotationToQuaternion(rpyToRotation(off.rotationRad)),
    };
    const pose = frameToPose(composeFrames(poseToFrame(model.pose), poseToFrame(offset), newFrame()));
    cameras[name] = { ...model, pose };
  }
  return { ...calibration, cameras };
}

/** The looks with the drawn colours: objects and fixtures by one multiplier, the table by another. */
export function lookedVisuals(
  visuals: Readonly<Record<string, Visual>>,
  look: SceneLook | undefined,
): Record<string, Visual> {
  if (!look?.objectColorScale && !look?.tableColorScale) return { ...visuals };
  const scaled = (c: Visual['color'], s: Vec3): Visual['color'] =>
    [0, 1, 2].map((i) => Math.max(0, Math.min(255, Math.round(c[i] * s[i])))) as unknown as Visual['color'];
  const out: Record<string, Visual> = {};
  for (const [id, v] of Object.entries(visuals)) {
    const s =
      id === TABLE_VISUAL_ID
        ? look.tableColorScale
        : id.startsWith('object:') || id.startsWith('fixture:')
          ? look.objectColorScale
          : undefined;
    out[id] = s ? { ...v, color: scaled(v.color, s) } : v;
  }
  return out;
}

/** The page's light for a look; undefined (the default light) without a light look. */
export function pageLight(look: SceneLook | undefined): PageLight | undefined {
  const l = look?.light;
  if (!l) return undefined;
  const [x, y, z] = DEFAULT_SUN_POSITION;
  const r = Math.hypot(x, y, z);
  const az = Math.atan2(y, x) + l.sunAzimuthRad;
  const el = Math.atan2(z, Math.hypot(x, y)) + l.sunElevationRad;
  return {
    intensityScale: l.intensityScale,
    sunPosition: [r * Math.cos(el) * Math.cos(az), r * Math.cos(el) * Math.sin(az), r * Math.sin(el)],
  };
}
