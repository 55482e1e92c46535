/**
 * Small seeded ONNX models built in code (no downloaded weights):
 *   actions = state·W + Σ_cam mean(P_cam ⊙ image)·V_cam + b, reshaped to [1, H, 14],
 * where P_cam holds one weight per pixel and channel (row y, column x, channel c), laid out in the
 * model input's own order (CHW or HWC). `expected` computes the same in JS from the HWC image, so
 * a feeder that puts a pixel where the model does not expect it (a broken CHW transpose, swapped
 * channels, a flipped image) changes the answer — an average of the image would not notice.
 * P_cam is made of small integers summing to 0 per channel: a uniform frame (blank, of any colour)
 * contributes exactly nothing for uint8 inputs, so only an image with something in it moves the arms.
 */
import onnxProto from 'onnx-proto';
import type { Observation } from '../../src/policy/contract.js';

const { onnx } = onnxProto;
const FLOAT = onnx.TensorProto.DataType.FLOAT;
const UINT8 = onnx.TensorProto.DataType.UINT8;
const INT64 = onnx.TensorProto.DataType.INT64;

export interface CameraInputSpec {
  readonly name: string; // model input name, e.g. 'cam_high' or 'observation.images.cam_high'
  readonly camera: 'cam_high' | 'cam_left_wrist' | 'cam_right_wrist';
  readonly layout: 'chw' | 'hwc';
  readonly dtype: 'float32' | 'uint8';
  readonly size: number;
}

export interface ModelSpec {
  readonly seed?: number;
  readonly horizon?: number;
  readonly stateName?: string;
  readonly stateDims?: readonly (number | string)[];
  readonly cameras?: readonly CameraInputSpec[];
  readonly outputName?: string;
  /** Put NaN in the bias: a model that answers NaN actions. */
  readonly nanBias?: boolean;
  /**
   * Both grippers held at this opening (0 closed … 1 open) whatever the state and the images: for
   * tests about something else on the emulated cell, whose gripper motor moves far faster than a
   * real DM4310 can (peaks of 115–121 rad/s against its 30), so a random gripper command read across
   * one late reply of the loop looks like a broken encoder to the driver.
   */
  readonly steadyGrippers?: number;
}

function lcg(seed: number): () => number {
  let s = seed >>> 0;
  return () => {
    s = (Math.imul(s, 1664525) + 1013904223) >>> 0;
    return s / 2 ** 32 - 0.5;
  };
}

type Dim = number | string;
const valueInfo = (name: string, elemType: number, dims: readonly Dim[]) =>
  onnx.ValueInfoProto.create({
    name,
    type: {
      tensorType: {
        elemType,
        shape: { dim: dims.map((d) => (typeof d === 'number' ? { dimValue: d } : { dimParam: d })) },
      },
    },
  });
const floatTensor = (name: string, dims: number[], values: Float32Array) =>
  onnx.TensorProto.create({
    name,
    dims,
    dataType: FLOAT,
    rawData: new Uint8Array(values.buffer.slice(values.byteOffset, values.byteOffset + values.byteLength)),
  });
const int64Tensor = (name: string, values: number[]) =>
  onnx.TensorProto.create({ name, dims: [values.length], dataType: INT64, int64Data: values });
const node = (opType: string, input: string[], output: string[], attribute: object[] = []) =>
  onnx.NodeProto.create({ opType, input, output, attribute });
const intsAttr = (name: string, ints: number[]) =>
  onnx.AttributeProto.create({ name, type: onnx.AttributeProto.AttributeType.INTS, ints });
const intAttr = (name: string, i: number) =>
  onnx.AttributeProto.create({ name, type: onnx.AttributeProto.AttributeType.INT, i });

export interface BuiltModel {
  readonly bytes: Uint8Array;
  readonly horizon: number;
  /** What the model answers for this observation (images must already have the model's size). */
  expected(obs: Observation): Float32Array;
}

/**
 * One integer weight in [-3, 3] per (row, column, channel), indexed HWC: (y·size + x)·3 + c. Each
 * channel's weights sum to exactly 0 (the last pixel of a channel takes minus the sum of the rest),
 * so they are not symmetric under any reordering a layout bug makes, and uniform frames give 0.
 */
function pixelWeights(size: number, rand: () => number): Float32Array {
  const n = size * size;
  const w = new Float32Array(n * 3);
  for (let ch = 0; ch < 3; ch++) {
    let sum = 0;
    for (let i = 0; i < n - 1; i++) {
      const v = Math.round(rand() * 6); // rand() is in [-0.5, 0.5)
      w[i * 3 + ch] = v;
      sum += v;
    }
    w[(n - 1) * 3 + ch] = -sum;
  }
  return w;
}

/** HWC-indexed weights in the model input's layout. */
function inLayout(hwc: Float32Array, size: number, layout: 'chw' | 'hwc'): Float32Array {
  if (layout === 'hwc') return hwc;
  const n = size * size;
  const chw = new Float32Array(n * 3);
  for (let i = 0; i < n; i++) for (let ch = 0; ch < 3; ch++) chw[ch * n + i] = hwc[i * 3 + ch];
  return chw;
}

export function buildLinearPolicyModel(spec: ModelSpec = {}): BuiltModel {
  const H = spec.horizon ?? 10;
  const cams = spec.cameras ?? [
    { name: 'cam_high', camera: 'cam_high', layout: 'chw', dtype: 'float32', size: 32 } as const,
  ];
  const rand = lcg(spec.seed ?? 7);
  const n = H * 14;
  const W = new Float32Array(14 * n).map(() => rand() * 0.2);
  const b = new Float32Array(n).map(() => rand());
  if (spec.nanBias) b[5] = NaN;
  const V = cams.map(() => new Float32Array(n).map(() => rand()));
  if (spec.steadyGrippers !== undefined)
    for (let k = 0; k < H; k++)
      for (const g of [k * 14 + 6, k * 14 + 13]) {
        for (let i = 0; i < 14; i++) W[i * n + g] = 0;
        for (const v of V) v[g] = 0;
        b[g] = spec.steadyGrippers;
      }
  const P = cams.map((c) => pixelWeights(c.size, rand));
  const stateName = spec.stateName ?? 'state';
  const stateDims = spec.stateDims ?? [1, 14];
  const nodes = [];
  const initializers = [
    floatTensor('W', [14, n], W),
    floatTensor('b', [1, n], b),
    int64Tensor('out_shape', [1, H, 14]),
    int64Tensor('one_one', [1, 1]),
    int64Tensor('state_2d', [1, 14]),
  ];
  nodes.push(node('Reshape', [stateName, 'state_2d'], ['state2']));
  nodes.push(node('MatMul', ['state2', 'W'], ['lin']));
  let acc = 'lin';
  cams.forEach((c, i) => {
    initializers.push(floatTensor(`V${i}`, [1, n], V[i]));
    const dims = c.layout === 'chw' ? [1, 3, c.size, c.size] : [1, c.size, c.size, 3];
    initializers.push(floatTensor(`P${i}`, dims, inLayout(P[i], c.size, c.layout)));
    let src = c.name;
    if (c.dtype === 'uint8') {
      nodes.push(node('Cast', [src], [`f${i}`], [intAttr('to', FLOAT)]));
      src = `f${i}`;
    }
    nodes.push(node('Mul', [src, `P${i}`], [`w${i}`]));
    nodes.push(node('ReduceMean', [`w${i}`], [`m${i}`], [intsAttr('axes', [1, 2, 3]), intAttr('keepdims', 1)]));
    nodes.push(node('Reshape', [`m${i}`, 'one_one'], [`mm${i}`]));
    nodes.push(node('Mul', [`mm${i}`, `V${i}`], [`c${i}`]));
    nodes.push(node('Add', [acc, `c${i}`], [`s${i}`]));
    acc = `s${i}`;
  });
  nodes.push(node('Add', [acc, 'b'], ['flat']));
  const outName = spec.outputName ?? 'actions';
  nodes.push(node('Reshape', ['flat', 'out_shape'], [outName]));
  const inputs = [valueInfo(stateName, FLOAT, stateDims)];
  for (const c of cams)
    inputs.push(
      valueInfo(
        c.name,
        c.dtype === 'uint8' ? UINT8 : FLOAT,
        c.layout === 'chw' ? [1, 3, c.size, c.size] : [1, c.size, c.size, 3],
      ),
    );
  const graph = onnx.GraphProto.create({
    name: 'tandem_test_policy',
    node: nodes,
    initializer: initializers,
    input: inputs,
    output: [valueInfo(outName, FLOAT, [1, H, 14])],
  });
  const model = onnx.ModelProto.create({
    irVersion: 8,
    opsetImport: [{ domain: '', version: 13 }],
    producerName: 'tandem-test',
    graph,
  });
  const bytes = onnx.ModelProto.encode(model).finish();

  return {
    bytes,
    horizon: H,
    expected(obs) {
      const out = new Float32Array(n);
      for (let j = 0; j < n; j++) {
        let s = b[j];
        for (let i = 0; i < 14; i++) s += obs.state[i] * W[i * n + j];
        out[j] = s;
      }
      cams.forEach((c, ci) => {
        const img = obs.images[c.camera];
        if (!img) throw new Error(`expected() needs ${c.camera}`);
        // img.data is HWC; P[ci] is indexed the same way (see pixelWeights), independent of the model's layout.
        let sum = 0;
        for (let k = 0; k < img.data.length; k++) sum += img.data[k] * P[ci][k];
        const mean = (sum / img.data.length) * (c.dtype === 'uint8' ? 1 : 1 / 255);
        for (let j = 0; j < n; j++) out[j] += mean * V[ci][j];
      });
      return out;
    },
  };
}
