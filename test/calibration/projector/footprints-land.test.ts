/**
 * Proof: the projected footprints land on the table where the layout puts the objects, within
 * the calibration's own error. A hidden true projector (projector-geometry.ts) stands in for the
 * real one; the operator's crosshair alignment is simulated from it with seeded noise; the
 * station calibrates from those pairs alone, renders layouts, and we look at the rendered pixels
 * through the TRUE projector to see where on the table each outline would fall.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import sharp from 'sharp';
import { calibrateProjector } from '../../../calibration/projector/calibration-record.js';
import { invert, mapPoint, type Mat3, type Vec2 } from '../../../calibration/projector/homography.js';
import { LayoutProjector } from '../../../calibration/projector/layout-projector.js';
import { MemoryOutput } from '../../../calibration/projector/outputs.js';
import { OUTLINE_MM } from '../../../calibration/projector/projection-svg.js';
import { sampleLayoutSet } from '../../../src/layouts/layout-set.js';
import { objectFootprint, rectCorners } from '../../../src/tasks/footprint.js';
import { getTask } from '../../../src/tasks/registry.js';
import { RESOLUTION, simulateAlignment, TABLE_FIDUCIALS_MM, trueHomography } from './projector-geometry.js';

const H_TRUE = trueHomography();
const H_TRUE_INV = invert(H_TRUE);

function insidePolygon(p: Vec2, poly: readonly Vec2[]): boolean {
  let inside = false;
  for (let i = 0, j = poly.length - 1; i < poly.length; j = i++) {
    const [xi, yi] = poly[i];
    const [xj, yj] = poly[j];
    if (yi > p[1] !== yj > p[1] && p[0] < ((xj - xi) * (p[1] - yi)) / (yj - yi) + xi) inside = !inside;
  }
  return inside;
}

/** Projector px per table mm at a table point, through h. */
function scaleAt(h: Mat3, t: Vec2): number {
  const a = mapPoint(h, [t[0] + 1, t[1]]);
  const b = mapPoint(h, [t[0] - 1, t[1]]);
  const c = mapPoint(h, [t[0], t[1] + 1]);
  const d = mapPoint(h, [t[0], t[1] - 1]);
  return Math.sqrt(Math.abs(((a[0] - b[0]) * (c[1] - d[1]) - (c[0] - d[0]) * (a[1] - b[1])) / 4));
}

for (const [seed, noiseMm] of [
  [11, 1.0],
  [12, 2.5],
  [13, 0],
] as const) {
  test(`footprints rendered with a calibration from ${noiseMm} mm alignment noise land on their table positions within its own error (seed ${seed})`, async (t) => {
    const points = simulateAlignment(H_TRUE, TABLE_FIDUCIALS_MM, noiseMm, seed);
    const calibration = calibrateProjector({ points, resolution: RESOLUTION });
    const sigma = calibration.errors.sigmaMm;
    assert.ok(sigma !== null);
    const output = new MemoryOutput();
    const projector = new LayoutProjector({ calibration, output });
    let checked = 0;
    let worst = 0;
    for (const task of ['bottles-in-the-bin', 'mug-flipping'] as const) {
      const set = sampleLayoutSet({ task, tiers: [2, 4, 5], perTier: 1, seed });
      const kinds = getTask(task).objectKinds;
      for (let index = 0; index < set.layouts.length; index++) {
        await projector.show(set, index);
        const { data, info } = await sharp(output.last!.png).raw().toBuffer({ resolveWithObject: true });
        assert.equal(info.width, RESOLUTION.widthPx);
        for (const o of set.layouts[index].objects) {
          const kind = kinds.find((k) => k.id === o.kind)!;
          const rect = objectFootprint(kind, o.posture, o.pose);
          const centreMm: Vec2 = [rect.cx * 1000, rect.cy * 1000];
          // Look only near this footprint (as drawn: through the calibration), inflated past its
          // outline but well short of its neighbours (the sampler keeps ≥ 20 mm between them).
          const grow = OUTLINE_MM + 3;
          const search = rectCorners({ ...rect, halfX: rect.halfX + grow / 1000, halfY: rect.halfY + grow / 1000 }).map(
            ([x, y]) => mapPoint(calibration.tableToProjector, [x * 1000, y * 1000]),
          );
          const us = search.map((p) => p[0]);
          const vs = search.map((p) => p[1]);
          let sw = 0;
          let sx = 0;
          let sy = 0;
          for (
            let v = Math.max(0, Math.floor(Math.min(...vs)));
            v <= Math.min(info.height - 1, Math.ceil(Math.max(...vs)));
            v++
          ) {
            for (
              let u = Math.max(0, Math.floor(Math.min(...us)));
              u <= Math.min(info.width - 1, Math.ceil(Math.max(...us)));
              u++
            ) {
              const at = (v * info.width + u) * info.channels;
              // Only the white outline counts (cues are cyan, names yellow, fills dim).
              const white = Math.min(data[at], data[at + 1], data[at + 2]);
              if (white < 160 || !insidePolygon([u + 0.5, v + 0.5], search)) continue;
              // Where this pixel falls on the real table, weighted so each mm of outline counts
              // the same however much the keystone stretches it.
              const onTable = mapPoint(H_TRUE_INV, [u + 0.5, v + 0.5]);
              const w = (white - 160) / scaleAt(H_TRUE, onTable);
              sw += w;
              sx += w * onTable[0];
              sy += w * onTable[1];
            }
          }
          assert.ok(sw > 0, `${o.id} in layout ${index} of ${task}: no outline found in the image`);
          const landed: Vec2 = [sx / sw, sy / sw];
          const missMm = Math.hypot(landed[0] - centreMm[0], landed[1] - centreMm[1]);
          // The calibration's own error: its noise estimate, 3σ per axis (radial √2), plus a pixel of rasterisation.
          const boundMm = 3 * Math.SQRT2 * sigma + 1 / scaleAt(H_TRUE, centreMm);
          assert.ok(
            missMm <= boundMm,
            `${o.id} (${o.posture}) in layout ${index} of ${task} lands ${missMm.toFixed(2)} mm from its place; the calibration allows ${boundMm.toFixed(2)} mm (sigma ${sigma} mm)`,
          );
          worst = Math.max(worst, missMm / boundMm);
          checked++;
        }
      }
    }
    assert.ok(checked >= 15, `only ${checked} objects checked`);
    // The bound is not vacuous: it is a few mm, smaller than a bottle's radius.
    assert.ok(3 * Math.SQRT2 * sigma < 15, `sigma ${sigma}`);
    t.diagnostic(`worst landing ${(worst * 100).toFixed(0)} % of the bound over ${checked} objects`);
  });
}

test('a blank frame is all black at the projector resolution', async () => {
  const calibration = calibrateProjector({
    points: simulateAlignment(H_TRUE, TABLE_FIDUCIALS_MM, 1, 3),
    resolution: RESOLUTION,
  });
  const output = new MemoryOutput();
  await new LayoutProjector({ calibration, output }).blank();
  const { data, info } = await sharp(output.last!.png).raw().toBuffer({ resolveWithObject: true });
  assert.deepEqual([info.width, info.height], [1920, 1080]);
  assert.equal(
    data.reduce((m, v) => Math.max(m, v), 0),
    0,
  );
  assert.equal(output.last!.kind, 'blank');
});
