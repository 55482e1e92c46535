/** The shared scene description: a layout's bodies where the operator places them, with looks for every kind. */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { getTask } from '../../src/tasks/registry.js';
import { sampleLayoutSet } from '../../src/layouts/layout-set.js';
import { catalogueVisuals, cellBodies, cellVisuals, layoutBodies } from '../../src/scene3d/cell-visuals.js';

test("a layout's bodies sit at its poses, each with a look the catalogue defines; an unknown kind is refused by name", () => {
  for (const taskId of ['bottles-in-the-bin', 'sort-from-tote', 'mug-flipping'] as const) {
    const task = getTask(taskId);
    const set = sampleLayoutSet({ task: taskId, tiers: [1, 3], perTier: 1, seed: 11 });
    const layout = set.layouts[1];
    const bodies = layoutBodies(task, layout);
    assert.equal(bodies.length, layout.objects.length + layout.fixtures.length);
    const looks = { ...cellVisuals(), ...catalogueVisuals(task) };
    for (const b of [...bodies, ...cellBodies()]) assert.ok(looks[b.visual], `${taskId}: ${b.key} has a look`);
    for (const f of layout.fixtures) {
      const b = bodies.find((x) => x.key === `fixture:${f.id}`)!;
      assert.deepEqual(b.pose.position, [f.pose.x, f.pose.y, 0]);
    }
    for (const o of layout.objects.filter((x) => x.posture === 'upright')) {
      const b = bodies.find((x) => x.key === `object:${o.id}`)!;
      assert.deepEqual(b.pose.position.slice(0, 2), [o.pose.x, o.pose.y]);
    }
  }
  const task = getTask('bottles-in-the-bin');
  const layout = sampleLayoutSet({ task: 'bottles-in-the-bin', tiers: [1], perTier: 1, seed: 1 }).layouts[0];
  const bad = { ...layout, objects: [{ ...layout.objects[0], kind: 'anvil' }] };
  assert.throws(
    () => layoutBodies(task, bad),
    /Object "bottle-1" is of kind "anvil", which task bottles-in-the-bin does not define/,
  );
});
