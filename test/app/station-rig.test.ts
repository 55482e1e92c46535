import { test } from 'node:test';
import assert from 'node:assert/strict';
import { VirtualClock } from '../../src/rig/clocks.js';
import { sampleLayoutSet } from '../../src/layouts/layout-set.js';
import { getTask } from '../../src/tasks/registry.js';
import { createStationRig, rigKindOf } from '../../src/app/station-rig.js';
import { openStationCameras } from '../../src/app/station-cameras.js';
import { UserError } from '../../src/app/command.js';

test('a rig without a world of its own says, for each thing the cell would bring, why this station has none', async () => {
  const { rig, services } = await createStationRig({ type: 'mirror' }, { clock: new VirtualClock() });
  try {
    for (const [name, s] of Object.entries({
      cameraRenderer: services.cameraRenderer,
      tableTracker: services.tableTracker,
      endStateScorer: services.endStateScorer,
      objectPoses: services.objectPoses,
    })) {
      assert.equal(s.available, false, name);
      if (!s.available) assert.match(s.why, /^[a-z].* [a-z].*[^.]$/, `${name}: a clause of a sentence`);
    }
    assert.equal(services.world(), null);
    assert.equal(services.bodies(), null);
    assert.equal(services.rehearsal, undefined, 'its rollouts are results');
    assert.equal(services.marker, undefined);
    // A camera of source "cell" on it: one sentence naming the camera, before anything opens.
    await assert.rejects(
      openStationCameras([{ name: 'cam_high', kind: 'cell', fps: 5 }], {
        renderer: services.cameraRenderer,
        clock: new VirtualClock(),
        source: 'station.json',
      }),
      (e: unknown) =>
        e instanceof UserError &&
        e.message ===
          `Camera cam_high in station.json has source "cell", but only the emulated cell's rig (type yam-cell) renders them; give it a "v4l2:/dev/videoN" or "testsrc" source.`,
    );
  } finally {
    await rig.close?.();
  }
});

test('the emulated cell preset brings its renderer, table tracker, scorer and world, and marks its rollouts as rehearsals', async () => {
  const set = sampleLayoutSet({ task: 'bottles-in-the-bin', tiers: [2], perTier: 1, seed: 3 });
  const layout = set.layouts[0];
  const { rig, services } = await createStationRig(
    { type: 'yam-cell', clock: 'virtual' },
    { clock: new VirtualClock(), table: { task: getTask(set.task), layout } },
  );
  try {
    assert.equal(services.cameraRenderer.available, true);
    assert.equal(services.objectPoses.available, true);
    assert.ok(services.endStateScorer.available);
    assert.equal(services.endStateScorer.operator, 'scripted operator (emulated cell)');
    assert.ok(services.tableTracker.available);
    // The tracker sees what the operator placed: the layout's objects.
    assert.deepEqual(
      services.tableTracker
        .sightings()
        .map((s) => s.id)
        .sort(),
      layout.objects.map((o) => o.id).sort(),
    );
    const world = services.world();
    assert.ok(world);
    assert.deepEqual(
      { task: world.task, tier: world.tier, objects: world.objects },
      { task: 'bottles-in-the-bin', tier: 2, objects: layout.objects.length },
    );
    assert.match(world.truthSha256, /^[0-9a-f]{64}$/);
    assert.equal(services.marker?.kind, 'emulated-cell');
    assert.equal(services.rehearsal, 'it ran on the emulated cell');
    assert.ok((services.bodies() ?? []).length > layout.objects.length, 'objects and fixtures for the live view');
  } finally {
    await rig.close?.();
  }
});

test('a rig type says from its config alone whether real arms move and whether it is a world of its own', () => {
  assert.deepEqual(rigKindOf({ type: 'yam-can' }), { realArms: true, ownWorld: false });
  assert.deepEqual(rigKindOf({ type: 'ros' }), { realArms: true, ownWorld: false });
  assert.deepEqual(rigKindOf({ type: 'yam-cell' }), { realArms: false, ownWorld: true });
  assert.deepEqual(rigKindOf({ type: 'yam-emulated' }), { realArms: false, ownWorld: false });
  assert.deepEqual(rigKindOf({ type: 'mirror' }), { realArms: false, ownWorld: false });
});
