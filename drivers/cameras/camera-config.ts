/**
 * A camera's config, as an operator writes it in the station config's `cameras` list (JSON):
 *   {"name": "cam_high", "source": "v4l2:/dev/video0", "width": 640, "height": 480, "fps": 30, "format": "mjpeg"}
 *   {"name": "cam_left_wrist", "source": "testsrc"}     ffmpeg's synthetic pattern, for tests and rehearsal
 *   {"name": "cam_high", "source": "cell"}              the emulated cell's renderer (its three cameras)
 * width × height at fps default to 640 × 480 at 30 (what the lab's USB cameras give as MJPEG); a
 * cell camera's size is its renderer's (given, it must match). `format` is the camera's own
 * encoding: only MJPEG, which the recorder stores as the camera compressed it.
 * Every problem is one sentence naming the camera and the field.
 */

export type CameraKind = 'v4l2' | 'testsrc' | 'cell';
/** What an ffmpeg subprocess feeds (drivers/cameras/ffmpeg-camera.ts). */
export type FfmpegCameraKind = 'v4l2' | 'testsrc';
export const CAMERA_SOURCES = ['v4l2:/dev/videoN', 'testsrc', 'cell'] as const;

export interface FfmpegCameraConfig {
  readonly name: string;
  readonly kind: FfmpegCameraKind;
  /** The V4L2 device (v4l2 only), e.g. /dev/video0 or a stable /dev/v4l/by-id/… link. */
  readonly device?: string;
  readonly width: number;
  readonly height: number;
  readonly fps: number;
}

export interface CellCameraConfig {
  readonly name: string;
  readonly kind: 'cell';
  /** The size the config asks for; absent: whatever the cell's renderer draws. */
  readonly width?: number;
  readonly height?: number;
  readonly fps: number;
}

export type CameraConfig = FfmpegCameraConfig | CellCameraConfig;

export const DEFAULT_CAMERA_SIZE = { width: 640, height: 480 } as const;
export const DEFAULT_CAMERA_FPS = 30;
/** The emulated cell renders its cameras at this rate unless the config says otherwise (a renderer, not a USB camera). */
export const DEFAULT_CELL_CAMERA_CONFIG_FPS = 10;
/** Largest frame side we accept: beyond 4K no USB MJPEG camera delivers, and it is usually a typo. */
const MAX_SIDE_PX = 4096;
const MAX_FPS = 240;
const MAX_CELL_FPS = 60;

export class CameraConfigError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'CameraConfigError';
  }
}

const KNOWN_FIELDS = new Set(['name', 'source', 'width', 'height', 'fps', 'format']);

/** A value as a sentence quotes it: its JSON cut to 60 characters; one too deeply nested to print is named, not printed. */
function quoted(v: unknown): string {
  let s: string | undefined;
  try {
    s = JSON.stringify(v);
  } catch {
    return Array.isArray(v) ? 'a list nested too deeply to show' : 'an object nested too deeply to show';
  }
  if (s === undefined) return String(v);
  return s.length > 60 ? `${s.slice(0, 57)}…` : s;
}

/** A field name as a sentence quotes it: cut to 40 characters. */
function named(k: string): string {
  return k.length > 40 ? `${k.slice(0, 37)}…` : k;
}

/** Validates one camera config (parsed JSON); `where` names it in errors (e.g. "cameras[0]"). */
export function parseCameraConfig(json: unknown, where = 'camera config'): CameraConfig {
  if (typeof json !== 'object' || json === null || Array.isArray(json))
    throw new CameraConfigError(
      `The ${where} must be a JSON object like {"name": "cam_high", "source": "v4l2:/dev/video0"}.`,
    );
  const o = json as Record<string, unknown>;
  if (typeof o.name !== 'string' || !/^[A-Za-z0-9_][A-Za-z0-9_.-]{0,63}$/.test(o.name)) {
    throw new CameraConfigError(
      `The ${where} needs a 'name' of letters, digits and _ . - (e.g. "cam_high"), not ${quoted(o.name)}.`,
    );
  }
  const name = o.name;
  const unknown = Object.keys(o).filter((k) => !KNOWN_FIELDS.has(k));
  if (unknown.length > 0)
    throw new CameraConfigError(
      `Camera ${name}: unknown field ${unknown.map((k) => `'${named(k)}'`).join(', ')}; remove it (known: ${[...KNOWN_FIELDS].join(', ')}).`,
    );
  const source = o.source;
  let kind: CameraKind;
  let device: string | undefined;
  if (source === 'testsrc' || source === 'cell') kind = source;
  else if (typeof source === 'string' && source.startsWith('v4l2:')) {
    kind = 'v4l2';
    device = source.slice('v4l2:'.length);
    if (!device.startsWith('/dev/') || device.length <= '/dev/'.length) {
      throw new CameraConfigError(
        `Camera ${name}: a v4l2 'source' names a device under /dev (e.g. "v4l2:/dev/video0" or "v4l2:/dev/v4l/by-id/…"), not ${quoted(source)}.`,
      );
    }
  } else {
    throw new CameraConfigError(
      `Camera ${name}: 'source' must be "v4l2:/dev/videoN", "testsrc" or "cell", not ${quoted(source)}.`,
    );
  }
  if (o.format !== undefined && o.format !== 'mjpeg') {
    throw new CameraConfigError(
      `Camera ${name}: 'format' must be "mjpeg" (the recorder stores the camera's own JPEG frames), not ${quoted(o.format)}; set the camera to MJPEG or leave 'format' out.`,
    );
  }
  const side = (field: 'width' | 'height'): number | undefined => {
    const v = o[field];
    if (v === undefined) return undefined;
    if (typeof v !== 'number' || !Number.isInteger(v) || v < 16 || v > MAX_SIDE_PX || v % 2 !== 0) {
      throw new CameraConfigError(
        `Camera ${name}: '${field}' must be an even whole number of pixels from 16 to ${MAX_SIDE_PX}, not ${quoted(v)}.`,
      );
    }
    return v;
  };
  const width = side('width');
  const height = side('height');
  const maxFps = kind === 'cell' ? MAX_CELL_FPS : MAX_FPS;
  const fps = o.fps === undefined ? (kind === 'cell' ? DEFAULT_CELL_CAMERA_CONFIG_FPS : DEFAULT_CAMERA_FPS) : o.fps;
  if (typeof fps !== 'number' || !Number.isFinite(fps) || fps < 1 || fps > maxFps) {
    throw new CameraConfigError(
      `Camera ${name}: 'fps' must be a number from 1 to ${maxFps} frames per second, not ${quoted(o.fps)}.`,
    );
  }
  if (kind === 'cell') {
    if (o.format !== undefined)
      throw new CameraConfigError(
        `Camera ${name}: a cell camera has no 'format' (the cell's renderer encodes JPEG); remove it.`,
      );
    return { name, kind, ...(width !== undefined ? { width } : {}), ...(height !== undefined ? { height } : {}), fps };
  }
  return {
    name,
    kind,
    ...(device ? { device } : {}),
    width: width ?? DEFAULT_CAMERA_SIZE.width,
    height: height ?? DEFAULT_CAMERA_SIZE.height,
    fps,
  };
}

/** A list of camera configs (a JSON array); names and devices must be unique. */
export function parseCameraConfigs(json: unknown, where = 'cameras'): CameraConfig[] {
  if (!Array.isArray(json))
    throw new CameraConfigError(
      `'${where}' must be a JSON array of cameras, like [{"name": "cam_high", "source": "v4l2:/dev/video0"}].`,
    );
  const out = json.map((c, i) => parseCameraConfig(c, `${where}[${i}]`));
  const seen = new Set<string>();
  for (const c of out) {
    if (seen.has(c.name))
      throw new CameraConfigError(`'${where}' names camera ${c.name} twice; give each camera its own name.`);
    seen.add(c.name);
  }
  const devices = out.flatMap((c) => (c.kind === 'v4l2' && c.device ? [c.device] : []));
  const dup = devices.find((d, i) => devices.indexOf(d) !== i);
  if (dup)
    throw new CameraConfigError(
      `'${where}' gives ${dup} to two cameras; one device can feed only one camera, so give each camera its own device.`,
    );
  return out;
}

/** How a camera config is written back (the `source` form), for messages and docs. */
export function cameraSourceOf(c: CameraConfig): string {
  return c.kind === 'v4l2' ? `v4l2:${c.device}` : c.kind;
}
