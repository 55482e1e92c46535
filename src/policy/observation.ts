/**
 * Observation checks at the policy boundary: every policy (local, remote, served) runs these
 * before touching the data, so a wrong shape is one sentence naming the field, not a tensor
 * error from deep inside onnxruntime or a traceback from a remote server.
 */
import { STATE_DIM } from '../rig/contract.js';
import { CAMERA_NAMES, type CameraName, type Observation, type RgbImage } from './contract.js';

/** An observation a policy cannot take; `field` names the part that is wrong (e.g. `images.cam_high`). */
export class InvalidObservationError extends Error {
  constructor(
    readonly field: string,
    message: string,
  ) {
    super(`Observation field '${field}' ${message}`);
    this.name = 'InvalidObservationError';
  }
}

export function isCameraName(name: string): name is CameraName {
  return (CAMERA_NAMES as readonly string[]).includes(name);
}

/** Largest image side we accept; far beyond any policy camera, small enough to refuse a corrupt header. */
const MAX_IMAGE_SIDE = 8192;

export function validateImage(field: string, image: RgbImage): void {
  if (image === null || typeof image !== 'object') throw new InvalidObservationError(field, 'is not an image.');
  const { width, height, data } = image;
  if (
    !Number.isInteger(width) ||
    !Number.isInteger(height) ||
    width < 1 ||
    height < 1 ||
    width > MAX_IMAGE_SIDE ||
    height > MAX_IMAGE_SIDE
  ) {
    throw new InvalidObservationError(
      field,
      `has size ${String(width)}×${String(height)}; width and height must be whole numbers from 1 to ${MAX_IMAGE_SIDE}.`,
    );
  }
  if (!(data instanceof Uint8Array))
    throw new InvalidObservationError(field, 'must hold its pixels as 8-bit RGB bytes (Uint8Array).');
  if (data.length !== width * height * 3) {
    throw new InvalidObservationError(
      field,
      `holds ${data.length} bytes but a ${width}×${height} RGB image needs ${width * height * 3}.`,
    );
  }
}

/**
 * Checks state (14 finite numbers), camera names and image shapes, and that the cameras in
 * `required` are present. Throws InvalidObservationError naming the first wrong field.
 */
export function validateObservation(obs: Observation, required: readonly CameraName[] = []): void {
  if (obs === null || typeof obs !== 'object') throw new InvalidObservationError('(observation)', 'is not an object.');
  if (!Number.isFinite(obs.timeS))
    throw new InvalidObservationError('timeS', `must be a finite number of seconds, not ${String(obs.timeS)}.`);
  const state = obs.state as unknown;
  if (!(state instanceof Float32Array))
    throw new InvalidObservationError('state', `must be a Float32Array of ${STATE_DIM} numbers.`);
  if (state.length !== STATE_DIM) {
    throw new InvalidObservationError(
      'state',
      `has ${state.length} entries; it needs ${STATE_DIM} (left 6 joints, left gripper, right 6 joints, right gripper).`,
    );
  }
  for (let i = 0; i < STATE_DIM; i++) {
    if (!Number.isFinite(state[i]))
      throw new InvalidObservationError(
        `state[${i}]`,
        `is ${String(state[i])}; every state entry must be a finite number.`,
      );
  }
  if (typeof obs.prompt !== 'string') throw new InvalidObservationError('prompt', 'must be text.');
  if (obs.images === null || typeof obs.images !== 'object')
    throw new InvalidObservationError('images', 'must map camera names to images.');
  for (const [name, image] of Object.entries(obs.images)) {
    if (!isCameraName(name)) {
      throw new InvalidObservationError(
        `images.${name}`,
        `is not a known camera; cameras are ${CAMERA_NAMES.join(', ')}.`,
      );
    }
    if (image !== undefined) validateImage(`images.${name}`, image);
  }
  for (const name of required) {
    if (obs.images[name] === undefined)
      throw new InvalidObservationError(`images.${name}`, 'is missing; this policy needs that camera.');
  }
}

/** A deterministic observation for probes and benchmarks: three cameras of smooth gradients, a seeded state. */
export function syntheticObservation(opts: { size?: number; seed?: number; prompt?: string } = {}): Observation {
  const size = opts.size ?? 224;
  let s = (opts.seed ?? 1) >>> 0;
  // A tiny LCG: this is a probe pattern, not statistics, so no need for the layout RNG.
  const next = (): number => {
    s = (Math.imul(s, 1664525) + 1013904223) >>> 0;
    return s / 2 ** 32;
  };
  const state = new Float32Array(STATE_DIM);
  for (let i = 0; i < STATE_DIM; i++) state[i] = i % 7 === 6 ? next() : (next() - 0.5) * 0.5;
  const images: Partial<Record<CameraName, RgbImage>> = {};
  CAMERA_NAMES.forEach((name, c) => {
    const data = new Uint8Array(size * size * 3);
    const phase = Math.floor(next() * 256);
    for (let y = 0; y < size; y++) {
      for (let x = 0; x < size; x++) {
        const o = (y * size + x) * 3;
        data[o] = (x * 255) / size + phase;
        data[o + 1] = (y * 255) / size + c * 40;
        data[o + 2] = ((x + y) * 127) / size;
      }
    }
    images[name] = { width: size, height: size, data };
  });
  return { timeS: 0, state, images, prompt: opts.prompt ?? 'put the bottles in the bin' };
}
