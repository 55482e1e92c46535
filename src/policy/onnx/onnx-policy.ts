/**
 * A local ONNX policy on onnxruntime-node (CPU). Input names and shapes are read from the
 * model and matched to the observation:
 *   state                  float32 [14] | [1, 14] | [batch, 14]
 *   cam_high, cam_left_wrist, cam_right_wrist
 *                          [1, 3, H, W] (CHW) or [1, H, W, 3] (HWC), with or without the batch
 *                          dim; uint8 gets raw 0..255, float32 gets 0..1. Images are resized
 *                          (aspect kept, black padding) to H×W with sharp.
 * Names may carry an `observation.`, `observation.images.` or `images.` prefix (LeRobot style).
 * The output named `actions` (or the only output) is [1, H, 14], [H, 14] or [1, H·14].
 */
import { createHash } from 'node:crypto';
import { readFile } from 'node:fs/promises';
import { basename } from 'node:path';
import * as ort from 'onnxruntime-node';
import { STATE_DIM } from '../../rig/contract.js';
import {
  CAMERA_NAMES,
  type ActionChunk,
  type CameraName,
  type EpisodeContext,
  type Observation,
  type Policy,
  type PolicyInfo,
} from '../contract.js';
import { PolicyLoadError } from '../errors.js';
import { resizeWithPad } from '../image.js';
import { isCameraName, validateObservation } from '../observation.js';

interface StateInput {
  readonly kind: 'state';
  readonly name: string;
  readonly dims: readonly number[];
}
interface ImageInput {
  readonly kind: 'image';
  readonly name: string;
  readonly camera: CameraName;
  readonly layout: 'chw' | 'hwc';
  readonly batched: boolean;
  /** Undefined when the model leaves the size symbolic: the camera's own size is used. */
  readonly width?: number;
  readonly height?: number;
  readonly dtype: 'uint8' | 'float32';
}
type ModelInput = StateInput | ImageInput;

const PREFIXES = ['observation.images.', 'observation/images/', 'observation.', 'observation/', 'images.', 'images/'];
function bareName(name: string): string {
  for (const p of PREFIXES) if (name.startsWith(p)) return name.slice(p.length);
  return name;
}

type Dim = number | string;
const fixed = (d: Dim | undefined): number | undefined => (typeof d === 'number' && d > 0 ? d : undefined);
const shapeText = (shape: readonly Dim[]): string => `[${shape.join(', ')}]`;

function planInput(file: string, meta: ort.InferenceSession.ValueMetadata): ModelInput {
  const where = `Model ${file} input '${meta.name}'`;
  if (!meta.isTensor)
    throw new PolicyLoadError(`${where} is not a tensor; tandem feeds only tensors (state and camera images).`);
  const shape = meta.shape as readonly Dim[];
  const bare = bareName(meta.name);
  if (bare === 'state') {
    if (meta.type !== 'float32')
      throw new PolicyLoadError(`${where} has type ${meta.type}; the state input must be float32.`);
    const last = shape[shape.length - 1];
    const leading = shape.slice(0, -1);
    if (
      shape.length < 1 ||
      shape.length > 2 ||
      last !== STATE_DIM ||
      leading.some((d) => typeof d === 'number' && d !== 1)
    ) {
      throw new PolicyLoadError(
        `${where} has shape ${shapeText(shape)}; the state input must be [${STATE_DIM}] or [1, ${STATE_DIM}].`,
      );
    }
    return { kind: 'state', name: meta.name, dims: shape.length === 2 ? [1, STATE_DIM] : [STATE_DIM] };
  }
  if (isCameraName(bare)) {
    if (meta.type !== 'uint8' && meta.type !== 'float32')
      throw new PolicyLoadError(`${where} has type ${meta.type}; camera inputs must be uint8 or float32.`);
    const batched = shape.length === 4;
    if (shape.length !== 3 && !batched)
      throw new PolicyLoadError(
        `${where} has shape ${shapeText(shape)}; a camera input must be [1, 3, H, W] or [1, H, W, 3].`,
      );
    if (batched && typeof shape[0] === 'number' && shape[0] !== 1)
      throw new PolicyLoadError(`${where} has batch size ${shape[0]}; tandem feeds one observation at a time.`);
    const s = batched ? shape.slice(1) : shape;
    const layout = s[0] === 3 ? 'chw' : s[2] === 3 ? 'hwc' : undefined;
    if (layout === undefined)
      throw new PolicyLoadError(
        `${where} has shape ${shapeText(shape)}; neither its first nor its last image dimension is 3 colour channels.`,
      );
    const [h, w] = layout === 'chw' ? [s[1], s[2]] : [s[0], s[1]];
    return {
      kind: 'image',
      name: meta.name,
      camera: bare,
      layout,
      batched,
      height: fixed(h),
      width: fixed(w),
      dtype: meta.type,
    };
  }
  throw new PolicyLoadError(
    `Model ${file} has input '${meta.name}', which tandem cannot feed; inputs must be named state, ${CAMERA_NAMES.join(', ')} (optionally prefixed 'observation.' or 'images.').`,
  );
}

/** Horizon from an output shape, or undefined when it is symbolic (known after the first run). */
function planOutput(file: string, meta: ort.InferenceSession.ValueMetadata): number | undefined {
  const where = `Model ${file} output '${meta.name}'`;
  if (!meta.isTensor || (meta.type !== 'float32' && meta.type !== 'float64'))
    throw new PolicyLoadError(`${where} must be a float tensor of actions.`);
  const shape = meta.shape as readonly Dim[];
  const last = shape[shape.length - 1];
  if (shape.length === 2 && shape[0] === 1 && typeof last === 'number') {
    if (last % STATE_DIM !== 0)
      throw new PolicyLoadError(
        `${where} has shape ${shapeText(shape)}; actions must be [1, H, ${STATE_DIM}] or [H, ${STATE_DIM}].`,
      );
    return last / STATE_DIM;
  }
  if (
    (shape.length !== 2 && shape.length !== 3) ||
    (typeof last === 'number' && last !== STATE_DIM) ||
    (shape.length === 3 && typeof shape[0] === 'number' && shape[0] !== 1)
  ) {
    throw new PolicyLoadError(
      `${where} has shape ${shapeText(shape)}; actions must be [1, H, ${STATE_DIM}] or [H, ${STATE_DIM}].`,
    );
  }
  return fixed(shape[shape.length - 2]);
}

export class OnnxPolicy implements Policy {
  private horizon: number;

  private constructor(
    private readonly session: ort.InferenceSession,
    private readonly file: string,
    private readonly sha256: string,
    private readonly inputs: readonly ModelInput[],
    private readonly outputName: string,
    horizon: number | undefined,
  ) {
    this.horizon = horizon ?? 0;
  }

  /** Loads and checks the model; throws PolicyLoadError with one sentence on anything tandem cannot run. */
  static async load(
    path: string,
    opts: {
      threads?: number /** Default true; false opens it without folding constants (checking an untrusted model). */;
      optimize?: boolean;
    } = {},
  ): Promise<OnnxPolicy> {
    const file = basename(path);
    let bytes: Buffer;
    try {
      bytes = await readFile(path);
    } catch (e) {
      const code = (e as NodeJS.ErrnoException).code;
      throw new PolicyLoadError(
        code === 'ENOENT'
          ? `No model file at ${path}.`
          : `Cannot read the model file ${path} (${code ?? (e as Error).message}).`,
      );
    }
    const sha256 = createHash('sha256').update(bytes).digest('hex');
    let session: ort.InferenceSession;
    try {
      session = await ort.InferenceSession.create(bytes, {
        graphOptimizationLevel: opts.optimize === false ? 'disabled' : 'all',
        // One thread by default: small policies gain little from parallel kernels, and a thread
        // pool competing with the control loop for cores cost 10+ ms per round trip when served
        // on a busy 2-core machine (bench/policy.bench.ts). Large models: raise `threads`.
        intraOpNumThreads: opts.threads ?? 1,
        // onnxruntime's worker threads spin-wait after each run by default; on a station PC that
        // also runs the control loop, cameras and a policy server, spinning steals the cores
        // they need (measured: +20 ms per round trip on a loaded 2-core machine).
        extra: { session: { intra_op: { allow_spinning: '0' }, inter_op: { allow_spinning: '0' } } },
      });
    } catch (e) {
      const detail = (e as Error).message.replace(/\s+/g, ' ').trim();
      throw new PolicyLoadError(
        /protobuf|parse|ModelProto|Load model/i.test(detail)
          ? `${path} is not an ONNX model onnxruntime can load (${detail}).`
          : `onnxruntime could not open the model ${path}: ${detail}`,
      );
    }
    try {
      const inputs = session.inputMetadata.map((m) => planInput(file, m));
      if (!inputs.some((i) => i.kind === 'state'))
        throw new PolicyLoadError(`Model ${file} has no 'state' input; tandem policies take the 14-entry joint state.`);
      const outMeta =
        session.outputMetadata.find((m) => m.name === 'actions') ??
        (session.outputMetadata.length === 1 ? session.outputMetadata[0] : undefined);
      if (!outMeta) {
        throw new PolicyLoadError(
          `Model ${file} has outputs ${session.outputNames.join(', ')}; name the action output 'actions' so tandem knows which to use.`,
        );
      }
      return new OnnxPolicy(session, file, sha256, inputs, outMeta.name, planOutput(file, outMeta));
    } catch (e) {
      await session.release();
      throw e;
    }
  }

  get info(): PolicyInfo {
    return {
      name: `onnx:${this.file}`,
      checkpointSha256: this.sha256,
      actionHorizon: this.horizon,
      cameras: this.inputs.flatMap((i) => (i.kind === 'image' ? [i.camera] : [])),
      needsPrivilegedState: false,
    };
  }

  async reset(_ctx: EpisodeContext): Promise<void> {
    // Stateless model: nothing to clear between episodes.
  }

  async infer(obs: Observation): Promise<ActionChunk> {
    const t0 = performance.now();
    validateObservation(obs, this.info.cameras);
    const feeds: Record<string, ort.Tensor> = {};
    for (const input of this.inputs) {
      if (input.kind === 'state')
        feeds[input.name] = new ort.Tensor('float32', new Float32Array(obs.state), input.dims);
      else feeds[input.name] = await imageTensor(input, obs);
    }
    const t1 = performance.now();
    let out: ort.InferenceSession.OnnxValueMapType;
    try {
      out = await this.session.run(feeds, [this.outputName]);
    } catch (e) {
      throw new Error(`ONNX model ${this.file} failed to run: ${(e as Error).message.replace(/\s+/g, ' ').trim()}`);
    }
    const t2 = performance.now();
    const tensor = out[this.outputName] as ort.Tensor;
    const values = tensor.data as Float32Array | Float64Array;
    if (values.length % STATE_DIM !== 0 || values.length === 0) {
      throw new Error(
        `ONNX model ${this.file} answered ${values.length} action values with shape [${tensor.dims.join(', ')}]; expected H×${STATE_DIM}.`,
      );
    }
    const actions = Float32Array.from(values);
    this.horizon = actions.length / STATE_DIM;
    const t3 = performance.now();
    return {
      horizon: this.horizon,
      actions,
      timing: { totalMs: t3 - t0, encodeMs: t1 - t0, modelMs: t2 - t1, decodeMs: t3 - t2 },
    };
  }

  async close(): Promise<void> {
    await this.session.release();
  }
}

async function imageTensor(input: ImageInput, obs: Observation): Promise<ort.Tensor> {
  const src = obs.images[input.camera];
  if (src === undefined) throw new Error(`camera ${input.camera} missing after validation`); // validateObservation guarantees it
  const img = await resizeWithPad(src, input.width ?? src.width, input.height ?? src.height);
  const { width: w, height: h, data } = img;
  const n = w * h;
  const dims = input.layout === 'chw' ? [3, h, w] : [h, w, 3];
  if (input.batched) dims.unshift(1);
  if (input.dtype === 'uint8' && input.layout === 'hwc') return new ort.Tensor('uint8', data, dims);
  const out = input.dtype === 'uint8' ? new Uint8Array(n * 3) : new Float32Array(n * 3);
  const scale = input.dtype === 'uint8' ? 1 : 1 / 255;
  // One tight loop per layout: this runs on every inference, for every camera.
  if (input.layout === 'chw') {
    for (let i = 0, o = 0; i < n; i++, o += 3) {
      out[i] = data[o] * scale;
      out[n + i] = data[o + 1] * scale;
      out[2 * n + i] = data[o + 2] * scale;
    }
  } else {
    for (let i = 0; i < 3 * n; i++) out[i] = data[i] * scale;
  }
  return out instanceof Uint8Array ? new ort.Tensor('uint8', out, dims) : new ort.Tensor('float32', out, dims);
}
