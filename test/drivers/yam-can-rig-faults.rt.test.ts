// Every fault in issue 4's bad-input list, against YamCanRig on the byte-level emulator: each test
// shows the safe state the rig ends in and the message an operator reads.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { RigError, stateIndex, type SafetyEvent } from '../../src/rig/contract.js';
import { tickThrough } from '../rig/contract-suite.js';
import { withActiveEmulatedRig } from '../helpers/emulated-yam.js';
import { createEmulatedYam } from '../../drivers/emulators/in-process.js';
import { STATUS_LOST_COMMUNICATION } from '../../drivers/damiao/protocol.js';

/** Runs the rig holding its pose (as the control loop would) for `seconds`. */
async function holdFor(y: ReturnType<typeof createEmulatedYam>, seconds: number): Promise<void> {
  const pose = { position: Float64Array.from(y.rig.read().position) };
  const end = y.rig.clock.nowS() + seconds;
  while (y.rig.clock.nowS() < end) {
    y.rig.write(pose);
    await tickThrough(y.rig, y.rig.clock, 0.004);
  }
}

function faultHold(events: SafetyEvent[]): SafetyEvent | undefined {
  return events.find((e) => e.kind === 'fault-hold');
}

test('garbage bytes: a burst is dropped and the arms keep holding; a stream of garbage is a fault that damps the arm', async () => {
  await withActiveEmulatedRig({ arms: ['left', 'right'] }, async (y) => {
    y.devices.left!.adapter.injectGarbage();
    await holdFor(y, 0.1);
    // Not a fault. (A 'holding' here would be the watchdog after an event-loop stall of this
    // loaded machine — seen once in a full run — not the garbage; the claim is "no fault".)
    assert.notEqual(y.rig.read().mode, 'fault');
    assert.deepEqual(y.rig.read().faults, []);
    assert.ok(!y.rig.takeSafetyEvents().some((e) => e.kind === 'fault-hold'), 'no fault-hold for a burst');
    assert.match(y.rig.diagnostics()[0].notes.join(' '), /Dropped \d+ bytes? .*not a valid frame/);
    for (let i = 0; i < 300; i++)
      y.devices.left!.adapter.injectGarbage(Buffer.from('\x13\x13garbage\xff\xfe\r', 'latin1'));
    await holdFor(y, 0.05);
    const s = y.rig.read();
    assert.equal(s.mode, 'fault');
    assert.match(
      s.faults[0].message,
      /keeps sending bytes that are not CAN frames .*check --transport, the baud rate and the cable/,
    );
    const e = faultHold(y.rig.takeSafetyEvents());
    assert.match(e!.message, /Damped the left arm; the right arm holds its pose/);
  });
});

test('truncated frames: the decoder resyncs and the arm keeps holding', async () => {
  await withActiveEmulatedRig({ arms: ['left'], transport: 'damiao' }, async (y) => {
    for (let i = 0; i < 5; i++)
      y.devices.left!.adapter.injectGarbage(Buffer.from([0xaa, 0x11, 0x08, 0x11, 0x00, 0x00, 0x00, 0x11]));
    await holdFor(y, 0.2);
    const s = y.rig.read();
    assert.equal(s.mode, 'active');
    assert.ok(Math.abs(s.position[stateIndex('left', 1)] - 0.02) < 0.02, 'joint 2 still reads its true position');
  });
});

test('a reply from an unexpected CAN ID: fault, the arm on that bus damps, the message names the ID', async () => {
  await withActiveEmulatedRig({ arms: ['left', 'right'] }, async (y) => {
    y.devices.right!.adapter.injectFrame({ id: 0x123, extended: false, data: Uint8Array.of(1, 2, 3, 4, 5, 6, 7, 8) });
    await holdFor(y, 0.05);
    const s = y.rig.read();
    assert.equal(s.mode, 'fault');
    assert.equal(s.faults[0].arm, 'right');
    assert.match(s.faults[0].message, /unexpected CAN ID 0x123 arrived on the right arm's bus/);
    assert.match(faultHold(y.rig.takeSafetyEvents())!.message, /Damped the right arm; the left arm holds its pose/);
    // The damped arm's motors get kp = 0 (damping), the healthy arm keeps its stiffness.
    assert.equal(y.devices.right!.bus.motor(1)['command'].kp, 0);
    assert.ok(y.devices.left!.bus.motor(1)['command'].kp > 70);
  });
});

test('a motor that stops answering: no-reply fault naming it, its arm damped, the other arm holds', async () => {
  await withActiveEmulatedRig({ arms: ['left', 'right'] }, async (y) => {
    y.devices.left!.bus.faults.silent.add(3);
    await holdFor(y, 0.4);
    const s = y.rig.read();
    assert.equal(s.mode, 'fault');
    const f = s.faults.find((x) => x.kind === 'no-reply')!;
    assert.equal(f.arm, 'left');
    assert.equal(f.joint, 2);
    assert.match(
      f.message,
      /The left arm joint 3 motor \(CAN ID 0x003\) has not answered for \d+ ms; check its power and CAN cable\./,
    );
    assert.match(faultHold(y.rig.takeSafetyEvents())!.message, /Damped the left arm; the right arm holds its pose/);
    assert.equal(y.devices.left!.bus.motor(1)['command'].kp, 0);
    assert.ok(y.devices.right!.bus.motor(1)['command'].kp > 70);
  });
});

test('a status-nibble error (over-current): motor-fault with the fault name and what to do', async () => {
  await withActiveEmulatedRig({ arms: ['left'] }, async (y) => {
    y.devices.left!.bus.motor(5).injectFault(0xa, y.devices.left!.bus.now());
    await holdFor(y, 0.05);
    const s = y.rig.read();
    assert.equal(s.mode, 'fault');
    assert.equal(s.faults[0].kind, 'motor-fault');
    assert.equal(
      s.faults[0].message,
      'The left arm joint 5 motor reports over-current; check for a collision or a blocked joint.',
    );
    // Re-activation clears the error on the motor (it now reads disabled, then enabled).
    await y.rig.activate();
    assert.equal(y.rig.read().mode, 'active');
    assert.equal(y.devices.left!.bus.motor(5).status, 1);
  });
});

test('an unplugged adapter: bus-error fault at once, the motors damp themselves on their own watchdog, and the rig re-activates after replug', async () => {
  await withActiveEmulatedRig({ arms: ['left'] }, async (y) => {
    y.devices.left!.unplug();
    await holdFor(y, 0.05);
    const s = y.rig.read();
    assert.equal(s.mode, 'fault');
    assert.match(
      s.faults[0].message,
      /disconnected \(unplugged or closed\).*Plug it back in; the station reconnects by itself, then activate the rig again\./,
    );
    // Nothing reaches the motors now; their own 400 ms watchdog (register 9) puts them in damping.
    await holdFor(y, 0.5);
    const m = y.devices.left!.bus.motor(2);
    m.advance(y.devices.left!.bus.now());
    assert.equal(m.status, STATUS_LOST_COMMUNICATION);
    y.devices.left!.replug();
    await new Promise((r) => setTimeout(r, 200)); // the bus reopens by itself
    await y.rig.activate();
    assert.equal(y.rig.read().mode, 'active');
    assert.equal(m.status, 1);
  });
});

test('dropped replies (20%) are counted, not faulted: the arm keeps holding', async () => {
  await withActiveEmulatedRig({ arms: ['left'] }, async (y) => {
    y.devices.left!.bus.faults.dropProbability = 0.2;
    await holdFor(y, 0.3);
    assert.equal(y.rig.read().mode, 'active');
    assert.ok(y.rig.diagnostics()[0].missedReplies > 0);
  });
});

test('a wrong zero (joint 1 reads −2.95 rad, 0.18 rad beyond its widened limit) refuses activation with the reason', async () => {
  const y = createEmulatedYam({ arms: ['left'], emulator: { initialPositionsRad: [-2.95, 0.02, 0.02, 0, 0, 0, 0.3] } });
  try {
    await y.rig.configure();
    await assert.rejects(y.rig.activate(), (e: unknown) => {
      assert.ok(e instanceof RigError);
      assert.equal(e.fault.kind, 'wrong-zero');
      assert.match(e.message, /left arm joint 1 reads -2\.9\d+ rad.*zero offset is probably wrong/);
      return true;
    });
    assert.equal(y.devices.left!.bus.motor(1).status, 0, 'no motor was enabled');
    assert.ok(y.rig.takeSafetyEvents().some((e) => e.kind === 'activate-refused'));
  } finally {
    await y.rig.close();
  }
});

test('range registers that disagree with the configured model refuse configure (a DM4340 flashed with VMAX 8)', async () => {
  const y = createEmulatedYam({ arms: ['left'], emulator: { registers: { 2: { 22: 8 } } } });
  try {
    await assert.rejects(y.rig.configure(), (e: unknown) => {
      assert.ok(e instanceof RigError);
      assert.equal(e.fault.kind, 'config-mismatch');
      assert.equal(
        e.message,
        "Refusing to run: the left arm joint 2 motor (CAN ID 0x002) reports VMAX 8 rad/s, but the configuration says DM4340 (VMAX 10 rad/s). Fix the motor model in the station configuration or the motor's registers 21–23.",
      );
      return true;
    });
  } finally {
    await y.rig.close();
  }
});

test('a motor with its watchdog off gets it turned on (register 9 = 8000) before anything is enabled', async () => {
  const y = createEmulatedYam({ arms: ['left'], emulator: { registers: { 4: { 9: 0 } } } });
  try {
    await y.rig.configure();
    assert.equal(y.devices.left!.bus.motor(4).registers.get(9), 8000);
    assert.match(
      y.rig.diagnostics()[0].notes.join(' '),
      /left arm joint 4 motor had its watchdog \(register 9\) off; set it to 400 ms/,
    );
  } finally {
    await y.rig.close();
  }
});

test('a missing motor refuses configure and names it', async () => {
  const y = createEmulatedYam({ arms: ['right'], emulator: { absentMotors: [6] } });
  try {
    await assert.rejects(
      y.rig.configure(),
      /No answer from the right arm joint 6 \(CAN ID 0x006\) motor on the SLCAN adapter on \/emulated\/yam-right; check motor power/,
    );
  } finally {
    await y.rig.close();
  }
});

test('gripper stall calibration finds the stops, returns a hashed record, and the gripper then reads 0 closed … 1 open', async () => {
  const y = createEmulatedYam({ arms: ['left'] });
  try {
    await y.rig.configure();
    const rec = await y.rig.calibrateGripper('left', { speedRadS: 6 });
    assert.ok(Math.abs(rec.limits.closedRad - 0) < 0.05, `closed at ${rec.limits.closedRad}`);
    assert.ok(Math.abs(rec.limits.openRad - 6.57) < 0.05, `open at ${rec.limits.openRad}`);
    const { createHash } = await import('node:crypto');
    assert.equal(rec.sha256, createHash('sha256').update(rec.canonicalJson).digest('hex'));
    assert.equal(JSON.parse(rec.canonicalJson).kind, 'yam-gripper-limits');
    await y.rig.activate();
    const g = stateIndex('left', 6);
    assert.ok(
      Math.abs(y.rig.read().position[g] - 1) < 0.02,
      `the gripper is open after calibration: ${y.rig.read().position[g]}`,
    );
    const target = Float64Array.from(y.rig.read().position);
    target[g] = 0.25;
    const end = y.rig.clock.nowS() + 1.0;
    while (y.rig.clock.nowS() < end) {
      y.rig.write({ position: target });
      await tickThrough(y.rig, y.rig.clock, 0.004);
    }
    assert.ok(Math.abs(y.rig.read().position[g] - 0.25) < 0.05, `gripper at ${y.rig.read().position[g]}`);
    assert.ok(Math.abs(y.devices.left!.bus.motor(7).positionRad - 0.25 * 6.57) < 0.3);
  } finally {
    await y.rig.close();
  }
});

test('the registry builds YamCanRig from config, and a bad config gets one sentence', async () => {
  const { RigRegistry } = await import('../../src/rig/registry.js');
  const { RealtimeClock } = await import('../../src/rig/clocks.js');
  const { registerYamCanRigs } = await import('../../drivers/yam/register.js');
  const { registerEmulatedRigs } = await import('../../src/emulated-cell/register.js');
  const registry = registerEmulatedRigs(registerYamCanRigs(new RigRegistry()));
  const clock = new RealtimeClock();
  const rig = await registry.create({ type: 'yam-emulated', transport: 'damiao' }, { clock });
  try {
    await rig.configure();
    assert.equal(rig.read().mode, 'configured');
  } finally {
    await (rig as import('../../drivers/yam/yam-can-rig.js').YamCanRig).close();
  }
  await assert.rejects(
    registry.create({ type: 'yam-can', transport: 'usb' }, { clock }),
    /needs 'transport' set to slcan or damiao, not "usb"\./,
  );
  await assert.rejects(
    registry.create({ type: 'yam-can', transport: 'slcan', ports: {} }, { clock }),
    /'ports' names no arm/,
  );
});
