import { test } from 'node:test';
import assert from 'node:assert/strict';
import { sampleLayoutSet } from '../../src/layouts/layout-set.js';
import { ARM_KEEP_OUT_RECTS, armKeepOutsFor } from '../../src/layouts/sample.js';
import { layoutProblems } from '../../src/layouts/geometry-check.js';
import { layoutTopViewSvg } from '../../src/layouts/top-view.js';
import { fixtureFootprint, objectFootprint, rectsOverlap } from '../../src/tasks/footprint.js';
import { allTasks, fixtureKindOf, objectKindOf } from '../../src/tasks/registry.js';

test('sampled layouts of every task keep objects and fixtures out of where the arms rest at home', () => {
  for (const task of allTasks()) {
    const set = sampleLayoutSet({ task: task.id, tiers: [1, 2, 3, 4, 5], perTier: 3, seed: 11 });
    for (const layout of set.layouts) {
      for (const f of layout.fixtures) {
        const kind = fixtureKindOf(task, f.kind)!;
        for (const k of armKeepOutsFor(kind))
          assert.ok(
            !rectsOverlap(k, fixtureFootprint(kind, f.pose)),
            `${task.id} layout ${layout.index}: ${f.id} meets an arm at home`,
          );
      }
      for (const o of layout.objects) {
        if (o.inFixture) continue;
        const rect = objectFootprint(objectKindOf(task, o.kind)!, o.posture, o.pose);
        for (const k of ARM_KEEP_OUT_RECTS)
          assert.ok(
            !rectsOverlap(k, rect),
            `${task.id} layout ${layout.index}: ${o.id} lies where an arm rests at home`,
          );
      }
    }
  }
});

test('a hand-edited bin moved back to its old home is named as standing where an arm rests', () => {
  const set = sampleLayoutSet({ task: 'bottles-in-the-bin', tiers: [1], perTier: 1, seed: 3 });
  const task = allTasks().find((t) => t.id === 'bottles-in-the-bin')!;
  const layout = {
    ...set.layouts[0],
    fixtures: [{ id: 'bin', kind: 'bin', pose: { x: -0.025, y: -0.3, yawRad: 0 } }],
    objects: [],
  };
  assert.deepEqual(layoutProblems(task, layout), [
    `layout ${layout.index}: the bin stands where an arm rests at home.`,
  ]);
});

test("the top view draws both arms' home keep-outs, lightly", () => {
  const set = sampleLayoutSet({ task: 'bottles-in-the-bin', tiers: [1], perTier: 1, seed: 3 });
  const svg = layoutTopViewSvg(set, 0, 600);
  const keepOuts = svg.match(/<rect class="keep-out"[^>]*>/g) ?? [];
  assert.equal(keepOuts.length, 2);
  for (const r of keepOuts) assert.match(r, /fill-opacity="0\.15"/);
});
