import { test } from 'node:test';
import assert from 'node:assert/strict';
import { SafetySupervisor, MAX_STEP_DT_S, entryName } from '../../src/rig/safety.js';
import { ARM_SIDES, RigError, STATE_DIM, stateIndex, type RigFault, type RigCommand } from '../../src/rig/contract.js';
import { yamRigModel } from '../../src/rig/yam.js';

const model = yamRigModel();
const PERIOD = 1 / 250;
const home = () => new Float64Array(STATE_DIM).fill(0).map((_, k) => (k % 7 === 6 ? 0.5 : 0));
const noFaults: RigFault[] = [];

function active(pose = home(), opts = {}): SafetySupervisor {
  const s = new SafetySupervisor(model, { controlPeriodS: PERIOD, ...opts });
  s.configure();
  s.activate(pose, noFaults, 0);
  return s;
}
function cmd(position: ArrayLike<number>, extra: Partial<RigCommand> = {}): RigCommand {
  return { position: Float64Array.from(position), ...extra };
}
function kinds(s: SafetySupervisor): string[] {
  return s.takeEvents().map((e) => e.kind);
}

test('activation holds the measured pose with both arms tracking', () => {
  const pose = home();
  pose[stateIndex('left', 1)] = 0.8;
  pose[stateIndex('right', 0)] = -0.4;
  const s = active(pose);
  assert.equal(s.mode, 'active');
  assert.equal(s.drive('left'), 'track');
  assert.equal(s.drive('right'), 'track');
  assert.deepEqual(Array.from(s.output.position), Array.from(pose));
  assert.deepEqual(s.takeEvents(), []);
});

test('activating before configure is refused with a sentence and an event', () => {
  const s = new SafetySupervisor(model);
  assert.equal(s.mode, 'unconfigured');
  assert.throws(
    () => s.activate(home(), noFaults, 0),
    (e: unknown) => e instanceof RigError && /before it is configured/.test(e.message),
  );
  assert.deepEqual(kinds(s), ['activate-refused']);
  assert.equal(s.drive('left'), 'off');
});

test('a joint far beyond its widened limit is a wrong zero: activation refused naming arm and joint', () => {
  const s = new SafetySupervisor(model);
  s.configure();
  const pose = home();
  pose[stateIndex('left', 1)] = -0.3; // limit 0, widened −0.15, 0.15 beyond it > 0.1
  assert.throws(
    () => s.activate(pose, noFaults, 1),
    (e: unknown) =>
      e instanceof RigError &&
      e.fault.kind === 'wrong-zero' &&
      e.fault.arm === 'left' &&
      e.fault.joint === 1 &&
      /left arm joint 2 reads -0\.300 rad/.test(e.message) &&
      /re-zero/.test(e.message),
  );
  const ev = s.takeEvents();
  assert.equal(ev.length, 1);
  assert.equal(ev[0].kind, 'activate-refused');
  assert.equal(ev[0].arm, 'left');
  assert.equal(ev[0].joint, 1);
  assert.equal(s.mode, 'configured');
  assert.equal(s.drive('left'), 'off');

  const right = home();
  right[stateIndex('right', 4)] = 1.5708 + 0.15 + 0.11;
  assert.throws(() => s.activate(right, noFaults, 1), /right arm joint 5/);
});

test('a joint slightly outside its bench limit (within the wrong-zero margin) activates and holds where it is', () => {
  const pose = home();
  pose[stateIndex('left', 2)] = -0.2; // widened −0.15, 0.05 beyond: a plausible reading at home
  const s = active(pose);
  assert.equal(s.mode, 'active');
  assert.equal(s.output.position[stateIndex('left', 2)], -0.2, 'no jump back into limits on activation');
});

test('non-finite readings and present faults refuse activation', () => {
  const s = new SafetySupervisor(model);
  s.configure();
  const pose = home();
  pose[stateIndex('right', 6)] = NaN;
  assert.throws(() => s.activate(pose, noFaults, 0), /right gripper has no valid position reading/);
  const fault: RigFault = {
    kind: 'motor-fault',
    arm: 'left',
    joint: 3,
    message: 'Left arm joint 4 reports over-temperature.',
  };
  assert.throws(
    () => s.activate(home(), [fault], 0),
    /while a fault is present: Left arm joint 4 reports over-temperature/,
  );
  assert.throws(() => s.activate(new Float64Array(7), noFaults, 0), /7 positions, not 14/);
});

test('commands before activation are dropped, reported once, and the unchanged output is returned', () => {
  const s = new SafetySupervisor(model);
  s.configure();
  s.tick(home(), noFaults, 0);
  const before = Array.from(s.output.position);
  const target = home().fill(0.3);
  const a = s.write(cmd(target), 0.004);
  const b = s.write(cmd(target), 0.008);
  assert.deepEqual(Array.from(a.position), before);
  assert.deepEqual(Array.from(b.position), before);
  assert.deepEqual(kinds(s), ['command-dropped']);
  assert.equal(s.drive('left'), 'off');
});

test('position targets are clamped to the bench limits; the event fires when clamping starts, again after it stops', () => {
  const s = active();
  const j = stateIndex('left', 4); // limit ±1.5708
  const target = home();
  target[j] = 2.5;
  let t = 0;
  for (let i = 0; i < 400; i++) s.write(cmd(target), (t += PERIOD));
  assert.equal(s.output.position[j], 1.5708);
  const ev = s.takeEvents().filter((e) => e.kind === 'position-clamped');
  assert.equal(ev.length, 1);
  assert.equal(ev[0].arm, 'left');
  assert.equal(ev[0].joint, 4);
  assert.match(ev[0].message, /left arm joint 5 target 2\.500 to its limit 1\.571 rad/);
  target[j] = 1.0;
  s.write(cmd(target), (t += PERIOD));
  target[j] = 3;
  s.write(cmd(target), (t += PERIOD));
  assert.equal(s.takeEvents().filter((e) => e.kind === 'position-clamped').length, 1);
  // Grippers stay within 0..1.
  const g = stateIndex('right', 6);
  target[g] = 1.7;
  for (let i = 0; i < 200; i++) s.write(cmd(target), (t += PERIOD));
  assert.equal(s.output.position[g], 1);
});

test('the target moves at most maxVelocity·dt per command, and a long pause earns no bigger jump', () => {
  const s = active();
  const j = stateIndex('right', 0); // DM4340: min(10, cap 3) rad/s
  const target = home();
  target[j] = 1.0;
  const applied = s.write(cmd(target), PERIOD);
  assert.ok(Math.abs(applied.position[j] - 3 * PERIOD) < 1e-12, `stepped ${applied.position[j]}`);
  const ev = s.takeEvents();
  assert.deepEqual(
    ev.map((e) => e.kind),
    ['velocity-clamped'],
  );
  assert.match(ev[0].message, /right arm joint 1 to its speed limit of 3\.00 rad\/s/);
  const after = s.write(cmd(target), PERIOD + 1.0);
  assert.ok(Math.abs(after.position[j] - 3 * (PERIOD + MAX_STEP_DT_S)) < 1e-12);
  // A small step inside the limit passes unchanged.
  const s2 = active();
  const t2 = home();
  t2[j] = 0.005;
  assert.equal(s2.write(cmd(t2), PERIOD).position[j], 0.005);
  assert.deepEqual(s2.takeEvents(), []);
  // Custom cap.
  const s3 = active(home(), { jointVelocityCapRadS: 1 });
  assert.ok(Math.abs(s3.write(cmd(target), PERIOD).position[j] - PERIOD) < 1e-12);
});

test('velocity and torque feedforward are clamped to the motor limits', () => {
  const s = active();
  const v = new Float64Array(STATE_DIM);
  const tau = new Float64Array(STATE_DIM);
  v[stateIndex('left', 0)] = 20;
  tau[stateIndex('left', 1)] = -50; // DM4340 T_MAX 28
  tau[stateIndex('left', 3)] = 12; // DM4310 T_MAX 10
  tau[stateIndex('left', 2)] = 5;
  const a = s.write(cmd(home(), { velocity: v, torqueNm: tau }), PERIOD);
  assert.equal(a.velocity?.[stateIndex('left', 0)], 3);
  assert.equal(a.torqueNm?.[stateIndex('left', 1)], -28);
  assert.equal(a.torqueNm?.[stateIndex('left', 3)], 10);
  assert.equal(a.torqueNm?.[stateIndex('left', 2)], 5);
  const ev = s.takeEvents();
  assert.deepEqual(ev.map((e) => e.kind).sort(), ['torque-clamped', 'torque-clamped', 'velocity-clamped']);
  assert.ok(ev.some((e) => /left arm joint 2 torque feedforward -50\.00 N·m to ±28\.0 N·m/.test(e.message)));
});

test('a non-finite or mis-shaped command holds the measured pose and is reported; a good one resumes', () => {
  const s = active();
  const target = home();
  target[stateIndex('left', 0)] = 0.02;
  s.write(cmd(target), PERIOD);
  const measured = home();
  measured[stateIndex('left', 0)] = 0.011;
  s.tick(measured, noFaults, PERIOD);
  s.takeEvents();
  const bad = home();
  bad[stateIndex('right', 2)] = NaN;
  const applied = s.write(cmd(bad), 2 * PERIOD);
  assert.equal(s.mode, 'holding');
  assert.equal(applied.position[stateIndex('left', 0)], 0.011);
  assert.ok(applied.position.every((x) => Number.isFinite(x)));
  const ev = s.takeEvents();
  assert.equal(ev.length, 1);
  assert.equal(ev[0].kind, 'non-finite-command');
  assert.match(ev[0].message, /non-finite position for the right arm joint 3 \(NaN\); holding the current pose/);
  s.write(cmd(new Float64Array(13)), 3 * PERIOD);
  assert.match(s.takeEvents()[0].message, /13 position entries instead of 14/);
  const tau = new Float64Array(STATE_DIM);
  tau[0] = Infinity;
  s.write(cmd(home(), { torqueNm: tau }), 4 * PERIOD);
  assert.match(s.takeEvents()[0].message, /non-finite torque for the left arm joint 1/);
  s.write(cmd(home()), 5 * PERIOD);
  assert.equal(s.mode, 'active');
});

test('watchdog: no command for holdAfterMs holds the current pose, still none after dampAfterMs damps', () => {
  const s = active(home(), { holdAfterMs: 100, dampAfterMs: 1000 });
  const target = home();
  target[stateIndex('left', 1)] = 0.2;
  let t = 0;
  for (let i = 0; i < 10; i++) {
    s.write(cmd(target), (t += PERIOD));
    s.tick(home(), noFaults, t);
  }
  const lastWrite = t;
  assert.deepEqual(kinds(s), ['velocity-clamped']);
  const measured = home();
  measured[stateIndex('left', 1)] = 0.033;
  s.tick(measured, noFaults, lastWrite + 0.099);
  assert.equal(s.mode, 'active');
  s.tick(measured, noFaults, lastWrite + 0.101);
  assert.equal(s.mode, 'holding');
  assert.equal(s.output.position[stateIndex('left', 1)], 0.033, 'holds where the arm is, not where it was going');
  assert.deepEqual(kinds(s), ['watchdog-hold']);
  s.tick(measured, noFaults, lastWrite + 0.999);
  assert.equal(s.drive('left'), 'track');
  s.tick(measured, noFaults, lastWrite + 1.001);
  assert.equal(s.mode, 'damped');
  assert.equal(s.drive('left'), 'damp');
  assert.equal(s.drive('right'), 'damp');
  const ev = s.takeEvents();
  assert.deepEqual(
    ev.map((e) => e.kind),
    ['watchdog-damp'],
  );
  assert.match(ev[0].message, /No command for 1001 ms; damping both arms/);
  s.write(cmd(target), lastWrite + 1.1);
  assert.deepEqual(kinds(s), ['command-dropped']);
  assert.equal(s.mode, 'damped');
});

test('watchdog hold resumes when commands come back before the damp deadline', () => {
  const s = active();
  s.write(cmd(home()), PERIOD);
  s.tick(home(), noFaults, 0.2);
  assert.equal(s.mode, 'holding');
  s.write(cmd(home()), 0.21);
  assert.equal(s.mode, 'active');
  s.tick(home(), noFaults, 0.22);
  assert.equal(s.mode, 'active');
});

test('a motor fault damps the faulted arm, holds the healthy arm, reports once, and drops commands', () => {
  const s = active();
  const measured = home();
  measured[stateIndex('left', 0)] = 0.1;
  const fault: RigFault = { kind: 'motor-fault', arm: 'right', joint: 2, message: 'Motor 0x03 reports over-current.' };
  s.write(cmd(home().fill(0.01)), PERIOD);
  s.takeEvents();
  s.tick(measured, [fault], PERIOD);
  assert.equal(s.mode, 'fault');
  assert.equal(s.drive('right'), 'damp');
  assert.equal(s.drive('left'), 'track');
  assert.equal(s.output.position[stateIndex('left', 0)], 0.1, 'healthy arm holds its measured pose');
  const ev = s.takeEvents();
  assert.equal(ev.length, 1);
  assert.equal(ev[0].kind, 'fault-hold');
  assert.equal(ev[0].arm, 'right');
  assert.equal(ev[0].joint, 2);
  assert.match(
    ev[0].message,
    /Fault on the right arm joint 3: Motor 0x03 reports over-current\. Damped the right arm; the left arm holds its pose/,
  );
  s.tick(measured, [fault], 2 * PERIOD);
  assert.deepEqual(s.takeEvents(), []);
  s.write(cmd(home()), 3 * PERIOD);
  assert.deepEqual(kinds(s), ['command-dropped']);
  // A rig-wide fault damps both.
  s.tick(measured, [fault, { kind: 'bus-error', message: 'The CAN adapter was unplugged.' }], 4 * PERIOD);
  assert.equal(s.drive('left'), 'damp');
  assert.match(
    s.takeEvents()[0].message,
    /Fault on the rig: The CAN adapter was unplugged\. Damped the left arm and right arm\./,
  );
  // Re-activation after the fault clears.
  s.activate(measured, noFaults, 1);
  assert.equal(s.mode, 'active');
  assert.equal(s.drive('right'), 'track');
});

test('e-stop stops at the measured pose at once, damps one cycle later, and drops commands until re-activated', () => {
  const s = active();
  const target = home();
  target[stateIndex('left', 0)] = 1;
  let t = 0;
  for (let i = 0; i < 20; i++) s.write(cmd(target, { velocity: new Float64Array(STATE_DIM).fill(0.5) }), (t += PERIOD));
  const measured = home();
  measured[stateIndex('left', 0)] = 0.05;
  s.tick(measured, noFaults, t);
  s.takeEvents();
  s.estop('operator pressed the e-stop key', t);
  assert.equal(s.mode, 'estopped');
  // The very next output sent is a stop at the measured pose with no feedforward.
  assert.equal(s.output.position[stateIndex('left', 0)], 0.05);
  assert.ok(s.output.velocity.every((v) => v === 0));
  const ev = s.takeEvents();
  assert.deepEqual(
    ev.map((e) => e.kind),
    ['estop'],
  );
  assert.match(ev[0].message, /Emergency stop: operator pressed the e-stop key/);
  s.tick(measured, noFaults, t + PERIOD);
  assert.equal(s.drive('left'), 'track', 'the stop cycle');
  s.tick(measured, noFaults, t + 2 * PERIOD);
  assert.equal(s.drive('left'), 'damp');
  assert.equal(s.drive('right'), 'damp');
  s.write(cmd(target), t + 3 * PERIOD);
  assert.deepEqual(kinds(s), ['command-dropped']);
  assert.equal(s.output.position[stateIndex('left', 0)], 0.05);
  s.activate(measured, noFaults, t + 1);
  assert.equal(s.mode, 'active');
});

test('e-stop before activation keeps the motors off', () => {
  const s = new SafetySupervisor(model);
  s.configure();
  s.estop('test', 0);
  s.tick(home(), noFaults, 0.01);
  s.tick(home(), noFaults, 0.02);
  assert.equal(s.drive('left'), 'off');
  assert.equal(s.mode, 'estopped');
});

test('deactivate leaves the arms damped and drops later commands', () => {
  const s = active();
  s.deactivate(0.1);
  assert.equal(s.mode, 'damped');
  assert.equal(s.drive('left'), 'damp');
  s.write(cmd(home()), 0.2);
  assert.deepEqual(kinds(s), ['command-dropped']);
});

test('an explicit hold latches: commands are dropped and the watchdog never damps it', () => {
  const s = active();
  const measured = home();
  measured[stateIndex('right', 3)] = 0.4;
  s.tick(measured, noFaults, 0.01);
  s.hold(0.01);
  assert.equal(s.mode, 'holding');
  assert.equal(s.output.position[stateIndex('right', 3)], 0.4);
  s.write(cmd(home()), 0.02);
  assert.deepEqual(kinds(s), ['command-dropped']);
  s.tick(measured, noFaults, 60);
  assert.equal(s.mode, 'holding');
  assert.equal(s.drive('right'), 'track');
  s.activate(measured, noFaults, 61);
  s.write(cmd(measured), 61.004);
  assert.equal(s.mode, 'active');
});

test('takeEvents drains; entry names are operator words', () => {
  const s = new SafetySupervisor(model);
  s.configure();
  s.write(cmd(home()), 0);
  assert.equal(s.takeEvents().length, 1);
  assert.deepEqual(s.takeEvents(), []);
  assert.equal(entryName(0), 'left arm joint 1');
  assert.equal(entryName(6), 'left gripper');
  assert.equal(entryName(12), 'right arm joint 6');
  assert.equal(entryName(13), 'right gripper');
});

test('write returns the applied command without allocating new arrays each cycle', () => {
  const s = active();
  const a = s.write(cmd(home()), PERIOD);
  const b = s.write(cmd(home()), 2 * PERIOD);
  assert.equal(a.position, b.position);
  assert.equal(a.position, s.output.position);
});

test('e-stop never gives stiffness back to an arm a motor fault damped (right-arm fault → e-stop)', () => {
  const s = active();
  s.tick(
    home(),
    [{ kind: 'motor-fault', arm: 'right', joint: 2, message: 'Motor 0x03 reports over-current.' }],
    PERIOD,
  );
  assert.equal(s.drive('right'), 'damp');
  s.estop('operator', 2 * PERIOD);
  assert.equal(s.drive('right'), 'damp', 'the faulted arm stays damped through the e-stop');
  assert.equal(s.drive('left'), 'track', 'the healthy arm gets its stop cycle');
});

test('e-stop after deactivate keeps both arms damped', () => {
  const s = active();
  s.deactivate(PERIOD);
  s.estop('operator', 2 * PERIOD);
  assert.equal(s.drive('left'), 'damp');
  assert.equal(s.drive('right'), 'damp');
});

test('a source sending only non-finite commands is as good as silent: held at once, damped on the watchdog timer', () => {
  const s = active(home(), { holdAfterMs: 100, dampAfterMs: 1000 });
  s.write(cmd(home()), PERIOD); // the last good command
  s.takeEvents();
  const bad = home();
  bad[stateIndex('left', 0)] = NaN;
  for (let i = 1; i < 250; i++) {
    const t = PERIOD + i * PERIOD; // up to 996 ms after the last good command
    s.write(cmd(bad), t);
    s.tick(home(), noFaults, t);
    assert.equal(
      s.mode,
      'holding',
      `held, not damped, ${((t - PERIOD) * 1000).toFixed(0)} ms after the last good command`,
    );
  }
  assert.deepEqual(
    kinds(s),
    ['non-finite-command'],
    'one report for a stretch of the same bad command, not one per cycle',
  );
  s.write(cmd(bad), PERIOD + 1.002);
  s.tick(home(), noFaults, PERIOD + 1.002);
  assert.equal(s.mode, 'damped');
  assert.equal(s.drive('left'), 'damp');
  assert.equal(s.drive('right'), 'damp');
  const ev = s.takeEvents();
  assert.deepEqual(
    ev.map((e) => e.kind),
    ['watchdog-damp'],
  );
  assert.match(ev[0].message, /No valid command for 1002 ms \(\d+ rejected\); damping both arms/);
  s.write(cmd(home()), PERIOD + 1.01);
  assert.equal(s.mode, 'damped', 'a good command after the damp needs a new activation');
});

test('one bad command among good ones only holds; the next good one resumes and the damp timer restarts', () => {
  const s = active(home(), { holdAfterMs: 100, dampAfterMs: 1000 });
  let t = 0;
  const bad = home();
  bad[stateIndex('right', 6)] = Infinity;
  for (let i = 0; i < 600; i++) {
    t += PERIOD;
    s.write(cmd(i % 50 === 20 ? bad : home()), t);
    s.tick(home(), noFaults, t);
  }
  assert.equal(s.mode, 'active');
  assert.equal(
    s.takeEvents().filter((e) => e.kind === 'non-finite-command').length,
    12,
    'each bad command after good ones is reported',
  );
});

test('a stretch of bad commands holds where the arm was when it started, not where it sinks to', () => {
  const s = active();
  const measured = home();
  measured[stateIndex('left', 1)] = 0.5;
  s.tick(measured, noFaults, PERIOD);
  const bad = home();
  bad[0] = NaN;
  s.write(cmd(bad), 2 * PERIOD);
  assert.equal(s.output.position[stateIndex('left', 1)], 0.5);
  for (let i = 3; i < 30; i++) {
    measured[stateIndex('left', 1)] -= 0.002; // gravity pulls against the hold
    s.tick(measured, noFaults, i * PERIOD);
    s.write(cmd(bad), i * PERIOD);
  }
  assert.equal(s.output.position[stateIndex('left', 1)], 0.5, 'the hold target did not follow the arm down');
});

// ---- the whole transition table ---------------------------------------------------------------
// Every start state × every event, with the mode and both arms' drives after it. The same table is
// in docs/rig-model.md; the contract suite checks it again on every rig, down to the motors.

type Drives = `${'off' | 'track' | 'damp'}/${'off' | 'track' | 'damp'}`;
const FAULT_RIGHT: RigFault = {
  kind: 'motor-fault',
  arm: 'right',
  joint: 2,
  message: 'Motor 0x03 reports over-current.',
};
const FAULT_LEFT: RigFault = {
  kind: 'motor-fault',
  arm: 'left',
  joint: 0,
  message: 'Motor 0x01 reports over-temperature.',
};
const WD = { holdAfterMs: 100, dampAfterMs: 1000 };

const START_STATES: Record<string, () => { s: SafetySupervisor; t: number }> = {
  unconfigured: () => ({ s: new SafetySupervisor(model, { controlPeriodS: PERIOD, ...WD }), t: 0 }),
  configured: () => {
    const s = new SafetySupervisor(model, { controlPeriodS: PERIOD, ...WD });
    s.configure();
    return { s, t: 0 };
  },
  active: () => ({ s: active(home(), WD), t: 0 }),
  'holding (operator)': () => {
    const s = active(home(), WD);
    s.hold(0.01);
    return { s, t: 0.01 };
  },
  'holding (watchdog)': () => {
    const s = active(home(), WD);
    s.tick(home(), noFaults, 0.15);
    return { s, t: 0.15 };
  },
  'holding (bad command)': () => {
    const s = active(home(), WD);
    s.write(cmd(home().fill(NaN)), 0.01);
    return { s, t: 0.01 };
  },
  'fault (right arm)': () => {
    const s = active(home(), WD);
    s.tick(home(), [FAULT_RIGHT], 0.01);
    return { s, t: 0.01 };
  },
  'damped (deactivate)': () => {
    const s = active(home(), WD);
    s.deactivate(0.01);
    return { s, t: 0.01 };
  },
  'damped (watchdog)': () => {
    const s = active(home(), WD);
    s.tick(home(), noFaults, 0.15);
    s.tick(home(), noFaults, 1.1);
    return { s, t: 1.1 };
  },
  estopped: () => {
    const s = active(home(), WD);
    s.estop('test', 0.01);
    s.tick(home(), noFaults, 0.01 + PERIOD);
    s.tick(home(), noFaults, 0.01 + 2 * PERIOD);
    return { s, t: 0.01 + 2 * PERIOD };
  },
};

/** Each event, then the control cycles that complete it (an e-stop damps one cycle after it stops). */
const EVENTS: Record<string, (s: SafetySupervisor, t: number, step: () => void) => void> = {
  estop: (s, t, step) => {
    s.estop('transition table', t);
    step();
    s.tick(home(), noFaults, t + PERIOD);
    step();
    s.tick(home(), noFaults, t + 2 * PERIOD);
  },
  hold: (s, t) => s.hold(t),
  watchdog: (s, t, step) => {
    s.tick(home(), noFaults, t + 0.15);
    step();
    s.tick(home(), noFaults, t + 1.2);
  },
  fault: (s, t) => s.tick(home(), [FAULT_LEFT], t),
  deactivate: (s, t) => s.deactivate(t),
  activate: (s, t) => {
    try {
      s.activate(home(), noFaults, t);
    } catch (e) {
      if (!(e instanceof RigError)) throw e;
    }
  },
};

// [start state][event] → "mode left/right"
const TABLE: Record<string, Record<string, `${string} ${Drives}`>> = {
  unconfigured: {
    estop: 'unconfigured off/off',
    hold: 'unconfigured off/off',
    watchdog: 'unconfigured off/off',
    fault: 'unconfigured off/off',
    deactivate: 'unconfigured off/off',
    activate: 'unconfigured off/off',
  },
  configured: {
    estop: 'estopped off/off',
    hold: 'configured off/off',
    watchdog: 'configured off/off',
    fault: 'configured off/off',
    deactivate: 'damped off/off',
    activate: 'active track/track',
  },
  active: {
    estop: 'estopped damp/damp',
    hold: 'holding track/track',
    watchdog: 'damped damp/damp',
    fault: 'fault damp/track',
    deactivate: 'damped damp/damp',
    activate: 'active track/track',
  },
  'holding (operator)': {
    estop: 'estopped damp/damp',
    hold: 'holding track/track',
    watchdog: 'holding track/track',
    fault: 'fault damp/track',
    deactivate: 'damped damp/damp',
    activate: 'active track/track',
  },
  'holding (watchdog)': {
    estop: 'estopped damp/damp',
    hold: 'holding track/track',
    watchdog: 'damped damp/damp',
    fault: 'fault damp/track',
    deactivate: 'damped damp/damp',
    activate: 'active track/track',
  },
  'holding (bad command)': {
    estop: 'estopped damp/damp',
    hold: 'holding track/track',
    watchdog: 'damped damp/damp',
    fault: 'fault damp/track',
    deactivate: 'damped damp/damp',
    activate: 'active track/track',
  },
  'fault (right arm)': {
    estop: 'estopped damp/damp',
    hold: 'fault track/damp',
    watchdog: 'fault track/damp',
    fault: 'fault damp/damp',
    deactivate: 'damped damp/damp',
    activate: 'active track/track',
  },
  'damped (deactivate)': {
    estop: 'estopped damp/damp',
    hold: 'damped damp/damp',
    watchdog: 'damped damp/damp',
    fault: 'damped damp/damp',
    deactivate: 'damped damp/damp',
    activate: 'active track/track',
  },
  'damped (watchdog)': {
    estop: 'estopped damp/damp',
    hold: 'damped damp/damp',
    watchdog: 'damped damp/damp',
    fault: 'damped damp/damp',
    deactivate: 'damped damp/damp',
    activate: 'active track/track',
  },
  estopped: {
    estop: 'estopped damp/damp',
    hold: 'estopped damp/damp',
    watchdog: 'estopped damp/damp',
    fault: 'estopped damp/damp',
    deactivate: 'damped damp/damp',
    activate: 'active track/track',
  },
};

for (const [start, make] of Object.entries(START_STATES)) {
  for (const [event, apply] of Object.entries(EVENTS)) {
    test(`transition: ${start} + ${event} → ${TABLE[start][event]}${event === 'activate' ? '' : ', never adding stiffness on the way'}`, () => {
      const { s, t } = make();
      const before = [s.drive('left'), s.drive('right')];
      // Only activate may give an arm stiffness: check after every control cycle of the event.
      const step = () => {
        if (event === 'activate') return;
        ARM_SIDES.forEach((side, a) => {
          if (s.drive(side) === 'track')
            assert.equal(before[a], 'track', `the ${side} arm went from ${before[a]} to track`);
        });
      };
      apply(s, t, step);
      step();
      assert.equal(`${s.mode} ${s.drive('left')}/${s.drive('right')}`, TABLE[start][event]);
      assert.ok(s.output.position.every(Number.isFinite), 'targets stay finite');
    });
  }
}

/** An interlock the test flips by hand: what the cell PLC client looks like to the supervisor. */
function flipInterlock(): { open: boolean; reason: string; current(): { open: boolean; reason?: string } } {
  return {
    open: false,
    reason: 'The door of the cell is open.',
    current() {
      return this.open ? { open: true, reason: this.reason } : { open: false };
    },
  };
}

test('an interlock opening replaces that very cycle’s command with a hold at the measured pose, damps on the next tick, and is recorded with its cycle', () => {
  const il = flipInterlock();
  const s = active(home(), { interlock: il });
  const measured = home();
  let t = 0;
  // Three cycles of a policy moving joint 1: accepted.
  for (let c = 0; c < 3; c++) {
    t += PERIOD;
    const target = home();
    target[0] = 0.01 * (c + 1);
    s.write(cmd(target), t);
    measured[0] = s.output.position[0] * 0.9; // the arm lags its target
    s.tick(measured, noFaults, t);
  }
  assert.ok(s.output.position[0] > 0.02);
  kinds(s);
  // Cycle 3: the interlock opens before the write.
  il.open = true;
  t += PERIOD;
  const far = home();
  far[0] = 0.5;
  const applied = s.write(cmd(far), t);
  assert.equal(
    applied.position[0],
    measured[0],
    'the applied command is the hold at the last measured pose, not the policy target',
  );
  assert.equal(s.mode, 'estopped');
  assert.deepEqual(s.interlockStop, { timeS: t, reason: 'The door of the cell is open.', cycle: 3, seenBy: 'write' });
  s.tick(measured, noFaults, t);
  assert.equal(s.drive('left'), 'track', 'the stop cycle sends the hold');
  t += PERIOD;
  s.write(cmd(far), t);
  s.tick(measured, noFaults, t);
  assert.equal(s.drive('left'), 'damp');
  assert.equal(s.drive('right'), 'damp');
  assert.equal(s.output.position[0], measured[0], 'later commands stay dropped');
  const events = s.takeEvents();
  assert.deepEqual(
    events.map((e) => e.kind),
    ['interlock-stop'],
    'one event: the stop says the command was replaced',
  );
  assert.match(
    events[0].message,
    /^The door of the cell is open\. Arms stopped at their pose, then damped; activate the rig again once the interlock is closed\.$/,
  );
  // Re-activation is refused while it stays open, allowed once it closes.
  assert.throws(
    () => s.activate(measured, noFaults, t),
    (e: unknown) =>
      e instanceof RigError &&
      e.fault.kind === 'interlock' &&
      /interlock is open: The door of the cell is open\./.test(e.message),
  );
  il.open = false;
  s.activate(measured, noFaults, t);
  assert.equal(s.mode, 'active');
  assert.equal(s.interlockStop, undefined);
});

test('an interlock opening between commands (while a policy thinks) is stopped by the tick; a closed one changes nothing', () => {
  const il = flipInterlock();
  const s = active(home(), { interlock: il });
  const withOut = active(home());
  for (let c = 1; c <= 5; c++) {
    const target = home();
    target[3] = 0.004 * c;
    const a = Float64Array.from(s.write(cmd(target), c * PERIOD).position);
    const b = Float64Array.from(withOut.write(cmd(target), c * PERIOD).position);
    assert.deepEqual(a, b, 'a closed interlock does not touch the commands');
    s.tick(home(), noFaults, c * PERIOD);
    withOut.tick(home(), noFaults, c * PERIOD);
  }
  il.open = true;
  s.tick(home(), noFaults, 6 * PERIOD);
  assert.equal(s.mode, 'estopped');
  assert.equal(s.interlockStop?.seenBy, 'tick');
  assert.equal(s.interlockStop?.cycle, 5);
  assert.deepEqual(Array.from(s.output.position), Array.from(home()));
});
