/**
 * Hostile openpi messages, as a remote server (to the client) or a remote client (to `tandem policy
 * serve`) could send them: prototype keys, forged arrays, sizes that would allocate gigabytes,
 * BigInt and self-referencing values. Each must be refused in one sentence, through the library and
 * through the real server on a loopback websocket.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Packr } from 'msgpackr';
import { decodeObservation, decodeResult, encodeObservation } from '../../src/policy/openpi/wire.js';
import { NdArray, packOpenpi, unpackOpenpi, WireFormatError } from '../../src/policy/openpi/msgpack-numpy.js';
import { InvalidObservationError, syntheticObservation } from '../../src/policy/observation.js';
import { startPolicyServer } from '../../src/policy/openpi/server.js';
import { OnnxPolicy } from '../../src/policy/onnx/onnx-policy.js';
import { buildLinearPolicyModel } from './onnx-model.js';
import { hostileRequests, sendOneRequest as sendToServer } from './openpi-fakes.js';

const utf8 = new TextEncoder();
/** Packs Maps as msgpack maps (string keys stay str, Uint8Array keys become bin), as a hostile peer can. */
const raw = new Packr({ useRecords: false, variableMapSize: true });
const cyclic = new Packr({ useRecords: false, variableMapSize: true, structuredClone: true });
const bin = (s: string) => utf8.encode(s);
function ndMap(
  dtype: unknown,
  shape: unknown,
  data: Uint8Array,
  extra: [string | Uint8Array, unknown][] = [],
): Map<unknown, unknown> {
  return new Map<unknown, unknown>([
    [bin('__ndarray__'), true],
    [bin('data'), data],
    [bin('dtype'), dtype],
    [bin('shape'), shape],
    ...extra,
  ]);
}
const state14 = () => ndMap('<f4', [14], new Uint8Array(56));

const isWire = (text: RegExp) => (e: unknown) =>
  e instanceof WireFormatError && text.test(e.message) && !/\n/.test(e.message);

test('a reply carrying "actions" only through a __proto__ key is refused: maps decode without prototypes', () => {
  const actions = ndMap('<f4', [1, 14], new Uint8Array(56));
  const bytes = raw.pack(new Map([['__proto__', new Map([['actions', actions]])]]));
  assert.throws(() => decodeResult(bytes), isWire(/no "actions" array/));
  const decoded = unpackOpenpi(bytes) as Record<string, unknown>;
  assert.equal(Object.getPrototypeOf(decoded), null);
  assert.equal(decoded.actions, undefined);
  // ({}).polluted stays undefined: nothing leaked into Object.prototype either.
  assert.equal(({} as Record<string, unknown>).actions, undefined);
});

test('an ndarray cannot be forged past the size check by inheriting a small real one', () => {
  const small = ndMap('<f4', [1, 14], new Uint8Array(56));
  const forged = new Map<unknown, unknown>([
    ['__proto__', small],
    ['shape', [100_000, 14]],
    ['dtype', '<f8'],
  ]);
  assert.throws(() => decodeResult(raw.pack(new Map([['actions', forged]]))), isWire(/no "actions" array/));
});

test('ndarray maps must have exactly the openpi keys and a known dtype, described without crashing', () => {
  const extraKey = ndMap('<f4', [1, 14], new Uint8Array(56), [[bin('strides'), [56, 4]]]);
  assert.throws(
    () => decodeResult(raw.pack(new Map([['actions', extraKey]]))),
    isWire(/an array has the key "strides"/),
  );
  // A uint64 dtype decodes as a BigInt; JSON.stringify would throw on it.
  const bigDtype = ndMap(2n ** 64n - 1n, [1, 14], new Uint8Array(56));
  assert.throws(
    () => decodeResult(raw.pack(new Map([['actions', bigDtype]]))),
    isWire(/dtype .*which tandem does not read/),
  );
  assert.throws(
    () => decodeResult(raw.pack(new Map([['actions', ndMap('toString', [1, 14], new Uint8Array(56))]]))),
    isWire(/dtype "toString"/),
  );
  // A self-referencing value (msgpackr's structured-clone extension) is not openpi msgpack at all.
  const loop: unknown[] = [];
  loop.push(loop);
  const selfRef = cyclic.pack(new Map([['actions', ndMap(loop, [1, 14], new Uint8Array(56))]]));
  assert.throws(() => decodeResult(selfRef), isWire(/extension type|not valid msgpack/));
});

test('msgpack extension types, too-deep nesting and oversized messages are refused before decoding', () => {
  // A Date (timestamp extension) and a 100 000-deep array: openpi sends neither.
  assert.throws(() => unpackOpenpi(raw.pack(new Map([['t', new Date(0)]]))), isWire(/extension type/));
  const deep = new Uint8Array(100_000).fill(0x91);
  assert.throws(() => unpackOpenpi(deep), isWire(/nests deeper than/));
  // An array32 header claiming 4 billion items in 5 bytes.
  assert.throws(
    () => unpackOpenpi(new Uint8Array([0xdd, 0xff, 0xff, 0xff, 0xff])),
    isWire(/a list claims 4294967295 values but only 0 bytes follow/),
  );
  assert.throws(() => unpackOpenpi(new Uint8Array(2000), { maxBytes: 1000 }), isWire(/2000 bytes.*at most 1000/));
});

test('a request whose image sides exceed the bound is refused before any pixel is allocated', () => {
  const big = ndMap('|u1', [3, 100_000, 100_000], new Uint8Array(0));
  const bytes = raw.pack(
    new Map<string, unknown>([
      ['state', state14()],
      ['images', new Map([['cam_high', big]])],
    ]),
  );
  assert.ok(bytes.length < 250, `${bytes.length} bytes`);
  assert.throws(() => decodeObservation(bytes), isWire(/carries 0 bytes/));
  // With honest bytes but sides over the server's bound, the shape is refused from the header.
  const wide = ndMap('|u1', [3, 2, 5000], new Uint8Array(30_000));
  const wideBytes = raw.pack(
    new Map<string, unknown>([
      ['state', state14()],
      ['images', new Map([['cam_high', wide]])],
    ]),
  );
  assert.throws(
    () => decodeObservation(wideBytes, { maxImageSide: 1024 }),
    (e: unknown) =>
      e instanceof InvalidObservationError &&
      /is 2×5000 pixels \(height × width\); this server takes sides from 1 to 1024/.test(e.message),
  );
  // Unknown top-level keys are refused by name (openpi's ALOHA request has state, images, prompt).
  const extra = raw.pack(
    new Map<string, unknown>([
      ['state', state14()],
      ['images', new Map()],
      ['observation/wrist', 1],
    ]),
  );
  assert.throws(
    () => decodeObservation(extra),
    (e: unknown) => e instanceof InvalidObservationError && e.field === 'observation/wrist',
  );
});

const dir = mkdtempSync(join(tmpdir(), 'tandem-openpi-hostile-'));
const modelPath = join(dir, 'policy.onnx');
writeFileSync(modelPath, buildLinearPolicyModel({ horizon: 4, seed: 3 }).bytes);
test.after(() => rmSync(dir, { recursive: true, force: true }));

test('through the real server: forged images, prototype keys and BigInts get one-sentence error frames, a good request still works', async () => {
  const policy = await OnnxPolicy.load(modelPath);
  const lines: string[] = [];
  const server = await startPolicyServer({ policy, port: 0, log: (l) => lines.push(l) });
  try {
    // ~200 bytes that made the old server allocate three 8192×8192 images (576 MiB) and run them.
    const forgedImage = hostileRequests.forgedImage;
    assert.ok(forgedImage.length < 250);
    const before = process.memoryUsage().arrayBuffers;
    const r1 = await sendToServer(server.url, forgedImage);
    assert.ok(
      process.memoryUsage().arrayBuffers - before < 64 * 2 ** 20,
      'the server allocated images it should have refused',
    );
    assert.equal(r1.closeCode, 1011);
    assert.match(r1.text ?? '', /^tandem policy server: [^\n]*images\.cam_high[^\n]*\.$/);

    const bigDtype = raw.pack(
      new Map<string, unknown>([
        ['state', ndMap(2n ** 63n, [14], new Uint8Array(56))],
        ['images', new Map()],
      ]),
    );
    const r2 = await sendToServer(server.url, bigDtype);
    assert.equal(r2.closeCode, 1011);
    assert.match(
      r2.text ?? '',
      /^tandem policy server: the observation could not be read: an array has dtype 9223372036854775808 \(a number\), which tandem does not read/,
    );

    // A request larger than any observation this server takes is cut off by the websocket itself (1009).
    const r3 = await sendToServer(server.url, new Uint8Array(60 * 2 ** 20));
    assert.equal(r3.closeCode, 1009);

    assert.equal(server.served(), 0);
    const good = await sendToServer(server.url, await encodeObservation(syntheticObservation({ size: 224 })));
    assert.ok(good.binary, good.text);
    assert.equal(decodeResult(good.binary).chunk.horizon, 4);
    assert.equal(server.served(), 1);
  } finally {
    await server.close();
    await policy.close();
  }
});

test('the client refuses action chunks longer or wider than any openpi server sends', () => {
  assert.throws(
    () => decodeResult(packOpenpi({ actions: new NdArray('<f4', [5000, 14], new Uint8Array(5000 * 56)) })),
    isWire(/has 5000 rows; at most 1000/),
  );
  assert.throws(
    () => decodeResult(packOpenpi({ actions: new NdArray('<f4', [1, 200], new Uint8Array(800)) })),
    isWire(/has 200 columns; at most 64/),
  );
});
