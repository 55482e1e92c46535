import { test } from 'node:test';
import assert from 'node:assert/strict';
import { allTasks } from '../../src/tasks/registry.js';
import { armsReaching } from '../../src/tasks/station.js';
import {
  fixtureFootprint,
  objectFootprint,
  rectCorners,
  rectInside,
  rectsOverlap,
  toFixtureFrame,
} from '../../src/tasks/footprint.js';
import type { Layout, TaskDefinition } from '../../src/tasks/types.js';
import { createRng } from '../../src/layouts/random.js';
import { ARM_BASE_RECTS, sampleLayout, sampleLayouts } from '../../src/layouts/sample.js';
import { LayoutSetError } from '../../src/layouts/errors.js';

const PER_TIER = 6;
const EPS = 1e-9;
const isRounded = (v: number) => Math.abs(v * 1e4 - Math.round(v * 1e4)) < 1e-6;

function checkLayout(task: TaskDefinition, layout: Layout): void {
  const spec = task.tiers.find((t) => t.tier === layout.tier)!;
  const where = `${task.id} tier ${layout.tier} layout ${layout.index}`;
  const n = layout.objects.length;
  assert.ok(n >= spec.minObjects && n <= spec.maxObjects, `${where}: ${n} objects`);
  assert.equal(new Set(layout.objects.map((o) => o.id)).size, n, `${where}: ids unique`);

  // Fixtures: every placement present, inside its region, fixed ones at the centre.
  assert.deepEqual(
    layout.fixtures.map((f) => f.id),
    task.fixtures.map((f) => f.id),
  );
  const fixtureRects = layout.fixtures.map((f) => {
    const p = task.fixtures.find((q) => q.id === f.id)!;
    assert.ok(
      f.pose.x >= p.region.xMin - EPS &&
        f.pose.x <= p.region.xMax + EPS &&
        f.pose.y >= p.region.yMin - EPS &&
        f.pose.y <= p.region.yMax + EPS,
      `${where}: ${f.id} in its region`,
    );
    assert.ok(
      f.pose.yawRad >= p.yawRangeRad[0] - 1e-4 && f.pose.yawRad <= p.yawRangeRad[1] + 1e-4,
      `${where}: ${f.id} yaw`,
    );
    if (!spec.draw.fixturesVary) assert.equal(f.pose.x, Math.round(((p.region.xMin + p.region.xMax) / 2) * 1e4) / 1e4);
    const rect = fixtureFootprint(task.fixtureKinds.find((k) => k.id === f.kind)!, f.pose);
    for (const b of ARM_BASE_RECTS) assert.ok(!rectsOverlap(b, rect), `${where}: ${f.id} clear of the arm bases`);
    return rect;
  });

  const rects = layout.objects.map((o) => {
    const kind = task.objectKinds.find((k) => k.id === o.kind)!;
    assert.ok(spec.draw.kinds.includes(o.kind), `${where}: ${o.id} kind ${o.kind} belongs to the tier`);
    assert.ok(isRounded(o.pose.x) && isRounded(o.pose.y) && isRounded(o.pose.yawRad), `${where}: ${o.id} pose rounded`);
    assert.ok(armsReaching(o.pose.x, o.pose.y).length > 0, `${where}: ${o.id} reachable`);
    if (o.posture !== 'upside-down')
      assert.ok(spec.draw.postures.includes(o.posture), `${where}: ${o.id} posture ${o.posture}`);
    if (kind.restingPostures) assert.ok(kind.restingPostures.includes(o.posture), `${where}: ${o.id} rests as it can`);
    const rect = objectFootprint(kind, o.posture, o.pose);
    assert.equal(o.inFixture, spec.draw.inFixture);
    if (o.inFixture) {
      const host = layout.fixtures.find((f) => f.id === o.inFixture)!;
      const region = task.fixtureKinds.find((k) => k.id === host.kind)!.regions[0];
      for (const [x, y] of rectCorners(rect)) {
        const [lx, ly] = toFixtureFrame(host.pose, x, y);
        assert.ok(
          Math.abs(lx - region.centerM[0]) <= region.sizeM[0] / 2 - task.clearances.inFixtureWallM + EPS,
          `${where}: ${o.id} inside ${host.id} (x)`,
        );
        assert.ok(
          Math.abs(ly - region.centerM[1]) <= region.sizeM[1] / 2 - task.clearances.inFixtureWallM + EPS,
          `${where}: ${o.id} inside ${host.id} (y)`,
        );
      }
    } else {
      assert.ok(rectInside(rect, task.workspace), `${where}: ${o.id} inside the workspace`);
      for (const f of fixtureRects)
        assert.ok(!rectsOverlap(f, rect, task.clearances.fixtureM - 1e-6), `${where}: ${o.id} clear of the fixtures`);
      for (const b of ARM_BASE_RECTS) assert.ok(!rectsOverlap(b, rect), `${where}: ${o.id} clear of the arm bases`);
    }
    return rect;
  });
  const clearance = spec.draw.inFixture ? task.clearances.inFixtureObjectM : task.clearances.objectM;
  for (let i = 0; i < n; i++) {
    for (let j = i + 1; j < n; j++) {
      assert.ok(
        !rectsOverlap(rects[i], rects[j], clearance - 1e-6),
        `${where}: ${layout.objects[i].id} and ${layout.objects[j].id} keep ${clearance} m apart`,
      );
    }
  }

  const upsideDown = layout.objects.filter((o) => o.posture === 'upside-down').length;
  const [udMin, udMax] = spec.draw.upsideDown ?? [0, 0];
  assert.ok(upsideDown >= udMin && upsideDown <= udMax, `${where}: ${upsideDown} upside down`);
  assert.ok(
    layout.objects.filter((o) => o.posture !== 'upright').length >= (spec.draw.minNotUpright ?? 0),
    `${where}: enough not upright`,
  );
}

for (const task of allTasks()) {
  test(`${task.id}: every tier's layouts keep the sampler's invariants`, () => {
    const layouts = sampleLayouts(task, [1, 2, 3, 4, 5], PER_TIER, createRng(20251130));
    assert.equal(layouts.length, 5 * PER_TIER);
    layouts.forEach((l, i) => {
      assert.equal(l.index, i);
      assert.equal(l.tier, Math.floor(i / PER_TIER) + 1);
      checkLayout(task, l);
    });
  });
}

test('tier postures: bottles stand at tiers 1–2 and some lie by tier 5; mugs turn upside down from tier 3', () => {
  const [bottles, mugs] = allTasks();
  const b = sampleLayouts(bottles, [1, 2, 5], 10, createRng(3));
  assert.ok(b.filter((l) => l.tier <= 2).every((l) => l.objects.every((o) => o.posture === 'upright')));
  assert.ok(b.filter((l) => l.tier === 5).some((l) => l.objects.some((o) => o.posture === 'lying')));
  const binPoses = new Set(b.filter((l) => l.tier === 5).map((l) => JSON.stringify(l.fixtures[0].pose)));
  assert.ok(binPoses.size > 1, 'the bin moves at tier 5');
  const m = sampleLayouts(mugs, [1, 2, 3, 5], 10, createRng(3));
  assert.ok(m.filter((l) => l.tier <= 2).every((l) => l.objects.every((o) => o.posture !== 'upside-down')));
  assert.ok(
    m.filter((l) => l.tier === 5).every((l) => l.objects.filter((o) => o.posture === 'upside-down').length >= 2),
  );
  assert.ok(
    m.every((l) => l.objects.some((o) => o.posture !== 'upright')),
    'every mug layout has something to flip',
  );
});

test('sort-from-tote tier 5 holds 45 parts in the tote, smaller on average than tier 1', () => {
  const sort = allTasks()[2];
  const [t1, t5] = [sampleLayouts(sort, [1], 3, createRng(9)), sampleLayouts(sort, [5], 3, createRng(9))];
  assert.ok(t5.every((l) => l.objects.length === 45 && l.objects.every((o) => o.inFixture === 'tote')));
  const mass = (ls: Layout[]) => {
    const all = ls.flatMap((l) => l.objects.map((o) => sort.objectKinds.find((k) => k.id === o.kind)!.massKg));
    return all.reduce((a, b) => a + b, 0) / all.length;
  };
  assert.ok(mass(t5) < mass(t1) / 2);
});

test('the same seed draws the same layouts; another seed draws others', () => {
  const task = allTasks()[0];
  const a = JSON.stringify(sampleLayouts(task, [3, 4], 4, createRng(11)));
  assert.equal(JSON.stringify(sampleLayouts(task, [3, 4], 4, createRng(11))), a);
  assert.notEqual(JSON.stringify(sampleLayouts(task, [3, 4], 4, createRng(12))), a);
});

test('a tier that cannot fit fails with a sentence after bounded attempts', () => {
  const task = allTasks()[0];
  const cramped: TaskDefinition = { ...task, workspace: { xMin: -0.2, xMax: -0.05, yMin: 0, yMax: 0.15 } };
  assert.throws(
    () => sampleLayout(cramped, 5, 0, createRng(1)),
    (e: unknown) =>
      e instanceof LayoutSetError && /Could not sample a tier 5 layout for bottles-in-the-bin/.test(e.message),
  );
  assert.throws(
    () => sampleLayout(task, 6, 0, createRng(1)),
    (e: unknown) => e instanceof LayoutSetError && /Tier 6 is out of range.*1 to 5/.test(e.message),
  );
});
