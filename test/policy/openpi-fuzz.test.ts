/**
 * Property tests of the openpi msgpack-numpy parsers (fast-check): whatever bytes arrive, the client
 * and the server either decode them or throw their own error class (WireFormatError or
 * InvalidObservationError) — never a TypeError, RangeError or a stack overflow — and what they decode
 * is bounded by what arrived.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import fc from 'fast-check';
import { Packr } from 'msgpackr';
import { decodeObservation, decodeResult, encodeObservation, encodeResult } from '../../src/policy/openpi/wire.js';
import { unpackOpenpi, WireFormatError } from '../../src/policy/openpi/msgpack-numpy.js';
import { InvalidObservationError, syntheticObservation } from '../../src/policy/observation.js';
import type { Observation } from '../../src/policy/contract.js';

/** Fixed, so a failure reproduces. */
const SEED = 3141;

const ownError = (e: unknown): boolean => e instanceof WireFormatError || e instanceof InvalidObservationError;

/** Runs `f`; a thrown error must be one of the parsers' own. Returns the value or undefined. */
function parse<T>(f: () => T): T | undefined {
  try {
    return f();
  } catch (e) {
    if (!ownError(e)) throw new Error(`the parser threw ${(e as Error)?.name}: ${(e as Error)?.message}`);
    if (/\n/.test((e as Error).message)) throw new Error(`a refusal ran over one line: ${(e as Error).message}`);
    return undefined;
  }
}

function imageBytes(obs: Observation | undefined): number {
  return obs ? Object.values(obs.images).reduce((a, im) => a + (im?.data.length ?? 0), 0) : 0;
}

const goodResult = encodeResult(
  { horizon: 10, actions: new Float32Array(140).fill(0.25) },
  { policyInferMs: 1, serverInferMs: 2 },
);
let goodRequest: Uint8Array;
test.before(async () => {
  goodRequest = await encodeObservation(syntheticObservation({ size: 32 }), 32);
});

/** A valid message mutated: bytes overwritten, cut, or spliced with random bytes. */
const mutated = (base: () => Uint8Array) =>
  fc
    .record({
      flips: fc.array(fc.record({ at: fc.nat(), value: fc.integer({ min: 0, max: 255 }) }), { maxLength: 6 }),
      cut: fc.option(fc.nat()),
      insert: fc.option(fc.record({ at: fc.nat(), bytes: fc.uint8Array({ maxLength: 16 }) })),
    })
    .map(({ flips, cut, insert }) => {
      let b = Uint8Array.from(base());
      for (const f of flips) b[f.at % b.length] = f.value;
      if (insert) {
        const at = insert.at % b.length;
        b = Uint8Array.from([...b.subarray(0, at), ...insert.bytes, ...b.subarray(at)]);
      }
      if (cut !== null) b = b.subarray(0, cut % (b.length + 1));
      return b;
    });

test('random bytes: only WireFormatError or InvalidObservationError, from the client and the server decoders', () => {
  fc.assert(
    fc.property(fc.uint8Array({ maxLength: 512 }), (bytes) => {
      parse(() => unpackOpenpi(bytes));
      parse(() => decodeResult(bytes));
      const obs = parse(() => decodeObservation(bytes));
      assert.ok(imageBytes(obs) <= 3 * bytes.length);
    }),
    { seed: SEED, numRuns: 3000 },
  );
});

test('valid answers and requests, mutated: own errors only, and what decodes is no larger than what arrived allows', () => {
  fc.assert(
    fc.property(
      mutated(() => goodResult),
      (bytes) => {
        const r = parse(() => decodeResult(bytes));
        if (r) assert.ok(r.chunk.actions.length * 4 <= bytes.length * 4, 'actions larger than their bytes');
      },
    ),
    { seed: SEED, numRuns: 1500 },
  );
  fc.assert(
    fc.property(
      mutated(() => goodRequest),
      (bytes) => {
        const obs = parse(() => decodeObservation(bytes));
        // Missing wrist cameras become black images the size of cam_high: three times what arrived, at most.
        assert.ok(imageBytes(obs) <= 3 * bytes.length);
      },
    ),
    { seed: SEED, numRuns: 300 },
  );
  // Unmutated, both still decode.
  assert.equal(decodeResult(goodResult).chunk.horizon, 10);
  assert.equal(decodeObservation(goodRequest).images.cam_high!.width, 32);
});

/** msgpack values a hostile peer can write: maps with str and bin keys (including "__proto__"), BigInts, lists, bytes. */
const hostileValue = fc.letrec((tie) => ({
  value: fc.oneof(
    { depthSize: 'small', withCrossShrink: true },
    fc.constantFrom<unknown>(null, true, false, 0, -1, 2 ** 53, 1.5, NaN),
    fc.bigInt({ min: -(2n ** 63n), max: 2n ** 64n - 1n }),
    fc.constantFrom(
      '__proto__',
      'constructor',
      'toString',
      '__ndarray__',
      '__npgeneric__',
      'data',
      'dtype',
      'shape',
      'actions',
      '<f4',
      '|u1',
      'state',
      'images',
      'cam_high',
    ),
    fc.string({ maxLength: 8 }),
    fc.uint8Array({ maxLength: 64 }),
    fc.array(tie('value'), { maxLength: 4 }),
    fc.array(fc.tuple(tie('key'), tie('value')), { maxLength: 5 }).map((entries) => new Map(entries)),
  ),
  key: fc.oneof(
    fc.constantFrom(
      '__proto__',
      'constructor',
      '__ndarray__',
      '__npgeneric__',
      'data',
      'dtype',
      'shape',
      'actions',
      'state',
      'images',
      'prompt',
      'cam_high',
      'cam_left_wrist',
    ),
    fc.constantFrom('__ndarray__', '__npgeneric__', 'data', 'dtype', 'shape').map((s) => new TextEncoder().encode(s)),
    fc.string({ maxLength: 6 }),
  ),
}));
const raw = new Packr({ useRecords: false, variableMapSize: true });
const bin = (s: string) => new TextEncoder().encode(s);
const realSmall = new Map<unknown, unknown>([
  [bin('__ndarray__'), true],
  [bin('data'), new Uint8Array(56)],
  [bin('dtype'), '<f4'],
  [bin('shape'), [1, 14]],
]);

/** Maps that look like numpy arrays: some openpi keys, some lies, sometimes a real small array under "__proto__". */
const ndLike = fc
  .record({
    marker: fc.option(fc.constantFrom<unknown>(true, 1, 'yes'), { nil: undefined }),
    data: fc.option(fc.uint8Array({ maxLength: 128 }), { nil: undefined }),
    dtype: fc.option(
      fc.oneof(
        fc.constantFrom<unknown>('<f4', '<f8', '|u1', '<u8', '>f4', 'toString', '__proto__'),
        fc.bigInt({ min: 0n, max: 2n ** 64n - 1n }),
      ),
      { nil: undefined },
    ),
    shape: fc.option(
      fc.array(fc.oneof(fc.integer({ min: 0, max: 20 }), fc.constantFrom(3, 14, 8192, 100_000, 2 ** 40, -1, 1.5)), {
        maxLength: 4,
      }),
      { nil: undefined },
    ),
    proto: fc.boolean(),
    extra: fc.option(fc.constantFrom('strides', 'shape', '__npgeneric__'), { nil: undefined }),
    binKeys: fc.boolean(),
  })
  .map((r) => {
    const k = (s: string) => (r.binKeys ? bin(s) : s);
    const m = new Map<unknown, unknown>();
    if (r.proto) m.set('__proto__', realSmall);
    if (r.marker !== undefined) m.set(k('__ndarray__'), r.marker);
    if (r.data !== undefined) m.set(k('data'), r.data);
    if (r.dtype !== undefined) m.set(k('dtype'), r.dtype);
    if (r.shape !== undefined) m.set(k('shape'), r.shape);
    if (r.extra !== undefined) m.set(r.extra, [1]);
    return m;
  });
const state = new Map<unknown, unknown>([
  [bin('__ndarray__'), true],
  [bin('data'), new Uint8Array(56)],
  [bin('dtype'), '<f4'],
  [bin('shape'), [14]],
]);

test('array-like maps in the places arrays go: own errors only, and an accepted array holds exactly its bytes', () => {
  fc.assert(
    fc.property(ndLike, ndLike, (a, img) => {
      const r = parse(() => decodeResult(raw.pack(new Map([['actions', a]]))));
      if (r) assert.equal(r.chunk.actions.length, r.chunk.horizon * 14);
      const request = raw.pack(
        new Map<string, unknown>([
          ['state', state],
          ['images', new Map([['cam_high', img]])],
        ]),
      );
      const obs = parse(() => decodeObservation(request));
      assert.ok(imageBytes(obs) <= 3 * request.length);
    }),
    { seed: SEED, numRuns: 3000 },
  );
});

test('structured hostile messages (prototype keys, BigInts, half-arrays): own errors only, Object.prototype untouched', () => {
  fc.assert(
    fc.property(hostileValue.value, (v) => {
      let bytes: Uint8Array;
      try {
        bytes = raw.pack(v);
      } catch {
        return; // msgpackr cannot write it (e.g. a BigInt beyond 64 bits): no peer can send it either
      }
      parse(() => unpackOpenpi(bytes));
      parse(() => decodeResult(bytes));
      parse(() => decodeObservation(bytes));
      assert.equal(Object.getPrototypeOf({}), Object.prototype);
      assert.equal(({} as Record<string, unknown>).actions, undefined);
    }),
    { seed: SEED, numRuns: 2000 },
  );
});

test('deep or huge containers are refused from their headers, not by running out of stack or memory', () => {
  fc.assert(
    fc.property(fc.integer({ min: 33, max: 200_000 }), fc.constantFrom(0x91, 0x81), (depth, head) => {
      // 0x81 needs a key at each level: a fixmap of one entry whose key is 0 and value the next map.
      const one = head === 0x91 ? [0x91] : [0x81, 0x00];
      const bytes = new Uint8Array(depth * one.length + 1);
      for (let i = 0; i < depth; i++) bytes.set(one, i * one.length);
      assert.throws(
        () => unpackOpenpi(bytes),
        (e: unknown) => e instanceof WireFormatError && /nests deeper than 32/.test(e.message),
      );
    }),
    { seed: SEED, numRuns: 40 },
  );
  fc.assert(
    fc.property(
      fc.constantFrom(0xdc, 0xdd, 0xde, 0xdf, 0xc6, 0xdb),
      fc.integer({ min: 1, max: 2 ** 32 - 1 }),
      (head, n) => {
        const wide = head === 0xdc || head === 0xde;
        const bytes = wide
          ? new Uint8Array([head, (n >> 8) & 0xff, n & 0xff])
          : new Uint8Array([head, n >>> 24, (n >>> 16) & 0xff, (n >>> 8) & 0xff, n & 0xff]);
        assert.throws(() => unpackOpenpi(bytes), WireFormatError);
      },
    ),
    { seed: SEED, numRuns: 200 },
  );
});
