import { test } from 'node:test';
import assert from 'node:assert/strict';
import { DEFAULT_BASE_POSES } from '../../src/rig/yam.js';
import { ARM_BASE_XY_M, ARM_REACH_MAX_M, ARM_REACH_MIN_M, armsReaching, TABLE_RECT } from '../../src/tasks/station.js';
import { SORTER, TOTE } from '../../src/tasks/catalogue.js';
import { getTask } from '../../src/tasks/registry.js';
import { fixtureFootprint, rectCorners, rectInside } from '../../src/tasks/footprint.js';

test('the rig model stands its arms where the station geometry says', () => {
  assert.deepEqual(ARM_BASE_XY_M.left, [-0.4, 0.3]);
  assert.deepEqual(ARM_BASE_XY_M.right, [-0.4, -0.3]);
  for (const side of ['left', 'right'] as const) {
    assert.deepEqual(DEFAULT_BASE_POSES[side].position.slice(0, 2), [...ARM_BASE_XY_M[side]]);
    assert.deepEqual([...DEFAULT_BASE_POSES[side].quaternion], [0, 0, 0, 1]);
  }
});

test('reach is an annulus around each base', () => {
  const [lx, ly] = ARM_BASE_XY_M.left;
  assert.deepEqual(armsReaching(lx + ARM_REACH_MIN_M - 0.01, ly), []);
  assert.deepEqual(armsReaching(lx + 0.3, ly), ['left']);
  assert.deepEqual(armsReaching(lx + ARM_REACH_MAX_M + 0.01, ly), []);
  assert.deepEqual(armsReaching(-0.1, 0), ['left', 'right']);
});

test("sort-from-tote: the tote is the left arm's, and only the bearing-ring slot needs the right arm", () => {
  const task = getTask('sort-from-tote');
  const pose = (id: string) => {
    const r = task.fixtures.find((f) => f.id === id)!.region;
    return { x: r.xMin, y: r.yMin, yawRad: 0 };
  };
  const tote = pose('tote');
  assert.deepEqual(armsReaching(tote.x, tote.y), ['left']);
  const sorter = pose('sorter');
  for (const region of SORTER.regions) {
    const arms = armsReaching(sorter.x + region.centerM[0], sorter.y + region.centerM[1]);
    if (region.needsHandover) assert.deepEqual(arms, ['right'], region.id);
    else assert.ok(arms.includes('left'), `${region.id} reachable from the tote's arm`);
  }
  assert.equal(SORTER.regions.filter((r) => r.needsHandover).length, 1);
  // The handover slot is the rightmost one (most negative y, the robot faces +x).
  const rightmost = [...SORTER.regions].sort((a, b) => a.centerM[1] - b.centerM[1])[0];
  assert.equal(rightmost.needsHandover, true);
  for (const [kind, p] of [
    [TOTE, tote],
    [SORTER, sorter],
  ] as const) {
    assert.ok(rectInside(fixtureFootprint(kind, p), TABLE_RECT));
    assert.ok(
      rectCorners(fixtureFootprint(kind, p)).every(
        ([x, y]) =>
          x >= task.workspace.xMin && x <= task.workspace.xMax && y >= task.workspace.yMin && y <= task.workspace.yMax,
      ),
    );
  }
});
