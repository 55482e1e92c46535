import { test } from 'node:test';
import assert from 'node:assert/strict';
import { MOTOR_RANGES } from '../../src/rig/motors.js';
import {
  PositionUnwrapper,
  describeStatus,
  isFaultStatus,
  limitAwareStartRule,
  mitFrame,
  packFeedback,
  parseRegisterReply,
  parseSpecial,
  registerReadFrame,
  registerWriteFrame,
  specialFrame,
  statusName,
  unpackFeedback,
  unpackMit,
} from '../../drivers/damiao/protocol.js';

const hex = (b: Uint8Array) => Buffer.from(b).toString('hex').toUpperCase();

test('special frames: FF×7 then FC enable, FD disable, FE zero, FB clear error, to the motor ID', () => {
  assert.equal(hex(specialFrame(3, 'enable').data), 'FFFFFFFFFFFFFFFC');
  assert.equal(hex(specialFrame(3, 'disable').data), 'FFFFFFFFFFFFFFFD');
  assert.equal(hex(specialFrame(3, 'zero').data), 'FFFFFFFFFFFFFFFE');
  assert.equal(hex(specialFrame(3, 'clear-error').data), 'FFFFFFFFFFFFFFFB');
  assert.equal(specialFrame(3, 'enable').id, 3);
  assert.equal(parseSpecial(specialFrame(3, 'clear-error').data), 'clear-error');
});

test('MIT packing, DM4340, p=0 v=0 kp=80 kd=5 τ=0: hand-computed 7F FF 7F F2 8F FF F7 FF', () => {
  // p: floor(12.5·65535/25)=32767=7FFF; v: floor(10·4095/20)=2047=7FF; kp: floor(80·4095/500)=655=28F;
  // kd: floor(5·4095/5)=4095=FFF; τ: floor(28·4095/56)=2047=7FF.
  const f = mitFrame(1, { positionRad: 0, velocityRadS: 0, kp: 80, kd: 5, torqueNm: 0 }, MOTOR_RANGES.DM4340);
  assert.equal(hex(f.data), '7FFF7FF28FFFF7FF');
  assert.equal(f.id, 1);
});

test('MIT packing clamps out-of-range values to the model range', () => {
  const f = mitFrame(4, { positionRad: 100, velocityRadS: -100, kp: 1000, kd: -1, torqueNm: 50 }, MOTOR_RANGES.DM4310);
  assert.equal(hex(f.data), 'FFFF000FFF000FFF');
  const back = unpackMit(f.data, MOTOR_RANGES.DM4310);
  assert.equal(back.positionRad, 12.5);
  assert.equal(back.torqueNm, 10);
});

test('feedback unpacking, DM4340, bytes 11 80 00 80 07 FF 20 1E', () => {
  const fb = unpackFeedback(Uint8Array.from([0x11, 0x80, 0x00, 0x80, 0x07, 0xff, 0x20, 0x1e]), MOTOR_RANGES.DM4340);
  assert.equal(fb.status, 1);
  assert.equal(fb.idNibble, 1);
  assert.ok(Math.abs(fb.positionRad - (32768 * 25) / 65535 + 12.5) < 1e-12);
  assert.ok(Math.abs(fb.velocityRadS - ((2048 * 20) / 4095 - 10)) < 1e-12);
  assert.ok(Math.abs(fb.torqueNm - ((2047 * 56) / 4095 - 28)) < 1e-12);
  assert.equal(fb.mosfetTempC, 32);
  assert.equal(fb.rotorTempC, 30);
  // round trip within one quantisation step
  const again = unpackFeedback(
    packFeedback({ ...fb, positionRad: 1.234, velocityRadS: -2.5, torqueNm: 3.3 }, MOTOR_RANGES.DM4340),
    MOTOR_RANGES.DM4340,
  );
  assert.ok(Math.abs(again.positionRad - 1.234) < 25 / 65535);
  assert.ok(Math.abs(again.velocityRadS + 2.5) < 20 / 4095);
  assert.ok(Math.abs(again.torqueNm - 3.3) < 56 / 4095);
});

test('the same bytes mean different values per model: ranges matter', () => {
  const data = Uint8Array.from([0x11, 0xff, 0xff, 0xff, 0xff, 0xff, 0, 0]);
  assert.equal(unpackFeedback(data, MOTOR_RANGES.DM4310).torqueNm, 10);
  assert.equal(unpackFeedback(data, MOTOR_RANGES.DM6248).torqueNm, 120);
  assert.equal(unpackFeedback(data, MOTOR_RANGES.DM3507).velocityRadS, 50);
  assert.equal(unpackFeedback(data, MOTOR_RANGES.DM8009).torqueNm, 54);
});

test('registers: read PMAX of motor 2 is 7FF [02 00 33 15 00…]; float and integer replies decode', () => {
  const r = registerReadFrame(2, 21);
  assert.equal(r.id, 0x7ff);
  assert.equal(hex(r.data), '0200331500000000');
  // 12.5 as float32 LE = 00 00 48 41
  assert.deepEqual(parseRegisterReply(Uint8Array.from([2, 0, 0x33, 21, 0x00, 0x00, 0x48, 0x41])), {
    motorId: 2,
    op: 0x33,
    rid: 21,
    value: 12.5,
  });
  // register 9 (timeout) is an integer: 8000 = 40 1F 00 00
  assert.equal(hex(registerWriteFrame(5, 9, 8000).data), '05005509401F0000');
  assert.equal(parseRegisterReply(registerWriteFrame(5, 9, 8000).data)?.value, 8000);
  assert.equal(parseRegisterReply(Uint8Array.from([0x11, 0x80, 0, 0x80, 0x07, 0xff, 0x20, 0x1e])), undefined);
});

test('status nibbles have operator-readable names and advice', () => {
  assert.equal(statusName(0x1), 'enabled');
  assert.equal(describeStatus(0xa), 'over-current; check for a collision or a blocked joint');
  assert.match(describeStatus(0xd), /loss of communication/);
  assert.match(statusName(0x5), /unknown status 0x5/);
  assert.equal(isFaultStatus(0x1), false);
  assert.equal(isFaultStatus(0x0), false);
  assert.equal(isFaultStatus(0xe), true);
});

test('position unwrapping is continuous across the ±P_MAX wrap', () => {
  const u = new PositionUnwrapper(12.5);
  assert.equal(u.update(12.0), 12.0 - 2 * Math.PI); // start-up: beyond π shifts by −2π
  assert.ok(Math.abs(u.update(12.4) - (12.4 - 2 * Math.PI)) < 1e-12);
  // wraps to −12.4: really +12.6
  assert.ok(Math.abs(u.update(-12.4) - (12.6 - 2 * Math.PI)) < 1e-9);
  assert.ok(Math.abs(u.toRaw(12.6 - 2 * Math.PI) - -12.4) < 1e-9);
  // and back down
  assert.ok(Math.abs(u.update(12.3) - (12.3 - 2 * Math.PI)) < 1e-9);
});

test('limit-aware start: joint 2 at 3.5 rad (inside its limits) is not shifted; 2π-off readings are', () => {
  const rule = limitAwareStartRule(-0.15, 3.81519);
  assert.equal(new PositionUnwrapper(12.5, rule).update(3.5), 3.5);
  assert.ok(Math.abs(new PositionUnwrapper(12.5, rule).update(3.5 + 2 * Math.PI) - 3.5) < 1e-12);
});
