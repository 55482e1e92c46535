// A motor's reply is judged against its V_MAX over the time the rig itself measured: from when it
// sent the command the last trusted reply answered. A rig that is descheduled between sending a
// command and reading its reply (a busy machine, a GC pause) reads that reply late and the next one
// on time, so the two look closer in time than the motor's samples were; judged on read times
// alone, a joint that is really moving then reads as an encoder fault.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { SteppedClock } from '../../src/rig/clocks.js';
import { stateIndex } from '../../src/rig/contract.js';
import { createEmulatedYam } from '../../drivers/emulators/in-process.js';
import type { MotorPlant } from '../../drivers/emulators/emulated-motor.js';
import type { YamBusEmulator } from '../../drivers/emulators/yam-bus-emulator.js';

const TURN_RAD_S = 4;
const PERIOD_S = 0.004;

/** The world turning joint 1 at a steady TURN_RAD_S from `startS` on (an arm being back-driven); every other joint stays put. */
class TurningJoint1 implements MotorPlant {
  bus: YamBusEmulator | undefined;
  startS = Infinity;
  advanceTo(nowS: number): void {
    const moving = nowS > this.startS;
    this.bus?.motors.get(1)?.setMeasured(moving ? TURN_RAD_S * (nowS - this.startS) : 0, moving ? TURN_RAD_S : 0, 0);
  }
}

/** Event-loop turns for the bytes the last tick set off (commands in, replies back) to be read. */
async function turns(): Promise<void> {
  for (let i = 0; i < 3; i++) await new Promise((resolve) => setImmediate(resolve));
}

test('a rig descheduled for 100 ms between sending a command and reading its reply does not take a turning joint for an encoder fault', async () => {
  const clock = new SteppedClock();
  const plant = new TurningJoint1();
  const y = createEmulatedYam({ arms: ['left'], clock, emulator: { plant } });
  plant.bus = y.devices.left!.bus;
  const rig = y.rig;
  const j1 = stateIndex('left', 0);
  const cycle = async (): Promise<void> => {
    rig.write({ position: Float64Array.from(rig.read().position) });
    rig.tick();
    await turns();
    await clock.waitUntil(clock.nowS() + PERIOD_S);
  };
  try {
    await rig.configure();
    await rig.activate();
    for (let i = 0; i < 10; i++) await cycle();
    plant.startS = clock.nowS();
    for (let i = 0; i < 10; i++) await cycle();
    assert.deepEqual(rig.read().faults, [], 'turning at 4 rad/s on time is plausible');

    // The command goes out and the motor answers at once; the rig is then descheduled 100 ms
    // before it reads that answer.
    rig.write({ position: Float64Array.from(rig.read().position) });
    rig.tick();
    assert.equal(
      y.devices.left!.bus.framesReceived,
      y.buses.left!.stats.framesOut,
      'the motors had the command before the delay',
    );
    await clock.waitUntil(clock.nowS() + 0.1);
    await turns();
    for (let i = 0; i < 10; i++) await cycle();

    const s = rig.read();
    assert.equal(s.mode, 'active', s.faults.map((f) => f.message).join(' '));
    assert.deepEqual(s.faults, []);
    const d = rig.diagnostics()[0];
    assert.equal(d.implausibleReports, 0, d.notes.join(' '));
    // And the reading follows the joint (a frozen or dropped one would lag by the whole 0.1 s turn, 0.4 rad).
    const turnedTo = TURN_RAD_S * (clock.nowS() - plant.startS);
    assert.ok(
      Math.abs(s.position[j1] - turnedTo) <= TURN_RAD_S * 3 * PERIOD_S,
      `joint 1 reads ${s.position[j1].toFixed(3)} rad, the world turned it to ${turnedTo.toFixed(3)} rad`,
    );
  } finally {
    await rig.close();
    for (const dev of Object.values(y.devices)) dev?.adapter.dispose();
  }
});
