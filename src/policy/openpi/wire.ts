/**
 * The openpi ALOHA-style messages: observation request, action response, metadata.
 *   request  {"state": f4[14], "images": {"cam_high": u1[3,H,W], ...}, "prompt": str}
 *   response {"actions": f4[H,14], "policy_timing": {"infer_ms"}, "server_timing": {"infer_ms", "prev_total_ms"?}}
 */
import { STATE_DIM } from '../../rig/contract.js';
import { CAMERA_NAMES, type ActionChunk, type CameraName, type Observation, type RgbImage } from '../contract.js';
import { blackImage, chwToHwc, hwcToChw, resizeWithPad } from '../image.js';
import { InvalidObservationError, isCameraName, validateObservation } from '../observation.js';
import {
  NdArray,
  NpGeneric,
  WireFormatError,
  describeWireValue,
  packOpenpi,
  unpackOpenpi,
  type WireValue,
} from './msgpack-numpy.js';

/** Images resized (with padding) to this size before sending, as openpi's clients do. */
export const OPENPI_IMAGE_SIZE = 224;

/**
 * Default largest image side `tandem policy serve` takes. openpi clients send 224; tandem's client
 * with imageSize null sends native frames (640×480 and 960×720 cameras fit). Raise it with
 * --max-image-side for larger native frames.
 */
export const DEFAULT_MAX_IMAGE_SIDE = 1024;

/** Most the server reads per request: three float32 CHW images at the largest side, plus 1 MiB for state and prompt. */
export function maxRequestBytes(maxImageSide: number): number {
  return CAMERA_NAMES.length * 3 * maxImageSide * maxImageSide * 4 + 2 ** 20;
}

/** Longest action chunk the client reads: openpi chunks are 10–100 steps; beyond this is a broken server. */
export const MAX_ACTION_HORIZON = 1000;
/** Widest action rows: openpi pads actions to 32 dimensions (pi0) and drops all but the first 14 for ALOHA. */
export const MAX_ACTION_COLUMNS = 64;
/** Most the client reads per answer: the largest float64 chunk, plus 1 MiB for timings and extra outputs. */
export const MAX_RESPONSE_BYTES = MAX_ACTION_HORIZON * MAX_ACTION_COLUMNS * 8 + 2 ** 20;
/** The metadata message: a handful of names and a reset pose. */
export const MAX_METADATA_BYTES = 2 ** 20;

/** The observation as openpi values; images resized and reordered to CHW. */
export async function observationToWire(
  obs: Observation,
  imageSize: number | undefined = OPENPI_IMAGE_SIZE,
): Promise<Record<string, WireValue>> {
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
  if (
    v === null ||
    v === undefined ||
    typeof v !== 'object' ||
    Array.isArray(v) ||
    v instanceof Uint8Array ||
    v instanceof NdArray ||
    v instanceof NpGeneric
  ) {
    throw new WireFormatError(`${what} is not a map`);
  }
  return v as Record<string, WireValue>;
}

function imageFromWire(field: string, v: WireValue, maxSide: number): RgbImage {
  if (!(v instanceof NdArray)) throw new InvalidObservationError(field, 'must be an array (numpy __ndarray__ map).');
  if (v.shape.length !== 3 || v.shape[0] !== 3) {
    throw new InvalidObservationError(
      field,
      `has shape [${v.shape.join(', ')}]; images travel as CHW [3, height, width].`,
    );
  }
  const [, height, width] = v.shape;
  // Checked on the header, before any pixel is converted or a black wrist image of this size is made.
  if (height < 1 || width < 1 || height > maxSide || width > maxSide) {
    throw new InvalidObservationError(
      field,
      `is ${height}×${width} pixels (height × width); this server takes sides from 1 to ${maxSide} (--max-image-side).`,
    );
  }
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
export interface DecodeObservationOptions {
  /** Largest image height or width accepted. Default DEFAULT_MAX_IMAGE_SIDE. */
  readonly maxImageSide?: number;
}

const REQUEST_KEYS = ['state', 'images', 'prompt'];

export function decodeObservation(bytes: Uint8Array, opts: DecodeObservationOptions = {}): Observation {
  const maxSide = opts.maxImageSide ?? DEFAULT_MAX_IMAGE_SIDE;
  const msg = asRecord(unpackOpenpi(bytes, { maxBytes: maxRequestBytes(maxSide) }), 'the observation');
  for (const k of Object.keys(msg)) {
    if (!REQUEST_KEYS.includes(k))
      throw new InvalidObservationError(k, `is not part of an openpi ALOHA observation (${REQUEST_KEYS.join(', ')}).`);
  }
  const stateV = msg.state;
  if (!(stateV instanceof NdArray))
    throw new InvalidObservationError('state', 'must be an array (numpy __ndarray__ map).');
  if (stateV.size !== STATE_DIM)
    throw new InvalidObservationError('state', `has ${stateV.size} entries; it needs ${STATE_DIM}.`);
  const imagesV = asRecord(msg.images ?? {}, 'images');
  const images: Partial<Record<CameraName, RgbImage>> = {};
  for (const [name, v] of Object.entries(imagesV)) {
    if (!isCameraName(name))
      throw new InvalidObservationError(
        `images.${name}`,
        `is not a known camera; cameras are ${CAMERA_NAMES.join(', ')}.`,
      );
    images[name] = imageFromWire(`images.${name}`, v, maxSide);
  }
  const high = images.cam_high;
  if (high === undefined)
    throw new InvalidObservationError('images.cam_high', 'is missing; openpi policies need the top camera.');
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
  if (
    rec === null ||
    rec === undefined ||
    typeof rec !== 'object' ||
    Array.isArray(rec) ||
    rec instanceof Uint8Array ||
    rec instanceof NdArray
  )
    return undefined;
  const v = (rec as Record<string, WireValue>)[key];
  if (typeof v === 'number') return v;
  if (v instanceof NpGeneric && typeof v.value === 'number') return v.value;
  return undefined;
}

/** A response as the client reads it: actions [H, ≥14] (extra columns dropped, as openpi's ALOHA outputs do). */
export function decodeResult(bytes: Uint8Array): DecodedResult {
  // Other top-level keys are read (bounded, prototype-free) and ignored: openpi servers may add outputs.
  const msg = asRecord(unpackOpenpi(bytes, { maxBytes: MAX_RESPONSE_BYTES }), 'the response');
  const a = msg.actions;
  if (!(a instanceof NdArray))
    throw new WireFormatError(
      `the response has no "actions" array${a === undefined ? '' : ` (it holds ${describeWireValue(a)})`}`,
    );
  if (a.shape.length !== 2 || a.shape[0] < 1 || a.shape[1] < STATE_DIM) {
    throw new WireFormatError(`"actions" has shape [${a.shape.join(', ')}]; expected [H, ${STATE_DIM}]`);
  }
  if (a.shape[0] > MAX_ACTION_HORIZON)
    throw new WireFormatError(
      `"actions" has ${a.shape[0]} rows; at most ${MAX_ACTION_HORIZON} (the action horizon) are read`,
    );
  if (a.shape[1] > MAX_ACTION_COLUMNS)
    throw new WireFormatError(`"actions" has ${a.shape[1]} columns; at most ${MAX_ACTION_COLUMNS} are read`);
  if (!['<f4', '<f8'].includes(a.dtype))
    throw new WireFormatError(`"actions" has dtype ${a.dtype}; expected float32 or float64`);
  const [horizon, cols] = a.shape;
  const all = a.toFloat32();
  let actions = all;
  if (cols !== STATE_DIM) {
    actions = new Float32Array(horizon * STATE_DIM);
    for (let r = 0; r < horizon; r++) actions.set(all.subarray(r * cols, r * cols + STATE_DIM), r * STATE_DIM);
  }
  return {
    chunk: { horizon, actions },
    policyInferMs: numberAt(msg.policy_timing, 'infer_ms'),
    serverInferMs: numberAt(msg.server_timing, 'infer_ms'),
  };
}
