/**
 * The shared Rig contract suite: behaviour every Rig (MirrorRig, SimRig, YamCanRig on its
 * emulator, RosRig) must show, registered as node:test tests.
 *
 * API (stable — other rigs' tests call it):
 *
 *   describeRigContract(name, makeRig, options?)
 *
 *   makeRig: () => Promise<{
 *     rig: Rig;                              // fresh, unconfigured, using the default SafetySupervisor options
 *                                            // (or pass the ones it uses in `options`)
 *     clock: Clock;                          // the clock the rig reads its time from
 *     advance(seconds: number): Promise<void>;  // let `seconds` of rig time pass with rig.tick() called
 *                                            // every control cycle and no writes — exactly what the
 *                                            // control loop does when the command source is silent.
 *                                            // `tickThrough` below does this for clocks whose
 *                                            // waitUntil moves time (SteppedClock, RealtimeClock).
 *     dispose(): Promise<void>;              // stop everything the rig started (ports, workers, emulators)
 *   }>
 *
 *   Optional probes, for rigs that can give them (the tests that need one are skipped otherwise):
 *     motors(): Promise<{left, right}>       // what each arm's motors are doing NOW, read from the motors
 *                                            // themselves (emulator) or the simulated joints:
 *                                            // 'stiff' (position gain > 0), 'damp' (kp = 0, damping only),
 *                                            // 'off' (disabled / no torque). Resolves once what the rig
 *                                            // last sent has reached the motors.
 *     injectFault(side): void                // a motor fault on one arm, as the hardware reports it
 *     clearFaults(): void                    // the fault is gone (a rig that clears motor errors on
 *                                            // activate() may leave this out)
 *
 *   options: { controlPeriodS?: number (default 1/250), holdAfterMs?: number (default 100),
 *              dampAfterMs?: number (default 2000) } — must match the rig's supervisor settings.
 *
 * The suite only commands motions that gravity does not disturb much (base yaw, wrist, gripper),
 * so a physical or simulated arm passes it as well as the mirror. Tolerances are for a settled
 * position-controlled arm (±0.05 rad).
 */
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import {
  ARM_SIDES,
  RigError,
  STATE_DIM,
  stateIndex,
  type ArmSide,
  type Clock,
  type Rig,
  type RigCommand,
  type SafetyEvent,
} from '../../src/rig/contract.js';
import {
  DEFAULT_DAMP_AFTER_MS,
  DEFAULT_HOLD_AFTER_MS,
  DEFAULT_CONTROL_PERIOD_S,
  type ArmDrive,
} from '../../src/rig/safety.js';

/** What an arm's motors are doing, seen from the motors. */
export type MotorDrive = 'off' | 'stiff' | 'damp';

export interface RigUnderTest {
  readonly rig: Rig;
  readonly clock: Clock;
  advance(seconds: number): Promise<void>;
  dispose(): Promise<void>;
  motors?(): Promise<Record<ArmSide, MotorDrive>>;
  injectFault?(side: ArmSide): void;
  clearFaults?(): void;
}

export interface RigContractOptions {
  readonly controlPeriodS?: number;
  readonly holdAfterMs?: number;
  readonly dampAfterMs?: number;
}

/** `advance` for clocks whose waitUntil moves time: ticks the rig once per control period. */
export async function tickThrough(
  rig: Rig,
  clock: Clock,
  seconds: number,
  periodS = DEFAULT_CONTROL_PERIOD_S,
): Promise<void> {
  const end = clock.nowS() + seconds - 1e-9;
  let t = clock.nowS();
  while (t < end) {
    t = Math.min(t + periodS, end + 1e-9);
    await clock.waitUntil(t);
    rig.tick();
  }
}

const JOINT_TOL = 0.05;

export function describeRigContract(
  name: string,
  makeRig: () => Promise<RigUnderTest>,
  options: RigContractOptions = {},
): void {
  const period = options.controlPeriodS ?? DEFAULT_CONTROL_PERIOD_S;
  const holdS = (options.holdAfterMs ?? DEFAULT_HOLD_AFTER_MS) / 1000;
  const dampS = (options.dampAfterMs ?? DEFAULT_DAMP_AFTER_MS) / 1000;

  async function withRig(fn: (u: RigUnderTest) => Promise<void>): Promise<void> {
    const u = await makeRig();
    try {
      await fn(u);
    } finally {
      await u.dispose();
    }
  }

  async function activeRig(fn: (u: RigUnderTest) => Promise<void>): Promise<void> {
    await withRig(async (u) => {
      await u.rig.configure();
      await u.rig.activate();
      u.rig.takeSafetyEvents();
      await fn(u);
    });
  }

  /** Writes `target` every control cycle for `seconds`; returns copies of the last applied command. */
  async function drive(
    u: RigUnderTest,
    target: RigCommand,
    seconds: number,
  ): Promise<{ position: number[]; all: number[][] }> {
    const all: number[][] = [];
    const cycles = Math.max(1, Math.round(seconds / period));
    for (let i = 0; i < cycles; i++) {
      const applied = u.rig.write(target);
      all.push(Array.from(applied.position));
      await u.advance(period);
    }
    return { position: all[all.length - 1], all };
  }

  function current(u: RigUnderTest): Float64Array {
    return Float64Array.from(u.rig.read().position);
  }

  function hasEvent(events: SafetyEvent[], kind: SafetyEvent['kind']): SafetyEvent | undefined {
    return events.find((e) => e.kind === kind);
  }

  /**
   * Lets time pass until the rig reports a fault on that arm, at most 0.3 s: a real-time rig sees a motor's
   * fault status only in the reply to its next command, which a stalled event loop delays.
   */
  async function untilFault(u: RigUnderTest, side: ArmSide): Promise<void> {
    const end = u.clock.nowS() + 0.3;
    while (!u.rig.read().faults.some((f) => f.arm === side || f.arm === undefined) && u.clock.nowS() < end)
      await u.advance(period);
    await u.advance(2 * period); // the supervisor latches it on the next tick
  }

  /** Supervisor drive → what the motors may do: damping may also be a disabled motor. */
  function allowed(drive: ArmDrive): MotorDrive[] {
    return drive === 'track' ? ['stiff'] : drive === 'damp' ? ['damp', 'off'] : ['off'];
  }

  /**
   * The supervisor's transition table (docs/rig-model.md, test/rig/safety.test.ts) through the Rig:
   * every start state × every event, the mode after it, and — where the rig can show them — what
   * its motors do, checked after every control cycle: only activate() may make a motor stiff.
   */
  function describeTransitionTable(): void {
    type Expect = `${string} ${ArmDrive}/${ArmDrive}`;
    const starts: Record<string, { needsFault?: boolean; make(u: RigUnderTest): Promise<void> }> = {
      unconfigured: { make: async () => {} },
      configured: { make: async (u) => u.rig.configure() },
      active: {
        make: async (u) => {
          await u.rig.configure();
          await u.rig.activate();
          u.rig.write({ position: current(u) });
          await u.advance(period);
        },
      },
      holding: {
        make: async (u) => {
          await starts.active.make(u);
          u.rig.hold();
          await u.advance(period);
        },
      },
      fault: {
        needsFault: true,
        make: async (u) => {
          await starts.active.make(u);
          u.injectFault!('right');
          await untilFault(u, 'right');
          assert.equal(u.rig.read().mode, 'fault', 'the injected fault was seen');
        },
      },
      damped: {
        make: async (u) => {
          await starts.active.make(u);
          await u.rig.deactivate();
          await u.advance(period);
        },
      },
      estopped: {
        make: async (u) => {
          await starts.active.make(u);
          u.rig.estop('contract test');
          await u.advance(3 * period);
        },
      },
    };
    const events: Record<
      string,
      { needsFault?: boolean; apply(u: RigUnderTest, check: () => Promise<void>): Promise<void> }
    > = {
      estop: {
        apply: async (u, check) => {
          u.rig.estop('transition table');
          await check();
          await u.advance(period);
          await check();
          await u.advance(2 * period);
        },
      },
      hold: { apply: async (u) => u.rig.hold() },
      watchdog: {
        apply: async (u, check) => {
          await u.advance(holdS + 5 * period);
          await check();
          await u.advance(dampS - holdS + 5 * period);
        },
      },
      fault: {
        needsFault: true,
        apply: async (u) => {
          u.injectFault!('left');
          await untilFault(u, 'left');
        },
      },
      deactivate: { apply: async (u) => u.rig.deactivate() },
      activate: {
        apply: async (u) => {
          u.clearFaults?.();
          try {
            await u.rig.activate();
          } catch (e) {
            if (!(e instanceof RigError)) throw e;
          }
        },
      },
    };
    // [start][event] → "mode left/right" (supervisor drives). unconfigured + activate: a rig may
    // configure itself first (YamCanRig, RosRig) or refuse (MirrorRig, SimRig) — either way it is
    // active with both arms tracking or still unconfigured and unpowered.
    const table: Record<string, Record<string, Expect | Expect[]>> = {
      unconfigured: {
        estop: 'unconfigured off/off',
        hold: 'unconfigured off/off',
        watchdog: 'unconfigured off/off',
        fault: 'unconfigured off/off',
        deactivate: 'unconfigured off/off',
        activate: ['unconfigured off/off', 'active track/track'],
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
      holding: {
        estop: 'estopped damp/damp',
        hold: 'holding track/track',
        watchdog: 'holding track/track',
        fault: 'fault damp/track',
        deactivate: 'damped damp/damp',
        activate: 'active track/track',
      },
      fault: {
        estop: 'estopped damp/damp',
        hold: 'fault track/damp',
        watchdog: 'fault track/damp',
        fault: 'fault damp/damp',
        deactivate: 'damped damp/damp',
        activate: 'active track/track',
      },
      damped: {
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

    describe('transition table', () => {
      for (const [start, s] of Object.entries(starts)) {
        for (const [event, e] of Object.entries(events)) {
          const expected = ([] as Expect[]).concat(table[start][event]);
          test(`${start} + ${event} → ${expected.join(' or ')}`, async (t) => {
            const u = await makeRig();
            try {
              if ((s.needsFault || e.needsFault) && !u.injectFault) {
                t.skip('this rig under test has no fault injection');
                return;
              }
              await s.make(u);
              u.rig.takeSafetyEvents();
              const before = u.motors ? await u.motors() : undefined;
              // Only activate() may give a motor stiffness it did not have.
              const check = async () => {
                if (!before || event === 'activate') return;
                const now = await u.motors!();
                for (const side of ARM_SIDES) {
                  if (now[side] === 'stiff')
                    assert.equal(before[side], 'stiff', `the ${side} arm's motors went from ${before[side]} to stiff`);
                }
              };
              await e.apply(u, check);
              await check();
              const mode = u.rig.read().mode;
              const match = expected.find((x) => x.split(' ')[0] === mode);
              assert.ok(match, `mode ${mode}, expected ${expected.join(' or ')}`);
              if (u.motors) {
                const [left, right] = match.split(' ')[1].split('/') as ArmDrive[];
                const now = await u.motors();
                assert.ok(
                  allowed(left).includes(now.left) && allowed(right).includes(now.right),
                  `motors ${now.left}/${now.right} for drives ${left}/${right}`,
                );
              }
              // Before configure a rig may not know its state yet (a CAN rig reads NaN): no claim there.
              if (mode !== 'unconfigured')
                assert.ok(Array.from(u.rig.read().position).every(Number.isFinite), 'the state stays finite');
            } finally {
              await u.dispose();
            }
          });
        }
      }
    });
  }

  describe(`Rig contract: ${name}`, () => {
    test('the model (names, limits, gripper) is known before configure', async () => {
      await withRig(async ({ rig }) => {
        assert.equal(rig.model.arms.length, 2);
        assert.deepEqual(
          rig.model.arms.map((a) => a.side),
          ['left', 'right'],
        );
        for (const arm of rig.model.arms) {
          assert.equal(arm.joints.length, 6);
          for (const j of arm.joints) {
            assert.ok(
              Number.isFinite(j.minRad) && Number.isFinite(j.maxRad) && j.minRad < j.maxRad,
              `${j.name} limits`,
            );
            assert.ok(j.maxVelocityRadS > 0 && j.maxTorqueNm > 0, `${j.name} velocity/torque limits`);
          }
          assert.ok(arm.gripper.strokeM > 0);
        }
        assert.equal(rig.read().mode, 'unconfigured');
      });
    });

    test('read() gives 14 finite entries in policy order and the mode of each lifecycle step', async () => {
      await withRig(async (u) => {
        const { rig } = u;
        await rig.configure();
        const s = rig.read();
        const t0 = s.timeS;
        assert.equal(s.mode, 'configured');
        for (const arr of [s.position, s.velocity, s.effort]) {
          assert.equal(arr.length, STATE_DIM);
          assert.ok(Array.from(arr).every(Number.isFinite), 'finite state after configure');
        }
        assert.ok(Number.isFinite(t0));
        assert.deepEqual(s.faults, []);
        await rig.activate();
        assert.equal(rig.read().mode, 'active');
        // Policy order: commanding left joint 1 and the right gripper moves exactly those entries.
        const start = current(u);
        const target = Float64Array.from(start);
        const lj1 = stateIndex('left', 0);
        const rg = stateIndex('right', 6);
        target[lj1] = start[lj1] + 0.3;
        target[rg] = start[rg] > 0.5 ? 0.1 : 0.9;
        await drive(u, { position: target }, 1.0);
        await u.advance(0.3);
        const end = current(u);
        const t1 = rig.read().timeS;
        assert.ok(t1 > t0, 'state time advances with the clock');
        assert.ok(Math.abs(end[lj1] - target[lj1]) < JOINT_TOL, `left joint 1 reached ${end[lj1]} for ${target[lj1]}`);
        assert.ok(Math.abs(end[rg] - target[rg]) < 0.1, `right gripper reached ${end[rg]} for ${target[rg]}`);
        for (const k of [stateIndex('right', 0), stateIndex('left', 6)]) {
          assert.ok(Math.abs(end[k] - start[k]) < JOINT_TOL, `entry ${k} should not move (${start[k]} → ${end[k]})`);
        }
        await rig.deactivate();
        assert.equal(rig.read().mode, 'damped');
      });
    });

    test('a write before activate is dropped, reported, and returns the unchanged command', async () => {
      await withRig(async (u) => {
        await u.rig.configure();
        const before = current(u);
        const target = Float64Array.from(before);
        target[stateIndex('left', 0)] += 0.4;
        const applied = u.rig.write({ position: target });
        assert.notEqual(
          applied.position[stateIndex('left', 0)],
          target[stateIndex('left', 0)],
          'the new target was not applied',
        );
        const appliedCopy = Array.from(applied.position);
        const again = u.rig.write({ position: target });
        assert.deepEqual(Array.from(again.position), appliedCopy, 'nothing changes while inactive');
        await u.advance(0.2);
        assert.ok(
          Math.abs(current(u)[stateIndex('left', 0)] - before[stateIndex('left', 0)]) < 0.02,
          'the arm did not move',
        );
        assert.ok(hasEvent(u.rig.takeSafetyEvents(), 'command-dropped'));
        assert.equal(u.rig.read().mode, 'configured');
      });
    });

    test('write clamps an out-of-limit target to the joint limit and returns what was applied', async () => {
      await activeRig(async (u) => {
        const j = stateIndex('left', 4); // wrist, little gravity load
        const hi = u.rig.model.arms[0].joints[4].maxRad;
        const target = current(u);
        target[j] = hi + 0.5;
        const { position, all } = await drive(u, { position: target }, 1.2);
        assert.ok(
          all.every((p) => p[j] <= hi + 1e-9),
          'no applied target beyond the limit',
        );
        assert.ok(Math.abs(position[j] - hi) < 1e-9, `applied ${position[j]}, limit ${hi}`);
        await u.advance(0.3);
        assert.ok(
          Math.abs(current(u)[j] - hi) < JOINT_TOL,
          `the wrist settled at ${current(u)[j]} near its limit ${hi}`,
        );
        const clamp = hasEvent(u.rig.takeSafetyEvents(), 'position-clamped');
        assert.ok(clamp, 'a position-clamped event');
        assert.equal(clamp.arm, 'left');
        assert.equal(clamp.joint, 4);
      });
    });

    test('a non-finite command holds the current pose and is reported', async () => {
      await activeRig(async (u) => {
        const before = current(u);
        const bad = Float64Array.from(before);
        bad[stateIndex('right', 0)] = NaN;
        bad[stateIndex('left', 0)] += 0.3;
        const applied = u.rig.write({ position: bad });
        assert.ok(Array.from(applied.position).every(Number.isFinite), 'no NaN reaches the motors');
        assert.ok(
          Math.abs(applied.position[stateIndex('left', 0)] - before[stateIndex('left', 0)]) < JOINT_TOL,
          'the rest of the bad command is not applied either',
        );
        assert.equal(u.rig.read().mode, 'holding');
        await u.advance(0.05);
        assert.ok(Math.abs(current(u)[stateIndex('left', 0)] - before[stateIndex('left', 0)]) < JOINT_TOL);
        assert.ok(hasEvent(u.rig.takeSafetyEvents(), 'non-finite-command'));
      });
    });

    test('the watchdog holds when writes stop, then damps', async () => {
      await activeRig(async (u) => {
        u.rig.write({ position: current(u) });
        await u.advance(period);
        await u.advance(holdS + 5 * period);
        assert.equal(u.rig.read().mode, 'holding');
        assert.ok(hasEvent(u.rig.takeSafetyEvents(), 'watchdog-hold'));
        await u.advance(dampS - holdS + 5 * period);
        assert.equal(u.rig.read().mode, 'damped');
        assert.ok(hasEvent(u.rig.takeSafetyEvents(), 'watchdog-damp'));
        u.rig.write({ position: current(u) });
        assert.ok(
          hasEvent(u.rig.takeSafetyEvents(), 'command-dropped'),
          'after damping, commands need a new activation',
        );
      });
    });

    test('e-stop stops the arm within one control cycle with no feedforward, then damps (kp = 0 at the motors) and drops commands', async () => {
      await activeRig(async (u) => {
        const j = stateIndex('left', 0);
        const target = current(u);
        target[j] += 1.0;
        const v = new Float64Array(STATE_DIM).fill(0.3);
        await drive(u, { position: target, velocity: v }, 0.1); // moving at the speed limit, with feedforward
        const atStop = current(u);
        u.rig.estop('contract test');
        const events = u.rig.takeSafetyEvents();
        assert.ok(hasEvent(events, 'estop'), 'an estop event');
        assert.equal(u.rig.read().mode, 'estopped');
        // What the rig applies now (a dropped write returns it): the measured pose, no feedforward.
        const applied = u.rig.write({ position: target, velocity: v });
        assert.ok(hasEvent(u.rig.takeSafetyEvents(), 'command-dropped'));
        assert.ok(
          Math.abs(applied.position[j] - atStop[j]) < JOINT_TOL,
          `the stop target ${applied.position[j]} is where the arm was (${atStop[j]}), not where it was going (${target[j]})`,
        );
        assert.ok(
          Array.from(applied.velocity ?? []).every((x) => x === 0),
          'no velocity feedforward after the e-stop',
        );
        assert.ok(
          Array.from(applied.torqueNm ?? []).every((x) => x === 0),
          'no torque feedforward after the e-stop',
        );
        await u.advance(period);
        const stoppedAt = current(u)[j];
        await u.advance(2 * period);
        if (u.motors)
          assert.deepEqual(
            await u.motors(),
            { left: 'damp', right: 'damp' },
            'one cycle after the stop, every motor only damps',
          );
        await u.advance(0.3);
        assert.ok(
          Math.abs(current(u)[j] - stoppedAt) < JOINT_TOL,
          `kept moving after the e-stop: ${stoppedAt} → ${current(u)[j]}`,
        );
        assert.equal(u.rig.read().mode, 'estopped');
        if (u.motors)
          assert.deepEqual(await u.motors(), { left: 'damp', right: 'damp' }, 'still damping, not re-stiffened');
      });
    });

    describeTransitionTable();

    test('hold() keeps the pose and ignores commands until activated again', async () => {
      await activeRig(async (u) => {
        const before = current(u);
        u.rig.hold();
        assert.equal(u.rig.read().mode, 'holding');
        const target = Float64Array.from(before);
        target[stateIndex('left', 0)] += 0.3;
        u.rig.write({ position: target });
        await u.advance(0.2);
        assert.ok(Math.abs(current(u)[stateIndex('left', 0)] - before[stateIndex('left', 0)]) < JOINT_TOL);
        assert.ok(hasEvent(u.rig.takeSafetyEvents(), 'command-dropped'));
        await u.rig.activate();
        assert.equal(u.rig.read().mode, 'active');
      });
    });

    test('deactivate leaves the rig damped', async () => {
      await activeRig(async (u) => {
        await u.rig.deactivate();
        assert.equal(u.rig.read().mode, 'damped');
        await u.advance(0.05);
        assert.equal(u.rig.read().mode, 'damped');
        u.rig.write({ position: current(u) });
        assert.ok(hasEvent(u.rig.takeSafetyEvents(), 'command-dropped'));
      });
    });

    test('takeSafetyEvents drains, and every event is timestamped and worded', async () => {
      await withRig(async (u) => {
        await u.rig.configure();
        u.rig.write({ position: current(u) });
        const events = u.rig.takeSafetyEvents();
        assert.ok(events.length >= 1);
        for (const e of events) {
          assert.ok(Number.isFinite(e.timeS));
          assert.ok(
            typeof e.message === 'string' && e.message.length > 10 && /[.!]$/.test(e.message),
            `worded: ${e.message}`,
          );
        }
        assert.deepEqual(u.rig.takeSafetyEvents(), []);
      });
    });
  });
}
