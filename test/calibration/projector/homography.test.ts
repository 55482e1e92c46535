import { test } from 'node:test';
import assert from 'node:assert/strict';
import {
  fitHomography,
  mapPoint,
  ProjectorCalibrationError,
  type Mat3,
  type PointPair,
  type Vec2,
} from '../../../calibration/projector/homography.js';
import { calibrateProjector } from '../../../calibration/projector/calibration-record.js';
import { OVERHEAD, RESOLUTION, simulateAlignment, TABLE_FIDUCIALS_MM, trueHomography } from './projector-geometry.js';

const H = trueHomography();
const exactPairs = (h: Mat3, pts: readonly Vec2[]): PointPair[] =>
  pts.map((t) => ({ tableMm: t, projectorPx: mapPoint(h, t) }));
const GRID: Vec2[] = [];
for (let x = -450; x <= 450; x += 75) for (let y = -550; y <= 550; y += 100) GRID.push([x, y]);

function maxImageError(a: Mat3, b: Mat3, pts: readonly Vec2[]): number {
  return Math.max(
    ...pts.map((t) => Math.hypot(mapPoint(a, t)[0] - mapPoint(b, t)[0], mapPoint(a, t)[1] - mapPoint(b, t)[1])),
  );
}

test('noise-free pairs: four corners recover the true homography over the whole table', () => {
  const fit = fitHomography(exactPairs(H, TABLE_FIDUCIALS_MM.slice(0, 4)));
  assert.ok(
    maxImageError(fit.tableToProjector, H, GRID) < 1e-6,
    `max error ${maxImageError(fit.tableToProjector, H, GRID)} px`,
  );
  // The inverse maps image points back onto the table.
  for (const t of GRID) {
    const back = mapPoint(fit.projectorToTable, mapPoint(H, t));
    assert.ok(Math.hypot(back[0] - t[0], back[1] - t[1]) < 1e-6);
  }
});

test('noise-free pairs: thirteen fiducials recover it too, with zero reprojection error', () => {
  const c = calibrateProjector({ points: exactPairs(H, TABLE_FIDUCIALS_MM), resolution: RESOLUTION });
  assert.ok(maxImageError(c.tableToProjector, H, GRID) < 1e-6);
  assert.ok(c.errors.rmsMm < 1e-3 && c.errors.maxPx < 1e-3);
});

test('Hartley normalisation keeps the fit exact with large coordinates (a table frame 1 km from its origin)', () => {
  // Table mm around (1e6, -1e6) and a 8K-wide canvas: raw DLT rows mix 1 with 1e9-sized products.
  const shift = (t: Vec2): Vec2 => [t[0] + 1e6, t[1] - 1e6];
  const pts = GRID.map(shift);
  const hShifted: Mat3 = ((): Mat3 => {
    // H' = H · T⁻¹ with T the shift: the same projector seeing the shifted table coordinates.
    const [a, b, c, d, e, f, g, k, l] = H;
    const [sx, sy] = [-1e6, 1e6];
    return [a, b, a * sx + b * sy + c, d, e, d * sx + e * sy + f, g, k, g * sx + k * sy + l];
  })();
  const fit = fitHomography(
    exactPairs(
      hShifted,
      pts.filter((_, i) => i % 7 === 0),
    ),
  );
  const err = maxImageError(fit.tableToProjector, hShifted, pts);
  assert.ok(err < 1e-3, `max error ${err} px`);
});

test('with 1 mm alignment noise the fit lands within a few mm everywhere and its sigma estimates the noise', () => {
  const pairs = simulateAlignment(H, GRID, 1, 7, { roundPx: false });
  const c = calibrateProjector({ points: pairs, resolution: { widthPx: 4000, heightPx: 4000 } });
  assert.ok(
    c.errors.sigmaMm !== null && c.errors.sigmaMm > 0.8 && c.errors.sigmaMm < 1.25,
    `sigma ${c.errors.sigmaMm}`,
  );
  const hInvTrue = fitHomography(exactPairs(H, GRID)).projectorToTable;
  for (const t of GRID) {
    const p = mapPoint(c.tableToProjector, t);
    const back = mapPoint(hInvTrue, p);
    assert.ok(
      Math.hypot(back[0] - t[0], back[1] - t[1]) < 1.5,
      `table ${t}: ${Math.hypot(back[0] - t[0], back[1] - t[1])} mm`,
    );
  }
});

test('exactly four points fit exactly, so the record says the error is unknown (sigma null)', () => {
  const c = calibrateProjector({
    points: simulateAlignment(H, TABLE_FIDUCIALS_MM.slice(0, 4), 2, 1),
    resolution: RESOLUTION,
  });
  assert.equal(c.errors.sigmaMm, null);
  assert.ok(c.errors.rmsMm < 1e-3);
});

function refusal(pairs: PointPair[], pattern: RegExp): void {
  assert.throws(
    () => fitHomography(pairs),
    (e: unknown) => e instanceof ProjectorCalibrationError && pattern.test(e.message) && !e.message.includes('\n'),
  );
}

test('too few points are refused with what to do', () => {
  refusal(exactPairs(H, TABLE_FIDUCIALS_MM.slice(0, 3)), /at least 4 point pairs and got 3; align the crosshairs/);
});

test('collinear table points are refused', () => {
  refusal(
    exactPairs(H, [
      [-400, -500],
      [-200, -250],
      [0, 0],
      [200, 250],
      [400, 500],
    ]),
    /table points lie on \(or very near\) one line/,
  );
  // Nearly collinear (2 mm off a 1.3 m line) counts too.
  refusal(
    exactPairs(H, [
      [-400, -500],
      [-200, -248],
      [0, 0],
      [200, 252],
      [400, 500],
    ]),
    /one line/,
  );
});

test('four points with three on a line are refused as not determining a homography', () => {
  refusal(
    exactPairs(H, [
      [-400, -500],
      [0, -500],
      [400, -500],
      [0, 500],
    ]),
    /do not determine one homography .*no three in a line/,
  );
});

test('three collinear on the table but not in the image (a mis-paired crosshair) is refused', () => {
  const pairs = exactPairs(H, [
    [-400, -500],
    [0, -500],
    [400, -500],
    [0, 500],
  ]);
  pairs[1] = { ...pairs[1], projectorPx: [pairs[1].projectorPx[0], pairs[1].projectorPx[1] + 80] };
  refusal(pairs, /do not determine one homography/);
});

test('a repeated table point is refused', () => {
  const pairs = exactPairs(H, TABLE_FIDUCIALS_MM.slice(0, 5));
  pairs[4] = { tableMm: pairs[0].tableMm, projectorPx: [pairs[0].projectorPx[0] + 40, pairs[0].projectorPx[1]] };
  refusal(pairs, /Points 1 and 5 are the same table point/);
});

test('the projector used for tests is plausible: the whole table is in its image, and the keystone is strong', () => {
  const corners = [
    [500, 600],
    [500, -600],
    [-500, -600],
    [-500, 600],
  ] as Vec2[];
  const px = corners.map((t) => mapPoint(H, t));
  for (const [u, v] of px) assert.ok(u > 0 && u < 1920 && v > 0 && v < 1080, `corner at ${u}, ${v}`);
  const far = Math.hypot(px[0][0] - px[1][0], px[0][1] - px[1][1]);
  const near = Math.hypot(px[2][0] - px[3][0], px[2][1] - px[3][1]);
  // The edge nearer the lens (the far edge, x = +500 mm) is drawn larger: a real keystone.
  assert.ok(far / near > 1.2, `near edge ${near} px, far edge ${far} px`);
  assert.ok(OVERHEAD.centreMm[2] > 1500);
});

test('a swapped pair is refused: adjacent corners as not one projector view, others by how far off the fit they land', () => {
  const swapped = (i: number, j: number) => {
    const pairs = exactPairs(H, TABLE_FIDUCIALS_MM);
    const a = pairs[i].projectorPx;
    pairs[i] = { ...pairs[i], projectorPx: pairs[j].projectorPx };
    pairs[j] = { ...pairs[j], projectorPx: a };
    return pairs.map((p, k) => ({ ...p, label: `fiducial ${k + 1}` }));
  };
  assert.throws(
    () => calibrateProjector({ points: swapped(0, 1), resolution: RESOLUTION }),
    /not consistent with one projector view \(a pair looks swapped or mirrored\)/,
  );
  assert.throws(
    () => calibrateProjector({ points: swapped(4, 6), resolution: RESOLUTION }),
    /^ProjectorCalibrationError: Point \d+ \(fiducial \d+\) is \d+ mm off the best fit, .* probably paired with the wrong crosshair or mistyped — check it, or leave it out\.$/,
  );
});
