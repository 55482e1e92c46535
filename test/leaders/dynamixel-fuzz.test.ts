/**
 * Property tests of the Dynamixel 2.0 packet decoder (fast-check, fixed seed) and its checked-in
 * corpus (test/fixtures/fuzz/dynamixel-status.json): any status packet survives any split of the
 * stream and any garbage around it; a flipped bit never yields a wrong packet; random bytes never
 * throw and never make the decoder hold more than one longest packet.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import fc from 'fast-check';
import {
  INST_STATUS,
  PacketDecoder,
  statusPacket,
  type DecoderEvent,
  type Packet,
} from '../../drivers/leaders/dynamixel-protocol.js';
import { PROJECT_ROOT } from '../helpers/cli.js';

const SEED = 2031;
/** Header (4) + id + length (2) + the longest length the decoder accepts. */
const MAX_HELD = 7 + 1024;

function decode(chunks: readonly Uint8Array[]): { packets: Packet[]; events: DecoderEvent[]; held: number } {
  const events: DecoderEvent[] = [];
  const d = new PacketDecoder((e) => events.push(e));
  let held = 0;
  for (const c of chunks) {
    d.push(c);
    held = Math.max(held, (d as unknown as { buf: Uint8Array }).buf.length);
  }
  return { packets: events.flatMap((e) => (e.type === 'packet' ? [e.packet] : [])), events, held };
}

/** Cuts `bytes` at the given points (any order, any count). */
function split(bytes: Uint8Array, cuts: readonly number[]): Uint8Array[] {
  const at = [...new Set(cuts.map((c) => c % (bytes.length + 1)))].sort((a, b) => a - b);
  const out: Uint8Array[] = [];
  let from = 0;
  for (const c of [...at, bytes.length]) {
    out.push(bytes.subarray(from, c));
    from = c;
  }
  return out;
}

test('the checked-in corpus decodes as recorded', () => {
  const corpus = JSON.parse(readFileSync(join(PROJECT_ROOT, 'test/fixtures/fuzz/dynamixel-status.json'), 'utf8')) as {
    name: string;
    hex: string;
    packets: number;
    crcErrors: number;
  }[];
  for (const c of corpus) {
    const r = decode([Buffer.from(c.hex, 'hex')]);
    assert.equal(r.packets.length, c.packets, c.name);
    assert.equal(r.events.filter((e) => e.type === 'crc-error').length, c.crcErrors, c.name);
  }
});

const statusArb = fc.record({
  id: fc.integer({ min: 0, max: 0xfd }),
  error: fc.integer({ min: 0, max: 255 }),
  data: fc.array(fc.oneof(fc.constantFrom(0xff, 0xfd, 0x00), fc.integer({ min: 0, max: 255 })), { maxLength: 40 }),
});

test('any status packet, split anywhere and wrapped in garbage without a header, decodes to itself', () => {
  fc.assert(
    fc.property(
      statusArb,
      fc.array(fc.nat(), { maxLength: 6 }),
      fc.uint8Array({ maxLength: 20 }),
      ({ id, error, data }, cuts, noise) => {
        // Garbage that cannot contain a header start of its own.
        const junk = noise.map((b) => (b === 0xff ? 0x7f : b));
        const bytes = Uint8Array.from([...junk, ...statusPacket(id, error, data), ...junk]);
        const { packets } = decode(split(bytes, cuts));
        assert.equal(packets.length, 1);
        assert.equal(packets[0].id, id);
        assert.equal(packets[0].instruction, INST_STATUS);
        assert.deepEqual([...packets[0].params], [error, ...data]);
      },
    ),
    { seed: SEED, numRuns: 500 },
  );
});

test('a flipped bit anywhere after the header never yields a packet with other contents', () => {
  fc.assert(
    fc.property(statusArb, fc.nat(), fc.integer({ min: 0, max: 7 }), ({ id, error, data }, where, bit) => {
      const bytes = statusPacket(id, error, data);
      const i = 4 + (where % (bytes.length - 4));
      bytes[i] ^= 1 << bit;
      for (const p of decode([bytes]).packets) {
        // CRC-16 catches every single-bit error: anything decoded must be the packet as sent.
        assert.equal(p.id, id);
        assert.deepEqual([...p.params], [error, ...data]);
      }
    }),
    { seed: SEED, numRuns: 500 },
  );
});

test('random bytes never throw and the decoder never holds more than one longest packet', () => {
  fc.assert(
    fc.property(
      fc.array(fc.oneof(fc.uint8Array({ maxLength: 300 }), fc.constant(Uint8Array.from([0xff, 0xff, 0xfd, 0x00]))), {
        maxLength: 30,
      }),
      (chunks) => {
        const { held } = decode(chunks);
        assert.ok(held <= MAX_HELD, `held ${held} bytes`);
      },
    ),
    { seed: SEED, numRuns: 400 },
  );
});
