/** Image preparation shared by the ONNX policy and the openpi client: resize with sharp, reorder to CHW. */
import type { RgbImage } from './contract.js';

type Sharp = typeof import('sharp')['default'];
let codec: Promise<Sharp> | undefined;

/**
 * sharp (libvips), loaded once on first use: it takes ≈ 0.2 s, and most commands touch no image.
 * What reads camera frames during a rollout calls this when it is set up, so no observation waits
 * for the load.
 */
export function imageCodec(): Promise<Sharp> {
  return (codec ??= import('sharp').then((m) => m.default));
}

/**
 * Resizes to width×height keeping the aspect ratio and padding with black, like openpi's
 * `resize_with_pad`, so a model sees the same geometry whichever client fed it.
 * Returns the input unchanged when it already has the size.
 */
export async function resizeWithPad(image: RgbImage, width: number, height: number): Promise<RgbImage> {
  if (image.width === width && image.height === height) return image;
  const sharp = await imageCodec();
  const data = await sharp(image.data, { raw: { width: image.width, height: image.height, channels: 3 } })
    .resize(width, height, { fit: 'contain', background: { r: 0, g: 0, b: 0 }, kernel: 'lanczos3' })
    .raw()
    .toBuffer();
  return { width, height, data: new Uint8Array(data.buffer, data.byteOffset, data.byteLength) };
}

/** HWC RGB bytes → CHW bytes (planar), the layout openpi images travel in. */
export function hwcToChw(image: RgbImage): Uint8Array {
  const n = image.width * image.height;
  const out = new Uint8Array(n * 3);
  const src = image.data;
  for (let i = 0, o = 0; i < n; i++, o += 3) {
    out[i] = src[o];
    out[n + i] = src[o + 1];
    out[2 * n + i] = src[o + 2];
  }
  return out;
}

/** CHW bytes → HWC RGB image. */
export function chwToHwc(chw: Uint8Array, width: number, height: number): RgbImage {
  const n = width * height;
  const data = new Uint8Array(n * 3);
  for (let i = 0, o = 0; i < n; i++, o += 3) {
    data[o] = chw[i];
    data[o + 1] = chw[n + i];
    data[o + 2] = chw[2 * n + i];
  }
  return { width, height, data };
}

export function blackImage(width: number, height: number): RgbImage {
  return { width, height, data: new Uint8Array(width * height * 3) };
}
