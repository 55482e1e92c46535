/**
 * The openpi ALOHA-style messages: observation request, action response, metadata.
 *   request  {"state": f4[14], "images": {"cam_high": u1[3,H,W], ...}, "prompt": str}
 *   response {"actions": f4[H,14], "policy_timing": {"infer_ms"}, "server_timing": {"infer_ms", "prev_total_ms"?}}
 */
import { STATE_DIM } from '../../rig/contract.js';
import { CAMERA_NAMES, type ActionChunk, type CameraName, type Observation, type RgbImage } from '../contract.js';
import { blackImage, chwToHwc, hwcToChw, resizeWithPad } from '../image.js';
import { InvalidObservationError, isCameraName, validateObservation } from '../observation.js';
import { NdArray, WireFormatError, packOpenpi, unpackOpenpi, type WireValue } from './msgpack-numpy.js';

/** Images resized (with padding) to this size before sending, as openpi's clients do. */
export const OPENPI_IMAGE_SIZE = 224;

/** The observation as openpi values; images resized and reordered to CHW. */
export async function observationToWire(obs: Observation, imageSize: number | undefined = OPENPI_IMAGE_SIZE): Promise<Record<string, WireValue>> {
  const images: Record<string, WireValue> = {};
  for (const name of CAMERA_NAMES) {
    const img = obs.images[name];
    if (img === undefined) continue;
    const sized = imageSize === undefined ? img : await resizeWithPad(img, imageSize, imageSize);
    images[name] = NdArray.uint8(hwcToChw(sized), [3, sized.height, sized.width]);
  }
  const state = new Float32Array(obs.state); // a copy: the wire owns whole, aligned bytes
  return { state: NdArray.float32(state, [STATE_DIM]), images, prompt: obs.prompt };
}

export async function encodeObservation(obs: Observation, imageSize?: number): Promise<Uint8Array> {
  return packOpenpi(await observationToWire(obs, imageSize));
}

function asRecord(v: WireValue | undefined, what: string): Record<string, WireValue> {
  if (v === null || v === undefined || typeof v !== 'object' || Array.isArray(v) || v instanceof Uint8Array || v instanceof NdArray) {
    throw new WireFormatError(`${what} is not a map`);
  }
  return v as Record<string, WireValue>;
}

function imageFromWire(field: string, v: WireValue): RgbImage {
  if (!(v instanceof NdArray)) throw new InvalidObservationError(field, 'must be an array (numpy __ndarray__ map).');
  if (v.shape.length !== 3 || v.shape[0] !== 3) {
    throw new InvalidObservationError(field, `has shape [${v.shape.join(', ')}]; images travel as CHW [3, height, width].`);
  }
  const [, height, width] = v.shape;
  let chw: Uint8Array;
  if (v.dtype === '|u1') chw = v.data;
  else if (v.dtype === '<f4' || v.dtype === '<f8') {
    // openpi accepts float images in [0, 1] and converts them to uint8 the same way.
    chw = Uint8Array.from(v.toFloat32(), (x) => Math.round(Math.min(1, Math.max(0, x)) * 255));
  } else throw new InvalidObservationError(field, `has dtype ${v.dtype}; images are uint8 (or float in [0, 1]).`);
  return chwToHwc(chw, width, height);
}

/**
 * A request as a tandem server reads it. Follows openpi's ALOHA inputs: cam_high is required,
 * missing wrist cameras become black images, unknown camera names are an error.
 */
export function decodeObservation(bytes: Uint8Array): Observation {
  const msg = asRecord(unpackOpenpi(bytes), 'the observation');
  const stateV = msg.state;
  if (!(stateV instanceof NdArray)) throw new InvalidObservationError('state', 'must be an array (numpy __ndarray__ map).');
  if (stateV.size !== STATE_DIM) throw new InvalidObservationError('state', `has ${stateV.size} entries; it needs ${STATE_DIM}.`);
  const imagesV = asRecord(msg.images ?? {}, 'images');
  const images: Partial<Record<CameraName, RgbImage>> = {};
  for (const [name, v] of Object.entries(imagesV)) {
    if (!isCameraName(name)) throw new InvalidObservationError(`images.${name}`, `is not a known camera; cameras are ${CAMERA_NAMES.join(', ')}.`);
    images[name] = imageFromWire(`images.${name}`, v);
  }
  const high = images.cam_high;
  if (high === undefined) throw new InvalidObservationError('images.cam_high', 'is missing; openpi policies need the top camera.');
  for (const name of CAMERA_NAMES) images[name] ??= blackImage(high.width, high.height);
  const prompt = msg.prompt === undefined || msg.prompt === null ? '' : msg.prompt;
  if (typeof prompt !== 'string') throw new InvalidObservationError('prompt', 'must be text.');
  const obs: Observation = { timeS: 0, state: stateV.toFloat32(), images, prompt };
  validateObservation(obs);
  return obs;
}

export interface ResultTiming {
  /** The policy's own time (openpi `policy_timing.infer_ms`). */
  readonly policyInferMs: number;
  /** Server time around the policy (openpi `server_timing.infer_ms`). */
  readonly serverInferMs: number;
  /** The server's previous request, receive to send (openpi `server_timing.prev_total_ms`). */
  readonly prevTotalMs?: number;
}

export function encodeResult(chunk: ActionChunk, timing: ResultTiming): Uint8Array {
  const serverTiming: Record<string, WireValue> = { infer_ms: timing.serverInferMs };
  if (timing.prevTotalMs !== undefined) serverTiming.prev_total_ms = timing.prevTotalMs;
  return packOpenpi({
    actions: NdArray.float32(chunk.actions, [chunk.horizon, STATE_DIM]),
    policy_timing: { infer_ms: timing.policyInferMs },
    server_timing: serverTiming,
  });
}

export interface DecodedResult {
  readonly chunk: ActionChunk;
  readonly policyInferMs?: number;
  readonly serverInferMs?: number;
}

function numberAt(rec: WireValue | undefined, key: string): number | undefined {
  if (rec === null || rec === undefined || typeof rec !== 'object' || Array.isArray(rec) || rec instanceof Uint8Array || rec instanceof NdArray) return undefined;
  const v = (rec as Record<string, WireValue>)[key];
  if (typeof v === 'number') return v;
  if (v !== null && typeof v === 'object' && 'value' in v && typeof v.value === 'number') return v.value; // NpGeneric
  return undefined;
}

/** A response as the client reads it: actions [H, ≥14] (extra columns dropped, as openpi's ALOHA outputs do). */
export function decodeResult(bytes: Uint8Array): DecodedResult {
  const msg = asRecord(unpackOpenpi(bytes), 'the response');
  const a = msg.actions;
  if (!(a instanceof NdArray)) throw new WireFormatError('the response has no "actions" array');
  if (a.shape.length !== 2 || a.shape[0] < 1 || a.shape[1] < STATE_DIM) {
    throw new WireFormatError(`"actions" has shape [${a.shape.join(', ')}]; expected [H, ${STATE_DIM}]`);
  }
  if (!['<f4', '<f8'].includes(a.dtype)) throw new WireFormatError(`"actions" has dtype ${a.dtype}; expected float32 or float64`);
  const [horizon, cols] = a.shape;
  const all = a.toFloat32();
  let actions = all;
  if (cols !== STATE_DIM) {
    actions = new Float32Array(horizon * STATE_DIM);
    for (let r = 0; r < horizon; r++) actions.set(all.subarray(r * cols, r * cols + STATE_DIM), r * STATE_DIM);
  }
  return { chunk: { horizon, actions }, policyInferMs: numberAt(msg.policy_timing, 'infer_ms'), serverInferMs: numberAt(msg.server_timing, 'infer_ms') };
}
