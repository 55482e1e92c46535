import { test } from 'node:test';
import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { OnnxPolicy } from '../../src/policy/onnx/onnx-policy.js';
import { PolicyLoadError } from '../../src/policy/errors.js';
import { InvalidObservationError, syntheticObservation } from '../../src/policy/observation.js';
import { resizeWithPad } from '../../src/policy/image.js';
import { openPolicySpec } from '../../src/policy/spec.js';
import type { Observation } from '../../src/policy/contract.js';
import { buildLinearPolicyModel, type ModelSpec } from './onnx-model.js';

const dir = mkdtempSync(join(tmpdir(), 'tandem-onnx-'));
test.after(() => rmSync(dir, { recursive: true, force: true }));

let counter = 0;
function writeModel(spec: ModelSpec): {
  path: string;
  bytes: Uint8Array;
  model: ReturnType<typeof buildLinearPolicyModel>;
} {
  const model = buildLinearPolicyModel(spec);
  const path = join(dir, `m${counter++}.onnx`);
  writeFileSync(path, model.bytes);
  return { path, bytes: model.bytes, model };
}

function assertClose(actual: Float32Array, expected: Float32Array, tol = 1e-4): void {
  assert.equal(actual.length, expected.length);
  for (let i = 0; i < actual.length; i++)
    assert.ok(
      Math.abs(actual[i] - expected[i]) <= tol * Math.max(1, Math.abs(expected[i])),
      `entry ${i}: ${actual[i]} vs ${expected[i]}`,
    );
}

test('a CHW float model gets state and the normalised camera image and answers H×14 actions', async () => {
  const { path, bytes, model } = writeModel({ horizon: 8, seed: 3 });
  const policy = await OnnxPolicy.load(path);
  try {
    assert.equal(policy.info.checkpointSha256, createHash('sha256').update(bytes).digest('hex'));
    assert.equal(policy.info.actionHorizon, 8);
    assert.deepEqual(policy.info.cameras, ['cam_high']);
    const obs = syntheticObservation({ size: 32, seed: 5 });
    const chunk = await policy.infer(obs);
    assert.equal(chunk.horizon, 8);
    assertClose(chunk.actions, model.expected(obs));
    assert.ok(chunk.timing && chunk.timing.modelMs !== undefined && chunk.timing.totalMs >= chunk.timing.modelMs);
    // A different state must change the answer: the state really reaches the model.
    const other = { ...obs, state: obs.state.map((v) => v + 0.5) };
    const chunk2 = await policy.infer(other);
    assertClose(chunk2.actions, model.expected(other));
    assert.notDeepEqual(Array.from(chunk2.actions), Array.from(chunk.actions));
    // Where each pixel lands matters: the same pixels mirrored left–right (same mean, same colours)
    // must change the answer, and still match the model computed from the HWC image.
    const src = obs.images.cam_high!;
    const mirrored = new Uint8Array(src.data.length);
    for (let y = 0; y < 32; y++)
      for (let x = 0; x < 32; x++)
        mirrored.set(src.data.subarray((y * 32 + x) * 3, (y * 32 + x) * 3 + 3), (y * 32 + 31 - x) * 3);
    const flipped: Observation = { ...obs, images: { ...obs.images, cam_high: { ...src, data: mirrored } } };
    const chunk3 = await policy.infer(flipped);
    assertClose(chunk3.actions, model.expected(flipped));
    assert.ok(
      chunk3.actions.some((v, i) => Math.abs(v - chunk.actions[i]) > 1e-3),
      'a mirrored image is a different input',
    );
  } finally {
    await policy.close();
  }
});

test('LeRobot-style names, HWC uint8 cameras and a symbolic batch dim are matched', async () => {
  const { path, model } = writeModel({
    horizon: 5,
    stateName: 'observation.state',
    stateDims: ['batch', 14],
    cameras: [
      { name: 'observation.images.cam_high', camera: 'cam_high', layout: 'hwc', dtype: 'uint8', size: 16 },
      {
        name: 'observation.images.cam_left_wrist',
        camera: 'cam_left_wrist',
        layout: 'chw',
        dtype: 'float32',
        size: 16,
      },
    ],
  });
  const policy = await OnnxPolicy.load(path);
  try {
    assert.deepEqual(policy.info.cameras, ['cam_high', 'cam_left_wrist']);
    const obs = syntheticObservation({ size: 16, seed: 9 });
    assertClose((await policy.infer(obs)).actions, model.expected(obs));
  } finally {
    await policy.close();
  }
});

test('camera images of another size are resized (aspect kept, black padding) to the model input', async () => {
  const { path, model } = writeModel({ horizon: 4 });
  const policy = await OnnxPolicy.load(path);
  try {
    const base = syntheticObservation({ size: 64 });
    const wide = { width: 64, height: 48, data: base.images.cam_high!.data.slice(0, 64 * 48 * 3) };
    const obs: Observation = { ...base, images: { cam_high: wide } };
    const resized: Observation = { ...obs, images: { cam_high: await resizeWithPad(wide, 32, 32) } };
    // Padding rows are black: the mean of the resized image is lower than the source's.
    assert.equal(
      resized.images.cam_high!.data.slice(0, 32 * 3).reduce((a, v) => a + v, 0),
      0,
    );
    assertClose((await policy.infer(obs)).actions, model.expected(resized));
  } finally {
    await policy.close();
  }
});

test('an observation the model cannot take names the field', async () => {
  const { path } = writeModel({});
  const policy = await OnnxPolicy.load(path);
  try {
    const obs = syntheticObservation({ size: 32 });
    await assert.rejects(
      policy.infer({ ...obs, images: { cam_left_wrist: obs.images.cam_left_wrist } }),
      (e: unknown) => e instanceof InvalidObservationError && e.field === 'images.cam_high',
    );
    const nan = new Float32Array(obs.state);
    nan[3] = NaN;
    await assert.rejects(
      policy.infer({ ...obs, state: nan }),
      (e: unknown) => e instanceof InvalidObservationError && e.field === 'state[3]',
    );
    await assert.rejects(policy.infer({ ...obs, state: new Float32Array(12) }), /state' has 12 entries; it needs 14/);
    const bad = { ...obs, images: { ...obs.images, cam_top: obs.images.cam_high } } as unknown as Observation;
    await assert.rejects(policy.infer(bad), /images\.cam_top' is not a known camera/);
    await assert.rejects(
      policy.infer({ ...obs, images: { cam_high: { width: 32, height: 32, data: new Uint8Array(10) } } }),
      /holds 10 bytes but a 32×32 RGB image needs 3072/,
    );
  } finally {
    await policy.close();
  }
});

test('files tandem cannot run are one clear sentence', async () => {
  const notOnnx = join(dir, 'notes.onnx');
  writeFileSync(notOnnx, 'these are not the weights you are looking for');
  await assert.rejects(
    OnnxPolicy.load(notOnnx),
    (e: unknown) => e instanceof PolicyLoadError && /notes\.onnx is not an ONNX model/.test(e.message),
  );
  await assert.rejects(OnnxPolicy.load(join(dir, 'missing.onnx')), /No model file at .*missing\.onnx\./);
  const wrongName = writeModel({
    cameras: [{ name: 'pixels', camera: 'cam_high', layout: 'chw', dtype: 'float32', size: 8 }],
  });
  await assert.rejects(
    OnnxPolicy.load(wrongName.path),
    /has input 'pixels', which tandem cannot feed; inputs must be named state, cam_high/,
  );
  const wrongState = writeModel({ stateDims: [1, 7] });
  await assert.rejects(
    OnnxPolicy.load(wrongState.path),
    /input 'state' has shape \[1, 7\]; the state input must be \[14\] or \[1, 14\]/,
  );
  const noState = writeModel({ stateName: 'joints' });
  await assert.rejects(OnnxPolicy.load(noState.path), /has input 'joints', which tandem cannot feed/);
});

test('onnx: specs resolve relative to the working directory', async () => {
  const { path } = writeModel({ horizon: 3 });
  const policy = await openPolicySpec(`onnx:${path.slice(dir.length + 1)}`, { cwd: dir });
  assert.equal(policy.info.actionHorizon, 3);
  await policy.close?.();
  await assert.rejects(openPolicySpec('onnx:', { cwd: dir }), /names no model file/);
  await assert.rejects(openPolicySpec('tcp://x', { cwd: dir }), /is not one the policy runtime opens/);
});
