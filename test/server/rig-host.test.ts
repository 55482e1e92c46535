/**
 * The station's rig host with a MirrorRig (commands mirrored to state through the real safety
 * supervisor): hold under the control loop, damp, E-stop while a rollout's rig is still being set
 * up, and a set-up that failed tried again by Hold.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { RigError, type Rig } from '../../src/rig/contract.js';
import { MirrorRig } from '../../src/rig/mirror-rig.js';
import { yamRigModel } from '../../src/rig/yam.js';
import { getTask } from '../../src/tasks/registry.js';
import { sampleLayoutSet } from '../../src/layouts/layout-set.js';
import { RigBusyError, RigHost, type RigParts } from '../../src/server/rig-host.js';

const set = sampleLayoutSet({ task: 'bottles-in-the-bin', tiers: [1], perTier: 1, seed: 1 });
const table = { task: getTask(set.task), layout: set.layouts[0] };

function parts(over: Partial<RigParts> = {}): RigParts {
  return {
    type: 'mirror',
    create: ({ clock }) =>
      Promise.resolve({ rig: new MirrorRig({ model: yamRigModel(), clock }), services: undefined }),
    motors: () => [],
    cell: () => null,
    ...over,
  };
}

test('Hold powers the rig under the control loop, Damp turns it off, and both are refused while a rollout has the rig', async () => {
  const host = new RigHost(parts());
  await host.start();
  assert.equal(host.status().mode, 'configured');
  await host.hold();
  assert.equal(host.status().mode, 'active');
  assert.equal(host.status().use, 'holding');
  await new Promise((r) => setTimeout(r, 300));
  // The loop keeps commanding the hold pose: the supervisor's command watchdog (hold after 100 ms) never fires.
  assert.deepEqual(
    host.status().recentEvents.filter((e) => e.kind === 'watchdog-hold'),
    [],
  );
  assert.equal(host.status().mode, 'active');
  await host.damp();
  assert.equal(host.status().mode, 'damped');
  let release!: () => void;
  const rollout = host.forRollout(table, async (rig: Rig) => {
    await new Promise<void>((r) => (release = r));
    return rig.read().mode;
  });
  await new Promise((r) => setTimeout(r, 20));
  await assert.rejects(
    host.hold(),
    (e: unknown) => e instanceof RigBusyError && /a rollout has the rig/.test(e.message),
  );
  release();
  await rollout;
  await host.close();
});

test("E-stop while the rollout's rig is being set up stops the rollout before it runs", async () => {
  let created!: () => void;
  const host = new RigHost(
    parts({
      create: async ({ clock, table: t }) => {
        if (t) await new Promise<void>((r) => (created = r));
        return { rig: new MirrorRig({ model: yamRigModel(), clock }), services: undefined };
      },
    }),
  );
  await host.start();
  let ran = false;
  const rollout = host.forRollout(table, () => {
    ran = true;
    return Promise.resolve();
  });
  await new Promise((r) => setTimeout(r, 20));
  assert.equal(host.status().use, 'changing');
  host.estop('test');
  created();
  await assert.rejects(
    rollout,
    (e: unknown) =>
      e instanceof RigBusyError && /stopped \(Stop or E-stop\) before it started; nothing moved/.test(e.message),
  );
  assert.equal(ran, false);
  await host.close();
});

test('a rig that could not be set up for a rollout is said in the status, and Hold sets it up again', async () => {
  let fail = false;
  const host = new RigHost(
    parts({
      create: ({ clock }) => {
        if (fail)
          return Promise.reject(
            new RigError('The adapter is unplugged.', { kind: 'bus-error', message: 'The adapter is unplugged.' }),
          );
        return Promise.resolve({ rig: new MirrorRig({ model: yamRigModel(), clock }), services: undefined });
      },
    }),
  );
  await host.start();
  fail = true;
  await assert.rejects(
    host.forRollout(table, () => Promise.resolve()),
    RigError,
  );
  assert.match(host.status().note ?? '', /could not be set up for the rollout: The adapter is unplugged\. Press Hold/);
  fail = false;
  await host.hold();
  assert.equal(host.status().mode, 'active');
  await host.close();
  assert.equal(host.status().mode, 'unconfigured', 'closed: no rig left');
});
