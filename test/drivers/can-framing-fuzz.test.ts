/**
 * Property tests of the byte-level CAN framings (fast-check): Damiao USB-CAN both directions and
 * SLCAN host side. Random bytes never throw and never produce an impossible frame; valid frames inside
 * garbage, split at any chunk boundary, still decode in order; the decoders' buffers stay fixed.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import fc from 'fast-check';
import {
  DamiaoAdapterDecoder,
  DamiaoHostDecoder,
  encodeDamiaoRx,
  encodeDamiaoTx,
} from '../../drivers/can/damiao-usb-codec.js';
import { SlcanHostDecoder, encodeSlcanFrame } from '../../drivers/can/slcan-codec.js';
import type { CanFrame } from '../../drivers/can/frame.js';

/** Fixed, so a failure reproduces. */
const SEED = 3142;

type Decoder = { push(chunk: Uint8Array): void };
const decoders = {
  host: (out: CanFrame[]) => new DamiaoHostDecoder((e) => e.type === 'frame' && out.push(e.frame)),
  adapter: (out: CanFrame[]) => new DamiaoAdapterDecoder((e) => e.type === 'frame' && out.push(e.frame)),
  slcan: (out: CanFrame[]) => new SlcanHostDecoder((e) => e.type === 'frame' && out.push(e.frame)),
} satisfies Record<string, (out: CanFrame[]) => Decoder>;
type Kind = keyof typeof decoders;
const encoders: Record<Kind, (f: CanFrame) => Uint8Array> = {
  host: encodeDamiaoRx,
  adapter: encodeDamiaoTx,
  slcan: encodeSlcanFrame,
};

function possible(f: CanFrame): boolean {
  return f.data.length <= 8 && Number.isInteger(f.id) && f.id >= 0 && f.id <= (f.extended ? 0x1fffffff : 0x7ff);
}

/** Cuts `bytes` at the given points (any boundaries, including inside a frame). */
function split(bytes: Uint8Array, cuts: number[]): Uint8Array[] {
  const at = [...new Set(cuts.map((c) => c % (bytes.length + 1)))].sort((a, b) => a - b);
  const out: Uint8Array[] = [];
  let prev = 0;
  for (const c of [...at, bytes.length]) {
    out.push(bytes.subarray(prev, c));
    prev = c;
  }
  return out;
}

function decode(kind: Kind, chunks: Uint8Array[]): CanFrame[] {
  const out: CanFrame[] = [];
  const d = decoders[kind](out);
  for (const c of chunks) d.push(c);
  return out;
}

const key = (f: CanFrame) => `${f.extended ? 'x' : 's'}${f.id}:${Buffer.from(f.data).toString('hex')}`;

/** Standard-ID motor-bus frames: IDs whose low byte is not 0x55 (a report ID of 0x55 could pass for a trailer; see the codec). */
const stdFrame = fc.record({
  id: fc.integer({ min: 0, max: 0x7ff }).filter((id) => (id & 0xff) !== 0x55),
  extended: fc.constant(false),
  data: fc.uint8Array({ minLength: 1, maxLength: 8 }),
});

/** Garbage that looks like the protocol: random bytes, stray header/trailer bytes, and frames cut short. */
const garbageFor = (kind: Kind) =>
  fc
    .array(
      fc.oneof(
        fc.uint8Array({ maxLength: 24 }),
        fc.constantFrom(
          Uint8Array.of(0xaa),
          Uint8Array.of(0x55),
          Uint8Array.of(0x55, 0xaa, 0x1e),
          Uint8Array.of(0xaa, 0x11, 0x08),
        ),
        fc.tuple(stdFrame, fc.nat()).map(([f, n]) => {
          const b = encoders[kind](f);
          return b.subarray(0, n % b.length);
        }),
      ),
      { maxLength: 4 },
    )
    .map((parts) => Buffer.concat(parts));

for (const kind of ['host', 'adapter', 'slcan'] as Kind[]) {
  test(`${kind}: random bytes never throw and never decode an impossible frame; the buffer stays its size`, () => {
    fc.assert(
      fc.property(fc.uint8Array({ maxLength: 4096 }), fc.array(fc.nat(), { maxLength: 8 }), (bytes, cuts) => {
        const out: CanFrame[] = [];
        const d = decoders[kind](out);
        for (const c of split(bytes, cuts)) d.push(c);
        for (const f of out) assert.ok(possible(f), `impossible frame ${key(f)}`);
        const buf =
          (d as unknown as { scanner?: { buf: Buffer }; line?: Buffer }).scanner?.buf ??
          (d as unknown as { line: Buffer }).line;
        assert.ok(buf.length <= 120, `decoder buffer grew to ${buf.length}`);
      }),
      { seed: SEED, numRuns: 400 },
    );
  });

  test(`${kind}: valid frames inside random garbage, split anywhere, all decode and in order`, () => {
    fc.assert(
      fc.property(
        fc.array(fc.tuple(garbageFor(kind), stdFrame), { minLength: 1, maxLength: 6 }),
        garbageFor(kind),
        fc.array(fc.nat(), { maxLength: 10 }),
        (pairs, tail, cuts) => {
          // SLCAN resynchronises at line ends: garbage is a line of its own there.
          const sep = kind === 'slcan' ? [Uint8Array.of(0x0d)] : [];
          // The next frame after everything: a frame whose data looks like a header inside it may wait
          // for the bytes after it (on a live bus, the next report) before it is told from a truncated one.
          const next = encoders[kind]({ id: 0x11, extended: false, data: Uint8Array.of(1, 2, 3, 4, 5, 6, 7, 8) });
          const stream = Buffer.concat(
            pairs.flatMap(([garbage, f]) => [garbage, ...sep, encoders[kind](f)]).concat([tail, ...sep, next]),
          );
          const got = decode(kind, split(stream, cuts)).map(key);
          const want = pairs.map(([, f]) => key(f));
          // Every sent frame appears, in order; garbage may add frames of its own (no checksum), never remove one.
          let i = 0;
          for (const g of got) if (i < want.length && g === want[i]) i++;
          assert.equal(i, want.length, `decoded ${got.length} frames, found ${i} of ${want.length} sent ones in order`);
        },
      ),
      { seed: SEED, numRuns: 800 },
    );
  });
}

test('damiao: a stream of valid reports decodes the same whatever the chunking, and a mutated byte costs at most its neighbours', () => {
  fc.assert(
    fc.property(
      fc.array(stdFrame, { minLength: 3, maxLength: 10 }),
      fc.nat(),
      fc.integer({ min: 0, max: 255 }),
      fc.array(fc.nat(), { maxLength: 6 }),
      (frames, at, value, cuts) => {
        // Ended by one more report, as on a live bus: a report whose data looks like a header inside it
        // waits for the bytes after it before it is told from a truncated one (found by this property).
        const next: CanFrame = { id: 0x11, extended: false, data: Uint8Array.of(1, 2, 3, 4, 5, 6, 7, 8) };
        const stream = Buffer.concat([...frames, next].map((f) => encodeDamiaoRx(f)));
        assert.deepEqual(decode('host', split(stream, cuts)).map(key), [...frames, next].map(key));
        // A byte of the sent reports, not of the closing one.
        const hit = at % (stream.length - encodeDamiaoRx(next).length);
        const mutated = Buffer.from(stream);
        mutated[hit] = value;
        const got = decode('host', [mutated]).map(key);
        // Frames not containing the changed byte survive; the one that does may be lost or changed
        // (no checksum), and the one after it must still decode.
        const lostIndex = Math.floor(hit / 16);
        const survivors = frames.filter((_, i) => i !== lostIndex).map(key);
        let i = 0;
        for (const g of got) if (i < survivors.length && g === survivors[i]) i++;
        assert.equal(i, survivors.length, `a byte changed in frame ${lostIndex} lost another frame`);
      },
    ),
    { seed: SEED, numRuns: 1500 },
  );
});
