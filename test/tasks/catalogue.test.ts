import { test } from 'node:test';
import assert from 'node:assert/strict';
import {
  BIN,
  BOLTS,
  BOTTLE,
  MUG,
  NUTS,
  RINGS,
  SCREWS,
  SORTER,
  SORTER_SLOT_CATEGORIES,
  TOTE,
  categoryOf,
} from '../../src/tasks/catalogue.js';
import { objectFootprint, objectHeightM, objectPose3, partsBounds, rectsOverlap } from '../../src/tasks/footprint.js';
import type { ObjectKind, Posture } from '../../src/tasks/types.js';

test('the bottle holds half a litre and the mug is a cup with a handle', () => {
  const body = BOTTLE.parts[0].shape;
  assert.equal(body.type, 'cylinder');
  if (body.type === 'cylinder') assert.ok(Math.PI * body.radiusM ** 2 * body.heightM > 0.0005);
  assert.ok(Math.abs(objectHeightM(BOTTLE) - 0.205) < 1e-9);
  assert.deepEqual(
    MUG.parts.map((p) => p.shape.type),
    ['cup', 'box'],
  );
  assert.ok(BOTTLE.massKg > 0.5 && BOTTLE.massKg < 0.6);
});

test('parts come in three sizes per category, each heavier as it grows, one sorter slot per category', () => {
  for (const family of [SCREWS, BOLTS, NUTS, RINGS]) {
    assert.equal(family.length, 3);
    assert.equal(new Set(family.map(categoryOf)).size, 1);
    assert.ok(family[0].massKg < family[1].massKg && family[1].massKg < family[2].massKg);
  }
  assert.deepEqual(
    SORTER.regions.map((r) => r.acceptsKind),
    [...SORTER_SLOT_CATEGORIES],
  );
  assert.deepEqual([...SORTER_SLOT_CATEGORIES].sort(), ['bearing-ring', 'bolt', 'nut', 'screw']);
  assert.equal(BIN.movable, true);
  assert.equal(TOTE.movable, false);
});

test('fixture regions lie inside the fixture footprint', () => {
  for (const f of [BIN, TOTE, SORTER]) {
    for (const r of f.regions) {
      assert.ok(Math.abs(r.centerM[0]) + r.sizeM[0] / 2 <= f.footprintHalfM[0] + 1e-9, `${f.id} ${r.id} x`);
      assert.ok(Math.abs(r.centerM[1]) + r.sizeM[1] / 2 <= f.footprintHalfM[1] + 1e-9, `${f.id} ${r.id} y`);
    }
  }
});

function restingMinZ(kind: ObjectKind, posture: Posture): number {
  // Transform every bounding corner of the upright object by the posture's 3D pose.
  const pose = objectPose3(kind, posture, { x: 0.1, y: -0.2, yawRad: 0.7 });
  const b = partsBounds(kind.parts);
  const [qx, qy, qz, qw] = pose.quaternion;
  let minZ = Infinity;
  for (const x of [b.min[0], b.max[0]])
    for (const y of [b.min[1], b.max[1]])
      for (const z of [b.min[2], b.max[2]]) {
        const tz = 2 * (qx * y - qy * x);
        const tx = 2 * (qy * z - qz * y);
        const ty = 2 * (qz * x - qx * z);
        minZ = Math.min(minZ, pose.position[2] + z + qw * tz + (qx * ty - qy * tx));
      }
  return minZ;
}

test('every posture rests the object on the table, not in it or above it', () => {
  for (const posture of ['upright', 'lying', 'upside-down'] as const) {
    for (const kind of [BOTTLE, MUG, BOLTS[1]])
      assert.ok(Math.abs(restingMinZ(kind, posture)) < 1e-9, `${kind.id} ${posture}`);
  }
});

test("a lying bottle's footprint is as long as the bottle and points along its yaw", () => {
  const r = objectFootprint(BOTTLE, 'lying', { x: 0, y: 0, yawRad: Math.PI / 2 });
  assert.ok(Math.abs(r.halfX - 0.1025) < 1e-9);
  assert.ok(Math.abs(r.halfY - 0.0325) < 1e-9);
  // Turned a quarter circle, it reaches 0.1 m along y and only 0.03 m along x.
  assert.ok(rectsOverlap(r, { cx: 0, cy: 0.1, halfX: 0.001, halfY: 0.001, yawRad: 0 }));
  assert.ok(!rectsOverlap(r, { cx: 0.05, cy: 0, halfX: 0.001, halfY: 0.001, yawRad: 0 }));
  const up = objectFootprint(MUG, 'upright', { x: 0, y: 0, yawRad: 0 });
  const down = objectFootprint(MUG, 'upside-down', { x: 0, y: 0, yawRad: 0 });
  assert.ok(up.cy > 0 && down.cy < 0, 'the handle side flips when the mug is upside down');
});

test('rectangles closer than the clearance overlap; farther ones do not', () => {
  const a = { cx: 0, cy: 0, halfX: 0.05, halfY: 0.05, yawRad: 0 };
  const b = { cx: 0.115, cy: 0, halfX: 0.05, halfY: 0.05, yawRad: 0 };
  assert.ok(!rectsOverlap(a, b, 0.01));
  assert.ok(rectsOverlap(a, b, 0.02));
  const diamond = { ...b, cx: 0.12, yawRad: Math.PI / 4 }; // its corner reaches 0.12 − 0.0707
  assert.ok(rectsOverlap(a, diamond));
});
