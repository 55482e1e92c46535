/**
 * The rollout's CameraSource on a rig: the newest frame of each streaming Camera, decoded to the
 * RgbImage a policy takes. The same for V4L2 cameras, ffmpeg's testsrc and the emulated cell's
 * renderer — the rollout loop never knows which. The cameras run on their own; the loop only
 * looks at what they last delivered, so an observation never waits for a camera's next frame
 * (except for the very first one).
 *
 * A lost camera fails the observation with the camera's own reason: a policy that reads a camera
 * cannot be fed a stale or invented image (the rollout ends as "cameras failed"). Policies that
 * read no camera never touch this.
 */
import sharp from 'sharp';
import type { CameraName, RgbImage } from '../policy/contract.js';
import type { Camera, CameraFrame } from '../rig/camera.js';
import type { CameraSource } from './run-episode.js';

export interface StreamCameraSourceOptions {
  /**
   * Decode straight to this size (letterboxed with black, like the policies' own resize), e.g. a
   * policy's input size. Default: each camera's own size (the policy resizes).
   */
  readonly size?: { readonly width: number; readonly height: number };
  /** How long an observation waits for a camera's first frame. Default 10 s. */
  readonly firstFrameTimeoutS?: number;
}

export function streamCameraSource(cameras: Partial<Record<CameraName, Camera>>, options: StreamCameraSourceOptions = {}): CameraSource {
  const decoded = new Map<CameraName, { seq: number; image: Promise<RgbImage> }>();
  const timeoutMs = (options.firstFrameTimeoutS ?? 10) * 1000;

  async function frameOf(name: CameraName): Promise<CameraFrame> {
    const cam = cameras[name];
    if (!cam) throw new Error(`The policy reads camera ${name}, which this rig does not have (it has ${Object.keys(cameras).join(', ') || 'none'}).`);
    if (cam.status === 'lost') throw new Error(cam.lostReason ?? `camera ${name} is lost`);
    if (cam.status === 'closed') throw new Error(`Camera ${name} (${cam.info.source}) is not open.`);
    const f = cam.latest();
    if (f) return f;
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
      const images = await Promise.all(names.map((n, i) => imageOf(n, frames[i])));
      return Object.fromEntries(names.map((n, i) => [n, images[i]]));
    },
  };
}

/** A frame as an 8-bit RGB image (sharp, off the main thread), resized if a size is asked for. */
async function decode(frame: CameraFrame, size: StreamCameraSourceOptions['size']): Promise<RgbImage> {
  const input = frame.format === 'jpeg' ? sharp(frame.data) : sharp(frame.data, { raw: { width: frame.width, height: frame.height, channels: 3 } });
  let img = input.removeAlpha().toColourspace('srgb');
  if (size && (size.width !== frame.width || size.height !== frame.height)) {
    img = img.resize(size.width, size.height, { fit: 'contain', background: { r: 0, g: 0, b: 0 }, kernel: 'lanczos3' });
  }
  const { data, info } = await img.raw().toBuffer({ resolveWithObject: true });
  if (info.channels !== 3) throw new Error(`Camera ${frame.camera} gave a frame with ${info.channels} channels, not RGB.`);
  return { width: info.width, height: info.height, data: new Uint8Array(data.buffer, data.byteOffset, data.byteLength) };
}
