import { test } from 'node:test';
import assert from 'node:assert/strict';
import { describeRigContract, tickThrough } from './contract-suite.js';
import { MirrorRig } from '../../src/rig/mirror-rig.js';
import { SteppedClock } from '../../src/rig/clocks.js';
import { createRigRegistry, RigRegistry } from '../../src/rig/registry.js';
import { RigError, stateIndex } from '../../src/rig/contract.js';
import { yamRigModel } from '../../src/rig/yam.js';

describeRigContract('MirrorRig', async () => {
  const clock = new SteppedClock();
  const rig = new MirrorRig({ model: yamRigModel(), clock });
  // The mirror has no motors: its "motors" are the supervisor's drive it follows.
  const asMotor = { off: 'off', track: 'stiff', damp: 'damp' } as const;
  const motor = (side: 'left' | 'right') => asMotor[rig['supervisor'].drive(side)];
  return {
    rig,
    clock,
    advance: (s) => tickThrough(rig, clock, s),
    dispose: async () => {},
    motors: async () => ({ left: motor('left'), right: motor('right') }),
    injectFault: (side) =>
      rig.injectFault({
        kind: 'motor-fault',
        arm: side,
        joint: 2,
        message: `Motor 0x03 on the ${side} arm reports over-current.`,
      }),
    clearFaults: () => rig.clearFaults(),
  };
});

test('a motor fault on the mirror damps that arm and keeps the other holding', async () => {
  const clock = new SteppedClock();
  const rig = new MirrorRig({ model: yamRigModel(), clock });
  await rig.configure();
  await rig.activate();
  rig.injectFault({
    kind: 'motor-fault',
    arm: 'left',
    joint: 2,
    message: 'Motor 0x03 reports rotor over-temperature.',
  });
  await tickThrough(rig, clock, 0.01);
  assert.equal(rig.read().mode, 'fault');
  const ev = rig.takeSafetyEvents();
  assert.equal(ev.length, 1);
  assert.match(
    ev[0].message,
    /left arm joint 3: Motor 0x03 reports rotor over-temperature\. Damped the left arm; the right arm holds its pose/,
  );
  await assert.rejects(rig.activate(), /while a fault is present/);
  rig.clearFaults();
  await rig.activate();
  assert.equal(rig.read().mode, 'active');
});

test('the registry creates rigs by config type and names the known types for a wrong one', async () => {
  const registry = createRigRegistry();
  const clock = new SteppedClock();
  const rig = await registry.create(
    { type: 'mirror', lagS: 0.05, initialPosition: [0.2, 0, 0, 0, 0, 0, 1, 0, 0, 0, 0, 0, 0, 0] },
    { clock },
  );
  await rig.configure();
  assert.equal(rig.read().position[stateIndex('left', 0)], 0.2);
  await assert.rejects(
    registry.create({ type: 'yam-can' }, { clock }),
    (e: unknown) => e instanceof RigError && e.message === "Unknown rig type 'yam-can'; this station knows: mirror.",
  );
  await assert.rejects(registry.create({}, { clock }), /has no 'type'; use one of: mirror/);
  await assert.rejects(registry.create('mirror', { clock }), /must be an object/);
  await assert.rejects(
    registry.create({ type: 'mirror', lagS: -1 }, { clock }),
    /lagS must be a positive number, not -1/,
  );
  await assert.rejects(registry.create({ type: 'mirror', speed: 3 }, { clock }), /unknown field 'speed'/);
  await assert.rejects(
    registry.create({ type: 'mirror', initialPosition: [1, 2] }, { clock }),
    /initialPosition must be 14 numbers/,
  );
  // Other rooms register their own types from the composition root.
  const extended = new RigRegistry().register('fake-bus', 'test rig', () => rig);
  assert.equal(await extended.create({ type: 'fake-bus' }, { clock }), rig);
  assert.throws(() => extended.register('fake-bus', 'again', () => rig), /already registered/);
});

test('the mirror follows commands with a first-order lag', async () => {
  const clock = new SteppedClock();
  const rig = new MirrorRig({ model: yamRigModel(), clock, lagS: 0.1 });
  await rig.configure();
  await rig.activate();
  const target = Float64Array.from(rig.read().position);
  target[stateIndex('right', 4)] = 0.01; // small enough not to be speed-limited
  rig.write({ position: target });
  await tickThrough(rig, clock, 0.1);
  const p = rig.read().position[stateIndex('right', 4)];
  assert.ok(Math.abs(p - 0.01 * (1 - Math.exp(-1))) < 2e-4, `after one time constant: ${p}`);
});
