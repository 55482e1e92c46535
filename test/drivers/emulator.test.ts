// The emulated motors obey the MIT law with the torque clamped per motor, answer registers, and
// drop into damping when their watchdog (register 9) expires.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { YamBusEmulator } from '../../drivers/emulators/yam-bus-emulator.js';
import { MOTOR_RANGES } from '../../src/rig/motors.js';
import {
  mitFrame,
  parseRegisterReply,
  registerReadFrame,
  registerWriteFrame,
  specialFrame,
  unpackFeedback,
} from '../../drivers/damiao/protocol.js';

function manualTime() {
  let t = 0;
  return { now: () => t, advance: (s: number) => (t += s) };
}

test("MIT law: a large position error saturates at the motor's TMAX (DM4310 10 N·m, DM4340 28 N·m)", () => {
  const time = manualTime();
  const bus = new YamBusEmulator({ nowS: time.now });
  for (const [id, model] of [
    [5, 'DM4310'],
    [2, 'DM4340'],
  ] as const) {
    const start = bus.motor(id).positionRad;
    bus.handle(specialFrame(id, 'enable'));
    bus.handle(mitFrame(id, { positionRad: 1.0, velocityRadS: 0, kp: 500, kd: 0, torqueNm: 0 }, MOTOR_RANGES[model]));
    time.advance(0.02);
    const [reply] = bus.handle(
      mitFrame(id, { positionRad: 1.0, velocityRadS: 0, kp: 500, kd: 0, torqueNm: 0 }, MOTOR_RANGES[model]),
    );
    const fb = unpackFeedback(reply.data, MOTOR_RANGES[model]);
    assert.equal(reply.id, id + 0x10);
    assert.equal(fb.status, 1);
    assert.ok(Math.abs(fb.torqueNm - MOTOR_RANGES[model].tMaxNm) < 0.02, `${model} torque ${fb.torqueNm}`);
    assert.ok(fb.positionRad > start + 0.02, `the joint moved toward the target (${start} → ${fb.positionRad})`);
  }
});

test('registers: read answers on ID + 0x10, a write sticks, an unknown motor stays silent', () => {
  const bus = new YamBusEmulator({ nowS: () => 0 });
  const [pmax] = bus.handle(registerReadFrame(3, 21));
  assert.equal(pmax.id, 0x13);
  assert.equal(parseRegisterReply(pmax.data)?.value, 12.5);
  bus.handle(registerWriteFrame(3, 9, 4000));
  assert.equal(parseRegisterReply(bus.handle(registerReadFrame(3, 9))[0].data)?.value, 4000);
  assert.deepEqual(bus.handle(registerReadFrame(9, 21)), []);
});

test('motor watchdog: no command for longer than register 9 (8000 × 50 µs = 400 ms) → status 0xD and damping', () => {
  const time = manualTime();
  const bus = new YamBusEmulator({ nowS: time.now });
  bus.handle(specialFrame(1, 'enable'));
  bus.handle(mitFrame(1, { positionRad: 0, velocityRadS: 0, kp: 80, kd: 5, torqueNm: 0 }, MOTOR_RANGES.DM4340));
  time.advance(0.39);
  bus.motor(1).advance(time.now());
  assert.equal(bus.motor(1).status, 1);
  time.advance(0.02);
  bus.motor(1).advance(time.now());
  assert.equal(bus.motor(1).status, 0xd);
  // Commands are ignored until clear-error + enable.
  bus.handle(mitFrame(1, { positionRad: 1, velocityRadS: 0, kp: 80, kd: 5, torqueNm: 0 }, MOTOR_RANGES.DM4340));
  assert.equal(bus.motor(1).status, 0xd);
  bus.handle(specialFrame(1, 'clear-error'));
  assert.equal(bus.motor(1).status, 0);
});

test('typed faults: a duplicate ID answers twice on one ID and never on its own; ignored register writes neither stick nor answer', () => {
  const bus = new YamBusEmulator({ nowS: () => 0 });
  bus.inject({ kind: 'duplicate-id', motor: 4, answersAs: 3 });
  const replies = bus.handle(specialFrame(3, 'disable'));
  assert.deepEqual(
    replies.map((r) => r.id),
    [0x13, 0x13],
  );
  assert.deepEqual(
    replies.map((r) => unpackFeedback(r.data, MOTOR_RANGES.DM4340).idNibble),
    [3, 3],
  );
  assert.deepEqual(bus.handle(specialFrame(4, 'disable')), []);
  assert.equal(bus.handle(registerReadFrame(3, 21)).length, 2);
  bus.inject({ kind: 'register-writes-ignored', motor: 5 });
  assert.deepEqual(bus.handle(registerWriteFrame(5, 9, 4000)), []);
  assert.equal(bus.motor(5).registers.get(9), 8000);
});

test('typed faults: refuse-enable, a fault that survives clear-error until healed, and a power cycle that leaves the motor disabled', () => {
  const time = manualTime();
  const bus = new YamBusEmulator({ nowS: time.now });
  bus.inject({ kind: 'refuse-enable', motor: 2 });
  bus.handle(specialFrame(2, 'enable'));
  assert.equal(bus.motor(2).status, 0);
  bus.inject({ kind: 'status', motor: 1, status: 0xc, survivesClearError: true });
  bus.handle(specialFrame(1, 'clear-error'));
  assert.equal(bus.motor(1).status, 0xc);
  bus.motor(1).healFault();
  bus.handle(specialFrame(1, 'clear-error'));
  assert.equal(bus.motor(1).status, 0);
  bus.handle(specialFrame(6, 'enable'));
  bus.handle(mitFrame(6, { positionRad: 0, velocityRadS: 0, kp: 30, kd: 1, torqueNm: 0 }, MOTOR_RANGES.DM4310));
  assert.ok(bus.motor(6).lastCommand.kp > 29);
  bus.inject({ kind: 'power-cycle', motor: 6 });
  const [fb] = bus.handle(
    mitFrame(6, { positionRad: 0, velocityRadS: 0, kp: 30, kd: 1, torqueNm: 0 }, MOTOR_RANGES.DM4310),
  );
  assert.equal(unpackFeedback(fb.data, MOTOR_RANGES.DM4310).status, 0, 'its feedback says disabled');
  assert.equal(bus.motor(6).lastCommand.kp, 0, 'no command in force after the power cycle');
});

test('onMit reports every MIT frame a motor receives, decoded, and whether it took it', () => {
  const bus = new YamBusEmulator({ nowS: () => 0 });
  const seen: [number, boolean][] = [];
  const stop = bus.motor(5).onMit((c, accepted) => seen.push([Math.round(c.kp), accepted]));
  bus.handle(mitFrame(5, { positionRad: 0, velocityRadS: 0, kp: 40, kd: 1, torqueNm: 0 }, MOTOR_RANGES.DM4310));
  bus.handle(specialFrame(5, 'enable'));
  bus.handle(mitFrame(5, { positionRad: 0, velocityRadS: 0, kp: 0, kd: 1, torqueNm: 0 }, MOTOR_RANGES.DM4310));
  stop();
  bus.handle(mitFrame(5, { positionRad: 0, velocityRadS: 0, kp: 40, kd: 1, torqueNm: 0 }, MOTOR_RANGES.DM4310));
  assert.deepEqual(seen, [
    [40, false],
    [0, true],
  ]);
});
