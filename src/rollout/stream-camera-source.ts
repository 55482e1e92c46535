/**
 * The rollout's CameraSource on a rig: the newest frame of each streaming Camera, decoded to the
 * RgbImage a policy takes. The same for V4L2 cameras, ffmpeg's testsrc and the emulated cell's
 * renderer — the rollout loop never knows which. The cameras run on their own; the loop only
 * looks at what they last delivered, so an observation never waits for a camera's next frame
 * (except for the very first one).
 *
 * A lost camera fails the observation with the camera's own reason, and so does a newest frame
 * older than the bound (a camera that stalls without being declared lost yet): a policy that reads
 * a camera cannot be fed a stale or invented image (the rollout ends as "cameras failed"). Policies
 * that read no camera never touch this.
 */
import type { CameraName, RgbImage } from '../policy/contract.js';
import { imageCodec } from '../policy/image.js';
import type { Camera, CameraFrame } from '../rig/camera.js';
import type { CameraSource, ObservedFrame } from './run-episode.js';

export interface StreamCameraSourceOptions {
  /**
   * Decode straight to this size (letterboxed with black, like the policies' own resize), e.g. a
   * policy's input size. Default: each camera's own size (the policy resizes).
   */
  readonly size?: { readonly width: number; readonly height: number };
  /** How long an observation waits for a camera's first frame. Default 10 s. */
  readonly firstFrameTimeoutS?: number;
  /**
   * The oldest a camera's newest frame may be when an observation takes it. Default: 4 periods of
   * the camera's rate, at least 0.25 s — a frame that old shows a world the arms have left.
   */
  readonly maxFrameAgeS?: number | ((camera: CameraName) => number | undefined);
  /** The clock frames are stamped on (the rig's); needed for the age bound. Default: no age bound. */
  readonly nowS?: () => number;
}

/** The default age bound for a camera streaming at `fps`. */
export function defaultMaxFrameAgeS(fps: number): number {
  return Math.max(0.25, 4 / fps);
}

export function streamCameraSource(
  cameras: Partial<Record<CameraName, Camera>>,
  options: StreamCameraSourceOptions = {},
): CameraSource {
  void imageCodec(); // loading now, while the cameras start, not at the first observation
  const decoded = new Map<CameraName, { seq: number; image: Promise<RgbImage> }>();
  const timeoutMs = (options.firstFrameTimeoutS ?? 10) * 1000;
  let last: ObservedFrame[] = [];

  async function frameOf(name: CameraName): Promise<CameraFrame> {
    const cam = cameras[name];
    if (!cam)
      throw new Error(
        `The policy reads camera ${name}, which this rig does not have (it has ${Object.keys(cameras).join(', ') || 'none'}).`,
      );
    if (cam.status === 'lost') throw new Error(cam.lostReason ?? `camera ${name} is lost`);
    if (cam.status === 'closed') throw new Error(`Camera ${name} (${cam.info.source}) is not open.`);
    const f = cam.latest();
    if (f) {
      const nowS = options.nowS;
      if (nowS) {
        const ageS = nowS() - f.arrivalS;
        const asked = typeof options.maxFrameAgeS === 'function' ? options.maxFrameAgeS(name) : options.maxFrameAgeS;
        const boundS = asked ?? defaultMaxFrameAgeS(cam.info.fps);
        if (ageS > boundS)
          throw new Error(
            `camera ${name} (${cam.info.source}) sent no frame for ${(ageS * 1000).toFixed(0)} ms, longer than the ${(boundS * 1000).toFixed(0)} ms an observation may wait; check its cable and that nothing else loads it`,
          );
      }
      return f;
    }
    return new Promise<CameraFrame>((resolve, reject) => {
      const t = setTimeout(() => {
        stop();
        reject(new Error(`Camera ${name} (${cam.info.source}) sent no frame within ${timeoutMs / 1000} s.`));
      }, timeoutMs);
      const offFrame = cam.onFrame((frame) => {
        stop();
        resolve(frame);
      });
      const offLost = cam.onLost((reason) => {
        stop();
        reject(new Error(reason));
      });
      function stop(): void {
        clearTimeout(t);
        offFrame();
        offLost();
      }
    });
  }

  function imageOf(name: CameraName, frame: CameraFrame): Promise<RgbImage> {
    const hit = decoded.get(name);
    if (hit && hit.seq === frame.seq) return hit.image; // observed faster than the camera's rate
    const image = decode(frame, options.size);
    decoded.set(name, { seq: frame.seq, image });
    image.catch(() => decoded.delete(name));
    return image;
  }

  return {
    async capture(names: readonly CameraName[]): Promise<Partial<Record<CameraName, RgbImage>>> {
      const frames = await Promise.all(names.map(frameOf));
      const takenS = options.nowS?.();
      last = frames.map((f, i) => ({
        camera: names[i],
        ageS: takenS === undefined ? 0 : takenS - f.arrivalS,
        dropped: cameras[names[i]]!.counters().dropped,
      }));
      const images = await Promise.all(names.map((n, i) => imageOf(n, frames[i])));
      return Object.fromEntries(names.map((n, i) => [n, images[i]]));
    },
    lastCapture: () => last,
  };
}

/** A frame as an 8-bit RGB image (sharp, off the main thread), resized if a size is asked for. */
async function decode(frame: CameraFrame, size: StreamCameraSourceOptions['size']): Promise<RgbImage> {
  const sharp = await imageCodec();
  const input =
    frame.format === 'jpeg'
      ? sharp(frame.data)
      : sharp(frame.data, { raw: { width: frame.width, height: frame.height, channels: 3 } });
  let img = input.removeAlpha().toColourspace('srgb');
  if (size && (size.width !== frame.width || size.height !== frame.height)) {
    img = img.resize(size.width, size.height, { fit: 'contain', background: { r: 0, g: 0, b: 0 }, kernel: 'lanczos3' });
  }
  const { data, info } = await img.raw().toBuffer({ resolveWithObject: true });
  if (info.channels !== 3)
    throw new Error(`Camera ${frame.camera} gave a frame with ${info.channels} channels, not RGB.`);
  return {
    width: info.width,
    height: info.height,
    data: new Uint8Array(data.buffer, data.byteOffset, data.byteLength),
  };
}
