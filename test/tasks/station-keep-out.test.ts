import { test } from 'node:test';
import assert from 'node:assert/strict';
import { yamRigModel } from '../../src/rig/yam.js';
import { linkFramesTable } from '../../src/rig/kinematics.js';
import { GRIPPER_GEOMETRY as G, LINK_RADIUS_M } from '../../src/sim/arm/geometry.js';
import { ARM_HOME_KEEP_OUT, TABLE_RECT, type StationArm } from '../../src/tasks/station.js';
import { fixtureFootprint, rectsOverlap } from '../../src/tasks/footprint.js';
import { allTasks, fixtureKindOf } from '../../src/tasks/registry.js';
import { armKeepOutsFor } from '../../src/layouts/sample.js';
import { ARM_BASE_XY_M, ARM_HOME_CLEAR_HEIGHT_M, ARM_HOME_RAISED_FROM_M } from '../../src/tasks/station.js';

/** Points bounding everything the arm occupies at home (joints zero), from FK: each link's capsule as the sim builds it (src/sim/arm/sim-arm.ts), gripper palm and fully open fingers. */
function homeFootprintPoints(side: StationArm): [number, number, number][] {
  const arm = yamRigModel().arms.find((a) => a.side === side)!;
  const frames = linkFramesTable(arm, [0, 0, 0, 0, 0, 0]);
  const pts: [number, number, number][] = [];
  for (let i = 0; i + 1 < frames.length; i++) {
    const a = frames[i].position;
    const b = frames[i + 1].position;
    // The base is a 0.05 m-radius cylinder; link i is a capsule of LINK_RADIUS_M[i] to the next joint.
    const r = i === 0 ? 0.05 : LINK_RADIUS_M[i];
    for (let s = 0; s <= 10; s++) {
      const x = a[0] + ((b[0] - a[0]) * s) / 10;
      const y = a[1] + ((b[1] - a[1]) * s) / 10;
      const z = a[2] + ((b[2] - a[2]) * s) / 10;
      for (const [dx, dy, dz] of [
        [r, 0, 0],
        [-r, 0, 0],
        [0, r, 0],
        [0, -r, 0],
        [0, 0, -r],
      ])
        pts.push([x + dx, y + dy, z + dz]);
    }
  }
  const g = frames[frames.length - 1];
  const R = g.rotation;
  const p = g.position;
  const half = arm.gripper.strokeM / 2;
  for (const sx of [-1, 1])
    for (const sy of [-1, 1])
      for (const sz of [-1, 1]) {
        for (const l of [
          [sx * G.palmHalfM[0], sy * G.palmHalfM[1], G.palmCentreZM + sz * G.palmHalfM[2]],
          [sx * G.fingerHalfM[0], sy * (half + 2 * G.fingerHalfM[1]), G.fingerCentreZM + sz * G.fingerHalfM[2]],
        ]) {
          pts.push(
            [0, 1, 2].map((r) => p[r] + R[r * 3] * l[0] + R[r * 3 + 1] * l[1] + R[r * 3 + 2] * l[2]) as [
              number,
              number,
              number,
            ],
          );
        }
      }
  // Only what is over the table matters; the folded links hang past the near edge.
  return pts.filter(([x]) => x >= TABLE_RECT.xMin);
}

test("each arm's home keep-out covers what the arm occupies at home, by FK, with at least 1 cm to spare", () => {
  for (const side of ['left', 'right'] as const) {
    const k = ARM_HOME_KEEP_OUT[side];
    const pts = homeFootprintPoints(side);
    assert.ok(pts.length > 20);
    const [bx] = ARM_BASE_XY_M[side];
    for (const [x, y, z] of pts) {
      assert.ok(
        x <= k.xMax - 0.01 && y >= k.yMin + 0.01 && y <= k.yMax - 0.01,
        `${side}: (${x.toFixed(3)}, ${y.toFixed(3)}) not inside the keep-out with margin`,
      );
      // In front of the base square the arm is raised: a fixture under the clear height fits beneath it.
      if (x > bx + ARM_HOME_RAISED_FROM_M)
        assert.ok(
          z >= ARM_HOME_CLEAR_HEIGHT_M + 0.02,
          `${side}: (${x.toFixed(3)}, ${y.toFixed(3)}) is only ${z.toFixed(3)} m up`,
        );
    }
    // And it is not wildly larger than the arm: the front edge is within 3 cm of the fingertips.
    const front = Math.max(...pts.map(([x]) => x));
    assert.ok(k.xMax - front <= 0.03, `${side}: keep-out front ${k.xMax} vs fingertips ${front.toFixed(3)}`);
  }
});

test("no task places a fixture taller than the clear height anywhere in its region and yaw range that intrudes on an arm's home keep-out", () => {
  for (const task of allTasks()) {
    for (const p of task.fixtures) {
      const kind = fixtureKindOf(task, p.kind)!;
      for (let i = 0; i <= 4; i++)
        for (let j = 0; j <= 4; j++)
          for (let k = 0; k <= 4; k++) {
            const pose = {
              x: p.region.xMin + ((p.region.xMax - p.region.xMin) * i) / 4,
              y: p.region.yMin + ((p.region.yMax - p.region.yMin) * j) / 4,
              yawRad: p.yawRangeRad[0] + ((p.yawRangeRad[1] - p.yawRangeRad[0]) * k) / 4,
            };
            const rect = fixtureFootprint(kind, pose);
            for (const ko of armKeepOutsFor(kind)) {
              assert.ok(
                !rectsOverlap(ko, rect, task.clearances.fixtureM),
                `${task.id}: ${p.id} at ${JSON.stringify(pose)} intrudes on a home keep-out`,
              );
            }
          }
    }
  }
});
