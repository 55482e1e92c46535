/**
 * Damiao USB-CAN framing has no checksum: the decoders must resynchronise after every rejected
 * candidate, so garbage and truncated frames cost only themselves, and must not take a plausible-
 * looking candidate for a frame when its fixed fields say otherwise.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import {
  DamiaoAdapterDecoder,
  DamiaoHostDecoder,
  encodeDamiaoRx,
  encodeDamiaoTx,
  type DamiaoAdapterEvent,
  type DamiaoHostEvent,
} from '../../drivers/can/damiao-usb-codec.js';
import { canFrame, type CanFrame } from '../../drivers/can/frame.js';
import { mitFrame } from '../../drivers/damiao/protocol.js';
import { MOTOR_RANGES } from '../../src/rig/motors.js';

const hex = (b: Uint8Array) => Buffer.from(b).toString('hex');
function hostFrames(chunks: Uint8Array[]): CanFrame[] {
  const out: CanFrame[] = [];
  const d = new DamiaoHostDecoder((e: DamiaoHostEvent) => e.type === 'frame' && out.push(e.frame));
  for (const c of chunks) d.push(c);
  return out;
}
function adapterFrames(chunks: Uint8Array[]): CanFrame[] {
  const out: CanFrame[] = [];
  const d = new DamiaoAdapterDecoder((e: DamiaoAdapterEvent) => e.type === 'frame' && out.push(e.frame));
  for (const c of chunks) d.push(c);
  return out;
}

test('a truncated transmit request costs only itself: the whole request after it decodes, at every cut', () => {
  const first = encodeDamiaoTx(
    mitFrame(2, { positionRad: 0.5, velocityRadS: 0, kp: 30, kd: 1, torqueNm: 0 }, MOTOR_RANGES.DM4340),
  );
  const next = encodeDamiaoTx(
    mitFrame(3, { positionRad: -0.25, velocityRadS: 0, kp: 30, kd: 1, torqueNm: 0 }, MOTOR_RANGES.DM4340),
  );
  const lost: number[] = [];
  for (let cut = 1; cut < first.length; cut++) {
    const got = adapterFrames([Buffer.concat([first.subarray(0, cut), next])]);
    if (got.length !== 1 || got[0].id !== 3 || hex(got[0].data) !== hex(next.subarray(21, 29))) lost.push(cut);
  }
  assert.deepEqual(lost, [], 'cuts after which the next whole request was lost or a bogus one decoded');
});

test('a stray header byte does not lose the report after it, even when that report ends in 0x55 (a rotor at 85 °C)', () => {
  const report = encodeDamiaoRx(canFrame(0x11, [0x11, 0x80, 0x00, 0x80, 0x07, 0xff, 0x28, 0x55]));
  const frames = hostFrames([Buffer.concat([Buffer.from([0xaa]), report])]);
  assert.equal(frames.length, 1);
  assert.equal(frames[0].id, 0x11);
  assert.equal(hex(frames[0].data), '1180008007ff2855');
  // A truncated report followed by a whole one: at every cut the whole one survives.
  const lost: number[] = [];
  for (let cut = 1; cut < report.length; cut++) {
    const got = hostFrames([Buffer.concat([report.subarray(0, cut), report])]);
    if (got.length !== 1 || hex(got[0].data) !== '1180008007ff2855') lost.push(cut);
  }
  assert.deepEqual(lost, []);
});

test('a DLC-0 report is a frame with no data, not eight zero bytes; DLC over 8 and IDs beyond 11 bits are refused', () => {
  const zero = Buffer.from('aa1100110000000000000000000000' + '55', 'hex');
  const frames = hostFrames([zero]);
  assert.equal(frames.length, 1);
  assert.equal(frames[0].data.length, 0);
  const dlc9 = Buffer.from('aa1109110000001122334455667788' + '55', 'hex');
  const wideId = Buffer.from('aa110811080000' + '1122334455667788' + '55', 'hex'); // standard frame, ID 0x811
  assert.deepEqual(hostFrames([dlc9, wideId]), []);
  // ...and the decoder counts them as rejected candidates.
  const events: DamiaoHostEvent[] = [];
  const d = new DamiaoHostDecoder((e) => events.push(e));
  d.push(Buffer.concat([dlc9, wideId]));
  assert.equal(events.filter((e) => e.type === 'rejected').length, 2);
});

test('random bytes fake (almost) no frames: under one per 10 MB on the host side', () => {
  let state = 12345;
  const rand = () => (state = (Math.imul(state, 1103515245) + 12345) >>> 0) >>> 24;
  const chunk = new Uint8Array(1 << 20);
  let fakes = 0;
  const d = new DamiaoHostDecoder((e) => e.type === 'frame' && fakes++);
  for (let mb = 0; mb < 10; mb++) {
    for (let i = 0; i < chunk.length; i++) chunk[i] = rand();
    d.push(chunk);
  }
  assert.ok(fakes <= 1, `${fakes} frames decoded from 10 MB of random bytes`);
});

test('a truncated report runs into a whole one whose data holds 0x55: the whole one survives at every cut', () => {
  for (let at = 0; at < 8; at++) {
    const data = [0x11, 0x7f, 0xf0, 0x80, 0x07, 0xff, 0x28, 0x30];
    data[at] = 0x55;
    const report = encodeDamiaoRx(canFrame(0x12, data));
    const lost: number[] = [];
    for (let cut = 1; cut < report.length; cut++) {
      const got = hostFrames([Buffer.concat([report.subarray(0, cut), report])]);
      if (got.length !== 1 || hex(got[0].data) !== hex(Uint8Array.from(data))) lost.push(cut);
    }
    assert.deepEqual(lost, [], `data byte ${at} = 0x55`);
  }
});

test('a real report whose data looks like a report header is delivered once the next bytes arrive, not rejected', () => {
  // DLC 3 with data AA 11 00: padded with zeros, bytes 7..13 read as a plausible header for ID 0.
  const odd = encodeDamiaoRx(canFrame(0x00, [0xaa, 0x11, 0x00]));
  const next = encodeDamiaoRx(canFrame(0x12, [1, 2, 3, 4, 5, 6, 7, 8]));
  const seen: string[] = [];
  const d = new DamiaoHostDecoder((e) => e.type === 'frame' && seen.push(hex(e.frame.data)));
  d.push(odd);
  assert.deepEqual(seen, [], 'waits: it could be a truncated report running into the next one');
  d.push(next);
  assert.deepEqual(seen, ['aa1100', '0102030405060708']);
});
