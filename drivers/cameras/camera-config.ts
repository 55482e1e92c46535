/**
 * A camera's config, as an operator writes it (JSON):
 *   {"name": "cam_high", "kind": "v4l2", "device": "/dev/video0", "width": 640, "height": 480, "fps": 30}
 *   {"name": "cam_left_wrist", "kind": "testsrc"}      ffmpeg's synthetic pattern, for tests and rehearsal
 * width × height at fps default to 640 × 480 at 30 (what the lab's USB cameras give as MJPEG).
 * Every problem is one sentence naming the camera and the field.
 */

export type CameraKind = 'v4l2' | 'testsrc';
export const CAMERA_KINDS: readonly CameraKind[] = ['v4l2', 'testsrc'];

export interface CameraConfig {
  readonly name: string;
  readonly kind: CameraKind;
  /** The V4L2 device (v4l2 only), e.g. /dev/video0 or a stable /dev/v4l/by-id/… link. */
  readonly device?: string;
  readonly width: number;
  readonly height: number;
  readonly fps: number;
}

export const DEFAULT_CAMERA_SIZE = { width: 640, height: 480 } as const;
export const DEFAULT_CAMERA_FPS = 30;
/** Largest frame side we accept: beyond 4K no USB MJPEG camera delivers, and it is usually a typo. */
const MAX_SIDE_PX = 4096;
const MAX_FPS = 240;

export class CameraConfigError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'CameraConfigError';
  }
}

const KNOWN_FIELDS = new Set(['name', 'kind', 'device', 'width', 'height', 'fps']);

/** Validates one camera config (parsed JSON); `where` names it in errors (e.g. the file and index). */
export function parseCameraConfig(json: unknown, where = 'camera config'): CameraConfig {
  if (typeof json !== 'object' || json === null || Array.isArray(json)) throw new CameraConfigError(`The ${where} must be a JSON object like {"name": "cam_high", "kind": "v4l2", "device": "/dev/video0"}.`);
  const o = json as Record<string, unknown>;
  if (typeof o.name !== 'string' || !/^[A-Za-z0-9_][A-Za-z0-9_.-]{0,63}$/.test(o.name)) {
    throw new CameraConfigError(`The ${where} needs a 'name' of letters, digits and _ . - (e.g. "cam_high"), not ${JSON.stringify(o.name)}.`);
  }
  const name = o.name;
  const unknown = Object.keys(o).filter((k) => !KNOWN_FIELDS.has(k));
  if (unknown.length > 0) throw new CameraConfigError(`Camera ${name}: unknown field ${unknown.map((k) => `'${k}'`).join(', ')} (known: ${[...KNOWN_FIELDS].join(', ')}).`);
  if (!CAMERA_KINDS.includes(o.kind as CameraKind)) throw new CameraConfigError(`Camera ${name}: 'kind' must be ${CAMERA_KINDS.map((k) => `"${k}"`).join(' or ')}, not ${JSON.stringify(o.kind)}.`);
  const kind = o.kind as CameraKind;
  let device: string | undefined;
  if (kind === 'v4l2') {
    if (typeof o.device !== 'string' || !o.device.startsWith('/dev/')) {
      throw new CameraConfigError(`Camera ${name}: a v4l2 camera needs a 'device' under /dev (e.g. "/dev/video0"), not ${JSON.stringify(o.device)}.`);
    }
    device = o.device;
  } else if (o.device !== undefined) {
    throw new CameraConfigError(`Camera ${name}: a testsrc camera has no 'device' (it is ffmpeg's synthetic pattern).`);
  }
  const side = (field: 'width' | 'height', dflt: number): number => {
    const v = o[field];
    if (v === undefined) return dflt;
    if (typeof v !== 'number' || !Number.isInteger(v) || v < 16 || v > MAX_SIDE_PX || v % 2 !== 0) {
      throw new CameraConfigError(`Camera ${name}: '${field}' must be an even whole number of pixels from 16 to ${MAX_SIDE_PX}, not ${JSON.stringify(v)}.`);
    }
    return v;
  };
  const width = side('width', DEFAULT_CAMERA_SIZE.width);
  const height = side('height', DEFAULT_CAMERA_SIZE.height);
  const fps = o.fps ?? DEFAULT_CAMERA_FPS;
  if (typeof fps !== 'number' || !Number.isFinite(fps) || fps < 1 || fps > MAX_FPS) {
    throw new CameraConfigError(`Camera ${name}: 'fps' must be a number from 1 to ${MAX_FPS} frames per second, not ${JSON.stringify(o.fps)}.`);
  }
  return { name, kind, ...(device ? { device } : {}), width, height, fps };
}

/** A list of camera configs (a JSON array); names must be unique. */
export function parseCameraConfigs(json: unknown, where = 'cameras config'): CameraConfig[] {
  if (!Array.isArray(json)) throw new CameraConfigError(`The ${where} must be a JSON array of cameras, like [{"name": "cam_high", "kind": "v4l2", "device": "/dev/video0"}].`);
  const out = json.map((c, i) => parseCameraConfig(c, `${where} entry ${i}`));
  const seen = new Set<string>();
  for (const c of out) {
    if (seen.has(c.name)) throw new CameraConfigError(`The ${where} names camera ${c.name} twice; each camera needs its own name.`);
    seen.add(c.name);
  }
  const devices = out.filter((c) => c.device).map((c) => c.device!);
  const dup = devices.find((d, i) => devices.indexOf(d) !== i);
  if (dup) throw new CameraConfigError(`The ${where} gives ${dup} to two cameras; one device can feed only one camera.`);
  return out;
}
