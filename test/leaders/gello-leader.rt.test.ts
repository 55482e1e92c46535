import { test } from 'node:test';
import assert from 'node:assert/strict';
import { RealtimeClock } from '../../src/rig/clocks.js';
import { createEmulatedGello } from '../../drivers/leaders/emulators/gello-emulator.js';
import {
  PacketDecoder,
  crc16,
  encodePacket,
  statusPacket,
  syncReadPacket,
  type DecoderEvent,
} from '../../drivers/leaders/dynamixel-protocol.js';
import { trajectoryMotion } from '../../drivers/leaders/emulators/operator-hand.js';

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

test('Dynamixel 2.0: the CRC of the Robotis ping example, sync read framing, byte stuffing round trip', () => {
  assert.equal(crc16(Uint8Array.from([0xff, 0xff, 0xfd, 0x00, 0x01, 0x03, 0x00, 0x01])), 0x4e19);
  assert.equal(Buffer.from(encodePacket(1, 0x01, [])).toString('hex'), 'fffffd0001030001194e');
  const sr = syncReadPacket(128, 8, [1, 2, 3, 4, 5, 6, 7]);
  assert.equal(Buffer.from(sr.subarray(0, 12)).toString('hex'), 'fffffd00fe0e00828000' + '0800');
  // Data holding the header bytes is stuffed on the wire and comes back as it was.
  const data = [0xff, 0xff, 0xfd, 0x00, 1, 2, 3, 4];
  const pkt = statusPacket(3, 0, data);
  const got: DecoderEvent[] = [];
  const dec = new PacketDecoder((e) => got.push(e));
  dec.push(Uint8Array.from([0x11, 0x22, ...pkt.subarray(0, 5)]));
  dec.push(pkt.subarray(5));
  assert.deepEqual(
    got.map((e) => e.type),
    ['garbage', 'packet'],
  );
  const p = got[1].type === 'packet' ? got[1].packet : undefined;
  assert.deepEqual(Array.from(p!.params), [0, ...data]);
  // A flipped CRC byte is reported, never delivered.
  const bad = Uint8Array.from(pkt);
  bad[bad.length - 1] ^= 1;
  got.length = 0;
  dec.push(bad);
  assert.deepEqual(
    got.map((e) => e.type),
    ['crc-error'],
  );
});

test('the GELLO leader reads its servos through serialport; gripper flipped to YAM (0 closed, 1 open)', async () => {
  const clock = new RealtimeClock();
  const q = [0.3, 0.8, 0.5, -0.2, 0.1, 0.4, 0.25, 0, 0.02, 0.02, 0, 0, 0, 1];
  const emu = createEmulatedGello({ clock, arms: ['left'], hand: trajectoryMotion([{ t: 0, q }]) });
  await emu.leader.configure();
  for (let i = 0; i < 20; i++) {
    emu.leader.poll(clock.nowS());
    await sleep(4);
  }
  const r = emu.leader.latest();
  for (let j = 0; j < 6; j++)
    assert.ok(Math.abs(r.position[j] - q[j]) <= Math.PI / 2048, `joint ${j + 1}: ${r.position[j]} vs ${q[j]}`);
  assert.ok(Math.abs(r.position[6] - 0.25) < 0.01, `gripper ${r.position[6]} should read YAM 0.25 (GELLO 0.75 closed)`);
  assert.ok(r.samples[0] >= 5);
  await emu.leader.close();
});

test('GELLO: CRC errors and garbage are dropped and counted; a flood of them makes the samples untrusted; silence is named at configure', async () => {
  const clock = new RealtimeClock();
  const emu = createEmulatedGello({ clock, arms: ['right'] });
  emu.inject({ kind: 'silence' });
  await assert.rejects(
    emu.leader.configure(),
    /right GELLO leader .* did not answer a Sync Read \(silent servos 1, 2, 3, 4, 5, 6, 7\)/,
  );
  await emu.leader.close();
  const emu2 = createEmulatedGello({ clock, arms: ['right'] });
  await emu2.leader.configure();
  emu2.inject({ kind: 'crc-errors', packets: 3 });
  emu2.inject({ kind: 'garbage', bytes: 40 });
  for (let i = 0; i < 10; i++) {
    emu2.leader.poll(clock.nowS());
    await sleep(5);
  }
  const d = emu2.leader.diagnostics()[0];
  assert.equal(d.crcErrors, 3);
  assert.equal(d.garbageBytes, 40);
  assert.equal(emu2.leader.latest().problem[1], undefined, 'a few bad packets are noise');
  emu2.inject({ kind: 'crc-errors', packets: 300 });
  for (let i = 0; i < 60; i++) {
    emu2.leader.poll(clock.nowS());
    await sleep(3);
  }
  assert.match(emu2.leader.latest().problem[1] ?? '', /keeps sending corrupt data/);
  await emu2.leader.close();
});
