import { test } from 'node:test';
import assert from 'node:assert/strict';
import {
  SlcanAdapterDecoder,
  SlcanHostDecoder,
  encodeSlcanFrame,
  type SlcanHostEvent,
} from '../../drivers/can/slcan-codec.js';
import {
  DamiaoAdapterDecoder,
  DamiaoHostDecoder,
  encodeDamiaoRx,
  encodeDamiaoTx,
  type DamiaoHostEvent,
} from '../../drivers/can/damiao-usb-codec.js';
import { canFrame } from '../../drivers/can/frame.js';
import { specialFrame } from '../../drivers/damiao/protocol.js';

const hex = (b: Uint8Array) => Buffer.from(b).toString('hex').toUpperCase();

test('SLCAN: enabling motor 1 is the reference line t0018FFFFFFFFFFFFFFFC', () => {
  assert.equal(encodeSlcanFrame(specialFrame(1, 'enable')).toString('latin1'), 't0018FFFFFFFFFFFFFFFC\r');
  assert.equal(encodeSlcanFrame(canFrame(0x12345678, [0xab], true)).toString('latin1'), 'T123456781AB\r');
});

test('SLCAN host decoder: frames, OK, transmit OK, BEL error, and resync after garbage and truncation', () => {
  const events: SlcanHostEvent[] = [];
  const d = new SlcanHostDecoder((e) => events.push(e));
  // a truncated frame line, random junk, then good lines split across chunks
  d.push(Buffer.from('t01180011\r', 'latin1')); // says 8 bytes, has 2: malformed
  d.push(Buffer.from('\x13\xff garbage that is far too long to be any slcan line at all\r', 'latin1'));
  d.push(Buffer.from('z\r\rt01181180008', 'latin1'));
  d.push(Buffer.from('007FF201E\r\x07', 'latin1'));
  d.push(Buffer.from('t01181180008007FF201E1234\r', 'latin1')); // with timestamp
  const kinds = events.map((e) => e.type);
  assert.deepEqual(kinds, ['garbage', 'garbage', 'ok', 'ok', 'frame', 'error', 'frame']);
  const frame = events[4] as Extract<SlcanHostEvent, { type: 'frame' }>;
  assert.equal(frame.frame.id, 0x11);
  assert.equal(hex(frame.frame.data), '1180008007FF201E');
  assert.deepEqual(
    [events[2], events[3]],
    [
      { type: 'ok', transmitted: true },
      { type: 'ok', transmitted: false },
    ],
  );
});

test('SLCAN adapter decoder tells frames from commands', () => {
  const seen: string[] = [];
  const d = new SlcanAdapterDecoder((e) =>
    seen.push(e.type === 'frame' ? `frame ${e.frame.id}` : e.type === 'command' ? `cmd ${e.text}` : 'garbage'),
  );
  d.push(Buffer.from('C\rS8\rO\rt0018FFFFFFFFFFFFFFFC\rtZZZ\r', 'latin1'));
  assert.deepEqual(seen, ['cmd C', 'cmd S8', 'cmd O', 'frame 1', 'garbage']);
});

test('Damiao USB-CAN: the 30-byte transmit frame for enabling motor 1', () => {
  assert.equal(
    hex(encodeDamiaoTx(specialFrame(1, 'enable'))),
    '55AA1E03010000000A000000000100000000080000FFFFFFFFFFFFFFFC00',
  );
  assert.equal(encodeDamiaoTx(specialFrame(1, 'enable')).length, 30);
});

test('Damiao USB-CAN host decoder: resyncs after garbage and a truncated frame, reads ID little-endian', () => {
  const events: DamiaoHostEvent[] = [];
  const d = new DamiaoHostDecoder((e) => events.push(e));
  const good = Buffer.from('AA110811000000' + '1180008007FF201E' + '55', 'hex');
  const truncated = good.subarray(0, 9);
  d.push(Buffer.concat([Buffer.from([0x01, 0x55, 0xaa]), truncated]));
  d.push(good.subarray(0, 5));
  d.push(good.subarray(5));
  const frames = events.filter((e) => e.type === 'frame');
  assert.equal(frames.length, 1);
  assert.equal(frames[0].type === 'frame' && frames[0].frame.id, 0x11);
  assert.equal(frames[0].type === 'frame' && hex(frames[0].frame.data), '1180008007FF201E');
  assert.ok(events.some((e) => e.type === 'garbage'));
});

test('Damiao USB-CAN adapter decoder reads what the host encoder writes, and the host reads what the adapter writes', () => {
  const got: number[] = [];
  const a = new DamiaoAdapterDecoder((e) => e.type === 'frame' && got.push(e.frame.id));
  a.push(
    Buffer.concat([
      Buffer.from([0x55, 0x00]),
      encodeDamiaoTx(canFrame(0x7ff, [2, 0, 0x33, 21, 0, 0, 0, 0])),
      encodeDamiaoTx(canFrame(3, [1, 2, 3, 4, 5, 6, 7, 8])),
    ]),
  );
  assert.deepEqual(got, [0x7ff, 3]);
  const back: number[] = [];
  const h = new DamiaoHostDecoder((e) => e.type === 'frame' && back.push(e.frame.id));
  h.push(encodeDamiaoRx(canFrame(0x12, [0x12, 0, 0, 0, 0, 0, 0, 0])));
  assert.deepEqual(back, [0x12]);
});
