import { test } from 'node:test';
import assert from 'node:assert/strict';
import { decodeObservation, decodeResult, encodeObservation, encodeResult } from '../../src/policy/openpi/wire.js';
import {
  NdArray,
  NpGeneric,
  packOpenpi,
  unpackOpenpi,
  WireFormatError,
} from '../../src/policy/openpi/msgpack-numpy.js';
import { InvalidObservationError, syntheticObservation } from '../../src/policy/observation.js';
import { hwcToChw } from '../../src/policy/image.js';

const ascii = (s: string): number[] => [...Buffer.from(s, 'ascii')];
/** msgpack bin8 of a short ASCII key: 0xc4, length, bytes — what Python's msgpack writes for b"key". */
const binKey = (s: string): number[] => [0xc4, s.length, ...ascii(s)];
/** msgpack fixstr. */
const str = (s: string): number[] => [0xa0 | s.length, ...ascii(s)];

function indexOf(hay: Uint8Array, needle: number[]): number {
  return Buffer.from(hay).indexOf(Buffer.from(needle));
}

test('the state travels as openpi ndarray map with bin keys, byte for byte', async () => {
  const obs = syntheticObservation({ size: 224 });
  const bytes = await encodeObservation(obs);
  const stateBytes = [...new Uint8Array(new Float32Array(obs.state).buffer)];
  const expected = [
    ...str('state'),
    0x84, // fixmap, 4 entries
    ...binKey('__ndarray__'),
    0xc3,
    ...binKey('data'),
    0xc4,
    56,
    ...stateBytes,
    ...binKey('dtype'),
    ...str('<f4'),
    ...binKey('shape'),
    0x91,
    14,
  ];
  assert.ok(indexOf(bytes, expected) >= 0, 'state map with bin keys not found in the request bytes');
  // The four keys are never written as msgpack str (0xa0|len), which openpi would not understand.
  assert.equal(indexOf(bytes, str('__ndarray__')), -1);
  assert.equal(indexOf(bytes, str('dtype')), -1);
  assert.equal(indexOf(bytes, [0xa4, ...ascii('data')]), -1);
  // Top level: fixmap of str keys state, images, prompt.
  assert.equal(bytes[0], 0x83);
  // The prompt is msgpack str (fixstr for 26 characters), as Python's msgpack writes a str.
  assert.ok(indexOf(bytes, [...str('prompt'), ...str(obs.prompt)]) >= 0);
});

test('camera images travel as CHW uint8 [3, 224, 224] with a bin32 data field', async () => {
  const obs = syntheticObservation({ size: 224 });
  const bytes = await encodeObservation(obs);
  const chw = hwcToChw(obs.images.cam_left_wrist!);
  const n = 3 * 224 * 224; // 150528 = 0x00024c00
  const header = [
    ...str('cam_left_wrist'),
    0x84,
    ...binKey('__ndarray__'),
    0xc3,
    ...binKey('data'),
    0xc6,
    0x00,
    0x02,
    0x4c,
    0x00,
  ];
  const at = indexOf(bytes, header);
  assert.ok(at >= 0, 'cam_left_wrist ndarray header not found');
  const dataStart = at + header.length;
  assert.deepEqual(Buffer.from(bytes.subarray(dataStart, dataStart + n)), Buffer.from(chw));
  const tail = [...binKey('dtype'), ...str('|u1'), ...binKey('shape'), 0x93, 0x03, 0xcc, 0xe0, 0xcc, 0xe0];
  assert.deepEqual([...bytes.subarray(dataStart + n, dataStart + n + tail.length)], tail);
});

test('a hand-written openpi response decodes to actions and timings', () => {
  const actions = new Float32Array(2 * 14).map((_, i) => i * 0.25 - 1);
  const f64 = (x: number): number[] => {
    const b = Buffer.alloc(8);
    b.writeDoubleBE(x);
    return [0xcb, ...b];
  };
  // As Python's msgpack_numpy.packb({"actions": np.array(..., float32), "policy_timing": {...}, "server_timing": {...}}) writes it.
  const msg = new Uint8Array([
    0x83,
    ...str('actions'),
    0x84,
    ...binKey('__ndarray__'),
    0xc3,
    ...binKey('data'),
    0xc4,
    112,
    ...new Uint8Array(actions.buffer),
    ...binKey('dtype'),
    ...str('<f4'),
    ...binKey('shape'),
    0x92,
    0x02,
    0x0e,
    ...str('policy_timing'),
    0x81,
    ...str('infer_ms'),
    ...f64(41.5),
    ...str('server_timing'),
    0x82,
    ...str('infer_ms'),
    ...f64(43.25),
    ...str('prev_total_ms'),
    ...f64(60.0),
  ]);
  const r = decodeResult(msg);
  assert.equal(r.chunk.horizon, 2);
  assert.deepEqual(Array.from(r.chunk.actions), Array.from(actions));
  assert.equal(r.policyInferMs, 41.5);
  assert.equal(r.serverInferMs, 43.25);
});

test('float64 actions with extra columns are read, keeping the first 14 (openpi ALOHA outputs)', () => {
  const wide = new Float64Array(3 * 16).map((_, i) => i);
  const bytes = packOpenpi({ actions: new NdArray('<f8', [3, 16], new Uint8Array(wide.buffer)) });
  const r = decodeResult(bytes);
  assert.equal(r.chunk.horizon, 3);
  assert.deepEqual(Array.from(r.chunk.actions.subarray(14, 28)), Array.from(wide.subarray(16, 30)));
});

test('our own response encoding round-trips, and numpy scalars decode', () => {
  const actions = new Float32Array(50 * 14).map((_, i) => Math.sin(i));
  const bytes = encodeResult({ horizon: 50, actions }, { policyInferMs: 3, serverInferMs: 4, prevTotalMs: 9 });
  const r = decodeResult(bytes);
  assert.deepEqual(Array.from(r.chunk.actions), Array.from(actions));
  const meta = unpackOpenpi(
    packOpenpi({ scale: new NpGeneric('<f4', 0.5), reset_pose: [0, -1.5, 1.5, 0, 0, 0] }),
  ) as Record<string, unknown>;
  assert.ok(meta.scale instanceof NpGeneric && meta.scale.value === 0.5);
  assert.deepEqual(meta.reset_pose, [0, -1.5, 1.5, 0, 0, 0]);
});

test('the server side reads a request back: CHW → HWC, missing wrist cameras black, unknown cameras refused', async () => {
  const obs = syntheticObservation({ size: 224 });
  const only = { ...obs, images: { cam_high: obs.images.cam_high } };
  const back = decodeObservation(await encodeObservation(only));
  assert.deepEqual(Array.from(back.state), Array.from(obs.state));
  assert.deepEqual(Buffer.from(back.images.cam_high!.data), Buffer.from(obs.images.cam_high!.data));
  assert.equal(
    back.images.cam_left_wrist!.data.reduce((a, v) => a + v, 0),
    0,
  );
  assert.equal(back.prompt, obs.prompt);

  const unknown = packOpenpi({
    state: NdArray.float32(new Float32Array(14), [14]),
    images: { cam_top: NdArray.uint8(new Uint8Array(3 * 4 * 4), [3, 4, 4]) },
  });
  assert.throws(
    () => decodeObservation(unknown),
    (e: unknown) => e instanceof InvalidObservationError && e.field === 'images.cam_top',
  );
  const hwc = packOpenpi({
    state: NdArray.float32(new Float32Array(14), [14]),
    images: { cam_high: NdArray.uint8(new Uint8Array(4 * 4 * 3), [4, 4, 3]) },
  });
  assert.throws(() => decodeObservation(hwc), /has shape \[4, 4, 3\]; images travel as CHW/);
  const shortState = packOpenpi({ state: NdArray.float32(new Float32Array(7), [7]), images: {} });
  assert.throws(() => decodeObservation(shortState), /'state' has 7 entries/);
});

test('garbage and lying arrays are WireFormatErrors, not crashes', () => {
  assert.throws(() => unpackOpenpi(new Uint8Array([0xc1, 0xff, 0x00])), WireFormatError);
  const lying = packOpenpi({ actions: new NdArray('<f4', [50, 14], new Uint8Array(12)) });
  assert.throws(() => decodeResult(lying), /carries 12 bytes, not 2800/);
  assert.throws(() => decodeResult(packOpenpi({ nothing: 1 })), /no "actions" array/);
  const weird = new Uint8Array([
    0x81,
    ...str('actions'),
    0x84,
    ...binKey('__ndarray__'),
    0xc3,
    ...binKey('data'),
    0xc4,
    0,
    ...binKey('dtype'),
    ...str('>c8'),
    ...binKey('shape'),
    0x90,
  ]);
  assert.throws(() => decodeResult(weird), /dtype ">c8"/);
});
