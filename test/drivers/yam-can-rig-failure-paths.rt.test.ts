// YamCanRig's failure paths through the real serialport stack (in-process binding) against the
// byte-level emulator's typed faults (YamBusEmulator.inject): each test shows the safe state the
// motors end in — what the emulated motors actually received, not only the rig's mode — and the
// sentence an operator reads.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { RigError, stateIndex, type ArmSide } from '../../src/rig/contract.js';
import { tickThrough } from '../rig/contract-suite.js';
import { withActiveEmulatedRig, withEmulatedRig } from '../helpers/emulated-yam.js';
import { createEmulatedYam } from '../../drivers/emulators/in-process.js';
import { STATUS_DISABLED, STATUS_ENABLED } from '../../drivers/damiao/protocol.js';
import type { MitCommand } from '../../drivers/damiao/protocol.js';

type Yam = ReturnType<typeof createEmulatedYam>;
const MOTORS = [1, 2, 3, 4, 5, 6, 7];

/** Runs the rig holding its pose (as the control loop would) for `seconds`. */
async function holdFor(y: Yam, seconds: number): Promise<void> {
  const pose = { position: Float64Array.from(y.rig.read().position) };
  const end = y.rig.clock.nowS() + seconds;
  while (y.rig.clock.nowS() < end) {
    y.rig.write(pose);
    await tickThrough(y.rig, y.rig.clock, 0.004);
  }
}

/** Holds until the rig reports `mode` (a busy host may deliver the motor's status a few cycles late), at most `seconds`. */
async function holdUntilMode(y: Yam, mode: string, seconds: number): Promise<void> {
  const end = y.rig.clock.nowS() + seconds;
  while (y.rig.read().mode !== mode && y.rig.clock.nowS() < end) await holdFor(y, 0.02);
}

/** The MIT command in force on every motor of an arm, as the emulated motors hold it. */
function commands(y: Yam, side: ArmSide): Readonly<MitCommand>[] {
  return MOTORS.map((id) => y.devices[side]!.bus.motor(id).lastCommand);
}

function statuses(y: Yam, side: ArmSide): number[] {
  const bus = y.devices[side]!.bus;
  bus.advanceAll();
  return MOTORS.map((id) => bus.motor(id).status);
}

/** Records every MIT frame the motors of an arm receive from now on. */
function recordMit(
  y: Yam,
  side: ArmSide,
): { frames: { id: number; command: Readonly<MitCommand>; accepted: boolean }[]; stop(): void } {
  const frames: { id: number; command: Readonly<MitCommand>; accepted: boolean }[] = [];
  const stops = MOTORS.map((id) =>
    y.devices[side]!.bus.motor(id).onMit((command, accepted) => frames.push({ id, command, accepted })),
  );
  return { frames, stop: () => stops.forEach((s) => s()) };
}

test('a motor power-cycled while active: its feedback says disabled, its arm damps (kp = 0), the other holds, and re-activation enables it again', async () => {
  await withActiveEmulatedRig({}, async (y) => {
    await holdFor(y, 0.05);
    y.devices.left!.bus.inject({ kind: 'power-cycle', motor: 3 });
    await holdFor(y, 0.05);
    const s = y.rig.read();
    assert.equal(s.mode, 'fault');
    const f = s.faults.find((x) => x.joint === 2)!;
    assert.equal(f.arm, 'left');
    assert.equal(
      f.message,
      'The left arm joint 3 motor is disabled although the rig is active; it may have been power-cycled. Check its power connector, then activate the rig again.',
    );
    assert.ok(
      commands(y, 'left').every((c) => c.kp === 0),
      'every left motor damps',
    );
    assert.ok(
      commands(y, 'right').every((c) => c.kp > 0),
      'the right arm holds',
    );
    await y.rig.activate();
    assert.equal(y.rig.read().mode, 'active');
    assert.deepEqual(
      statuses(y, 'left'),
      MOTORS.map(() => STATUS_ENABLED),
    );
    await holdFor(y, 0.05);
    assert.ok(
      commands(y, 'left').every((c) => c.kp > 0),
      'stiff again after activation',
    );
  });
});

test('two motors answering on one CAN ID refuse configure, naming the ID and the motor that has it twice; nothing is enabled', async () => {
  await withEmulatedRig({ arms: ['left'] }, async (y) => {
    y.devices.left!.bus.inject({ kind: 'duplicate-id', motor: 4, answersAs: 3 });
    await assert.rejects(y.rig.configure(), (e: unknown) => {
      assert.ok(e instanceof RigError);
      assert.equal(e.fault.kind, 'config-mismatch');
      assert.equal(e.fault.arm, 'left');
      assert.equal(
        e.message,
        "Two motors answer on CAN ID 0x003 on the left arm's bus and none on 0x004: the left arm joint 4 motor probably has ID 3 too. Give it its own ID with the Damiao tool, then configure again.",
      );
      return true;
    });
    assert.deepEqual(
      statuses(y, 'left'),
      MOTORS.map(() => STATUS_DISABLED),
    );
    await assert.rejects(
      y.rig.activate(),
      /Two motors answer on CAN ID 0x003/,
      'activate configures first and refuses the same way',
    );
    assert.deepEqual(
      statuses(y, 'left'),
      MOTORS.map(() => STATUS_DISABLED),
    );
  });
});

test('a motor that does not enable refuses activation and leaves every motor on both arms disabled', async () => {
  await withEmulatedRig({}, async (y) => {
    await y.rig.configure();
    y.devices.right!.bus.inject({ kind: 'refuse-enable', motor: 2 });
    await assert.rejects(y.rig.activate(), (e: unknown) => {
      assert.ok(e instanceof RigError);
      assert.equal(e.fault.arm, 'right');
      assert.equal(e.fault.joint, 1);
      assert.equal(
        e.message,
        'Not activating: the right arm joint 2 motor did not enable (it reports disabled). Check its power and error light, then activate again.',
      );
      return true;
    });
    assert.deepEqual(
      statuses(y, 'left'),
      MOTORS.map(() => STATUS_DISABLED),
    );
    assert.deepEqual(
      statuses(y, 'right'),
      MOTORS.map(() => STATUS_DISABLED),
    );
    assert.notEqual(y.rig.read().mode, 'active');
    // Nothing moves afterwards: commands are dropped and no motor is driven.
    const rec = recordMit(y, 'left');
    await holdFor(y, 0.05);
    rec.stop();
    assert.ok(
      rec.frames.every((f) => !f.accepted),
      'no motor took a command',
    );
    assert.ok(y.rig.takeSafetyEvents().some((e) => e.kind === 'activate-refused'));
  });
});

test('a watchdog-register write that fails refuses configure with what to do; nothing is enabled', async () => {
  await withEmulatedRig({ arms: ['left'], emulator: { registers: { 4: { 9: 0 } } } }, async (y) => {
    y.devices.left!.bus.inject({ kind: 'register-writes-ignored', motor: 4 });
    await assert.rejects(y.rig.configure(), (e: unknown) => {
      assert.ok(e instanceof RigError);
      assert.equal(e.fault.joint, 3);
      assert.equal(
        e.message,
        "The left arm joint 4 motor had its watchdog (register 9) off; could not set it to 400 ms so the motor damps itself if the station stops. Refusing to run without it: set register 9 with the Damiao tool or check that motor's CAN connection, then configure again.",
      );
      return true;
    });
    assert.equal(y.devices.left!.bus.motor(4).registers.get(9), 0);
    assert.deepEqual(
      statuses(y, 'left'),
      MOTORS.map(() => STATUS_DISABLED),
    );
  });
});

test('gripper calibration that never stalls (a slipped belt) times out, says what to check, and leaves the gripper disabled', async () => {
  await withEmulatedRig({ arms: ['left'] }, async (y) => {
    await y.rig.configure();
    y.devices.left!.bus.inject({ kind: 'hard-stops', motor: 7, stopsRad: [-Infinity, Infinity] });
    await assert.rejects(y.rig.calibrateGripper('left', { speedRadS: 6, timeoutS: 0.4 }), (e: unknown) => {
      assert.ok(e instanceof RigError);
      assert.equal(e.fault.joint, 6);
      assert.match(
        e.message,
        /^Gripper calibration stopped: the left gripper did not stall within 0\.4 s; check that the gripper moves freely and its motor is the configured one\.$/,
      );
      return true;
    });
    assert.equal(statuses(y, 'left')[6], STATUS_DISABLED);
  });
});

test('gripper calibration on a blocked gripper refuses the short stroke, keeps the old limits, and leaves the gripper disabled', async () => {
  await withEmulatedRig({ arms: ['left'] }, async (y) => {
    await y.rig.configure();
    const bus = y.devices.left!.bus;
    bus.inject({ kind: 'hard-stops', motor: 7, stopsRad: [0.2, 0.6] });
    await assert.rejects(y.rig.calibrateGripper('left', { speedRadS: 6 }), (e: unknown) => {
      assert.ok(e instanceof RigError);
      assert.match(
        e.message,
        /^Gripper calibration found only 0\.\d\d rad between closed and open; something blocks the left gripper\. Clear it, then calibrate again\.$/,
      );
      return true;
    });
    assert.equal(statuses(y, 'left')[6], STATUS_DISABLED);
    // The default limits (0 … 6.57 rad) still apply: the gripper at 0.6 rad reads 0.6 / 6.57 open.
    await y.rig.activate();
    const g = y.rig.read().position[stateIndex('left', 6)];
    assert.ok(Math.abs(g - bus.motor(7).positionRad / 6.57) < 0.01, `gripper reads ${g}`);
  });
});

test('a gripper that faults during calibration stops it with the fault named, and the gripper is sent disable', async () => {
  await withEmulatedRig({ arms: ['left'] }, async (y) => {
    await y.rig.configure();
    const bus = y.devices.left!.bus;
    let disables = 0;
    const handle = bus.handle.bind(bus);
    bus.handle = (f) => {
      if (f.id === 7 && f.data.every((b, i) => (i < 7 ? b === 0xff : b === 0xfd))) disables++;
      return handle(f);
    };
    const calibration = y.rig.calibrateGripper('left', { speedRadS: 1 });
    await new Promise((r) => setTimeout(r, 100));
    bus.inject({ kind: 'status', motor: 7, status: 0xe });
    await assert.rejects(
      calibration,
      /^RigError: Gripper calibration stopped: the left gripper motor reports overload; reduce the load on the joint\.$/,
    );
    assert.ok(disables >= 1, 'a disable reached the gripper after the fault');
  });
});

test('a fault that survives clear-error refuses re-activation: the faulted arm stays damped (kp = 0), the healthy arm holds', async () => {
  await withActiveEmulatedRig({}, async (y) => {
    y.devices.right!.bus.inject({ kind: 'status', motor: 2, status: 0xc, survivesClearError: true });
    await holdUntilMode(y, 'fault', 1);
    assert.equal(y.rig.read().mode, 'fault');
    await assert.rejects(y.rig.activate(), (e: unknown) => {
      assert.ok(e instanceof RigError);
      assert.equal(
        e.message,
        'Not activating while a fault is present: The right arm joint 2 motor reports rotor over-temperature; let the motor cool down.',
      );
      return true;
    });
    await holdFor(y, 0.05);
    assert.equal(y.rig.read().mode, 'fault');
    assert.ok(
      commands(y, 'right').every((c, i) => i === 1 || c.kp === 0),
      'the right arm damps',
    );
    assert.ok(
      commands(y, 'left').every((c) => c.kp > 0),
      'the left arm holds',
    );
    // Once the motor has cooled down, activation clears the error and both arms track again.
    y.devices.right!.bus.motor(2).healFault();
    await y.rig.activate();
    assert.equal(y.rig.read().mode, 'active');
    await holdFor(y, 0.05);
    assert.ok(commands(y, 'right').every((c) => c.kp > 0));
  });
});

test('e-stop reaches the motors: one stop frame at the measured pose with no feedforward, then kp = 0 with damping on all 14 motors', async () => {
  await withActiveEmulatedRig({}, async (y) => {
    const target = Float64Array.from(y.rig.read().position);
    target[stateIndex('left', 0)] += 1;
    const v = new Float64Array(14).fill(0.5);
    for (let i = 0; i < 25; i++) {
      y.rig.write({ position: target, velocity: v });
      await tickThrough(y.rig, y.rig.clock, 0.004);
    }
    const left = recordMit(y, 'left');
    const right = recordMit(y, 'right');
    y.rig.estop('test');
    await tickThrough(y.rig, y.rig.clock, 0.02);
    left.stop();
    right.stop();
    const first = left.frames.filter((f) => f.id === 1)[0];
    assert.ok(first.command.kp > 0, 'the stop frame holds position');
    assert.ok(Math.abs(first.command.velocityRadS) < 0.01, 'no velocity feedforward (0 within one 12-bit step)');
    assert.ok(Math.abs(first.command.torqueNm) < 0.02);
    for (const side of ['left', 'right'] as const) {
      const frames = (side === 'left' ? left : right).frames;
      const stiff = frames.filter((f) => f.command.kp > 0).length;
      assert.ok(stiff <= 2 * 7, `${side}: at most the stop cycles are stiff (${stiff} stiff frames)`);
      assert.ok(
        commands(y, side).every((c) => c.kp === 0 && c.kd > 0),
        `${side}: damping now`,
      );
    }
    assert.deepEqual(
      statuses(y, 'left'),
      MOTORS.map(() => STATUS_ENABLED),
      'damping, not disabled: the arm sinks slowly instead of dropping',
    );
  });
});

test('e-stop after a motor fault never sends stiffness to the faulted arm', async () => {
  await withActiveEmulatedRig({}, async (y) => {
    y.devices.right!.bus.inject({ kind: 'status', motor: 3, status: 0xa });
    await holdFor(y, 0.05);
    assert.equal(y.rig.read().mode, 'fault');
    const right = recordMit(y, 'right');
    const left = recordMit(y, 'left');
    y.rig.estop('test');
    await tickThrough(y.rig, y.rig.clock, 0.05);
    right.stop();
    left.stop();
    assert.ok(right.frames.length >= 7, 'the right arm is still being damped');
    assert.deepEqual(
      right.frames.filter((f) => f.command.kp > 0),
      [],
      'no stiff frame reached the right arm',
    );
    assert.ok(
      left.frames.some((f) => f.command.kp > 0),
      'the healthy left arm got its stop frame',
    );
    assert.ok(
      commands(y, 'left').every((c) => c.kp === 0),
      'then the left arm damps too',
    );
  });
});

test("through an adapter with reply latency, a late reply to the last MIT command is not taken for clear-error's answer: a cleared fault re-activates", async () => {
  // Found on the emulated cell (its adapters answer in 0.2–1.5 ms): the stale reply still carried
  // the fault status, so activate() refused a fault that clear-error had already removed.
  for (let trial = 0; trial < 5; trial++) {
    await withActiveEmulatedRig({ replyLatencyMs: 3 }, async (y) => {
      y.devices.right!.bus.inject({ kind: 'status', motor: 3, status: 0xa });
      await holdFor(y, 0.05);
      assert.equal(y.rig.read().mode, 'fault');
      // The hold loop's last MIT frames are still in flight when activate() starts.
      await y.rig.activate();
      assert.equal(y.rig.read().mode, 'active');
    });
  }
});

test('damped after a refused activation, an external fault that has cleared (the emulated cell caught up) leaves the status by itself', async () => {
  // What the station's status bar reads between rollouts: nothing ticks a damped rig.
  let behind = true;
  const behindFault = {
    kind: 'bus-error' as const,
    message:
      "The emulated cell's world fell 381 ms behind real time (this machine is busy); the arms were damped. Wait until it keeps up, then activate the rig again.",
  };
  await withEmulatedRig({ rig: { externalFaults: () => (behind ? [behindFault] : []) } }, async (y) => {
    await y.rig.configure();
    await assert.rejects(
      y.rig.activate(),
      (e: unknown) => e instanceof RigError && /fell 381 ms behind real time/.test(e.message),
    );
    assert.deepEqual(
      y.rig.read().faults.map((f) => f.message),
      [behindFault.message],
    );
    behind = false;
    assert.deepEqual(y.rig.read().faults, [], 'the cleared external fault still shows');
    assert.notEqual(y.rig.read().mode, 'active', 'clearing the status does not power anything');
    behind = true;
    assert.deepEqual(
      y.rig.read().faults.map((f) => f.message),
      [behindFault.message],
      'a new fall-behind shows again',
    );
    behind = false;
    await y.rig.activate();
    assert.equal(y.rig.read().mode, 'active');
    assert.deepEqual(y.rig.read().faults, []);
  });
});
