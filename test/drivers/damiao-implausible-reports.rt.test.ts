// Motor reports whose values no motor produces, injected into the real serialport stack by the
// emulated adapter: dropped and counted by the arm layer, never obeyed; a run of them is a fault.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { stateIndex, type SafetyEvent } from '../../src/rig/contract.js';
import { MOTOR_RANGES } from '../../src/rig/motors.js';
import { tickThrough } from '../rig/contract-suite.js';
import { withActiveEmulatedRig } from '../helpers/emulated-yam.js';
import { createEmulatedYam } from '../../drivers/emulators/in-process.js';
import { packFeedback, STATUS_ENABLED } from '../../drivers/damiao/protocol.js';
import type { CanTransport } from '../../drivers/can/bus.js';

/** Holds the pose for `seconds`; returns the largest distance joint 2 of the left arm read from where it started. */
async function holdFor(y: ReturnType<typeof createEmulatedYam>, seconds: number): Promise<number> {
  const pose = { position: Float64Array.from(y.rig.read().position) };
  const j2 = stateIndex('left', 1);
  let worst = 0;
  const end = y.rig.clock.nowS() + seconds;
  while (y.rig.clock.nowS() < end) {
    y.rig.write(pose);
    await tickThrough(y.rig, y.rig.clock, 0.004);
    worst = Math.max(worst, Math.abs(y.rig.read().position[j2] - pose.position[j2]));
  }
  return worst;
}

/** A well-framed feedback report from left joint 2 (CAN ID 0x12) claiming it is at `positionRad`. */
function forgedJoint2(positionRad: number) {
  const data = packFeedback(
    { status: STATUS_ENABLED, idNibble: 2, positionRad, velocityRadS: 0, torqueNm: 0, mosfetTempC: 30, rotorTempC: 30 },
    MOTOR_RANGES.DM4340,
  );
  return { id: 0x12, extended: false, data };
}

for (const transport of ['damiao', 'slcan'] as CanTransport[]) {
  test(`${transport}: a report with a position step no motor makes in one period is dropped and counted, not obeyed`, async () => {
    await withActiveEmulatedRig({ arms: ['left'], transport }, async (y) => {
      await holdFor(y, 0.05);
      const before = y.rig.read().position[stateIndex('left', 1)];
      y.devices.left!.adapter.injectFrame(forgedJoint2(before + 3));
      const worst = await holdFor(y, 0.1);
      const s = y.rig.read();
      assert.equal(s.mode, 'active');
      assert.deepEqual(s.faults, []);
      // Never, not even for one cycle, did the rig read (and the supervisor act on) the forged position.
      assert.ok(worst < 0.02, `joint 2 read ${worst.toFixed(3)} rad away from where it is`);
      const d = y.rig.diagnostics()[0];
      assert.equal(d.implausibleReports, 1);
      assert.match(
        d.notes.join(' '),
        /Dropped a report from the left arm joint 2 motor with a position step of 3\.\d+ rad in \d+ ms, more than it can move; 1 dropped so far\./,
      );
    });
  });
}

test('three implausible reports in a row from one motor: a latched fault names it and the arm damps', async () => {
  await withActiveEmulatedRig({ arms: ['left', 'right'], transport: 'damiao' }, async (y) => {
    await holdFor(y, 0.05);
    const at = y.rig.read().position[stateIndex('left', 1)];
    // Between two genuine replies the forged ones arrive in a row (the injected bytes are read first).
    y.devices.left!.adapter.injectFrame(forgedJoint2(at + 2));
    y.devices.left!.adapter.injectFrame(forgedJoint2(at - 2));
    y.devices.left!.adapter.injectFrame(forgedJoint2(at + 4));
    await holdFor(y, 0.05);
    const s = y.rig.read();
    assert.equal(s.mode, 'fault');
    assert.match(
      s.faults[0].message,
      /^The left arm joint 2 motor sent 3 reports in a row with impossible values \(last: a position step of .* rad in \d+ ms, more than it can move\); its position cannot be trusted\. Check its encoder and the CAN cable, then activate the rig again\.$/,
    );
    const hold = y.rig.takeSafetyEvents().find((e: SafetyEvent) => e.kind === 'fault-hold');
    assert.match(hold!.message, /Damped the left arm; the right arm holds its pose/);
  });
});

test('damiao: a DLC-0 report on a motor ID is a dropped, counted frame, not eight zero bytes of feedback', async () => {
  await withActiveEmulatedRig({ arms: ['left'], transport: 'damiao' }, async (y) => {
    await holdFor(y, 0.05);
    const before = y.rig.read().position[stateIndex('left', 1)];
    // AA 11 | info 0x00 (DLC 0) | ID 0x12 | eight zero bytes | 55
    y.devices.left!.adapter.injectGarbage(Buffer.from('aa1100120000000000000000000000' + '55', 'hex'));
    const worst = await holdFor(y, 0.1);
    const s = y.rig.read();
    assert.equal(s.mode, 'active', s.faults.map((f) => f.message).join(' '));
    assert.ok(worst < 0.02 && Math.abs(s.position[stateIndex('left', 1)] - before) < 0.02);
    const d = y.rig.diagnostics()[0];
    assert.equal(d.implausibleReports, 1);
    assert.match(
      d.notes.join(' '),
      /Dropped a report from the left arm joint 2 motor with a 0-byte frame \(motors send 8\)/,
    );
  });
});

test('damiao: impossible frames are rejected and counted in the bus stats, the arm keeps holding', async () => {
  await withActiveEmulatedRig({ arms: ['left'], transport: 'damiao' }, async (y) => {
    // DLC 9, then a standard-frame ID 0x812: frame-shaped, impossible.
    y.devices.left!.adapter.injectGarbage(
      Buffer.from('aa1109120000001122334455667788' + '55' + 'aa110812080000' + '1122334455667788' + '55', 'hex'),
    );
    await holdFor(y, 0.1);
    const s = y.rig.read();
    assert.equal(s.mode, 'active');
    assert.equal(y.rig.diagnostics()[0].bus.rejectedFrames, 2);
    assert.equal(y.rig.diagnostics()[0].implausibleReports, 0);
  });
});
