/**
 * A plausible projector for tests: a pinhole above and beyond the table's far edge, tilted down
 * at the table centre, 1920×1080, throw ratio ≈ 1. Its table → image map is the "true"
 * homography the calibration never sees; the operator's alignment is simulated from it.
 */
import { createRng } from '../../../src/layouts/random.js';
import { mapPoint, normalise, type Mat3, type Vec2 } from '../../../calibration/projector/homography.js';
import type { CalibrationPoint } from '../../../calibration/projector/calibration-record.js';

export const RESOLUTION = { widthPx: 1920, heightPx: 1080 };

export interface ProjectorPose {
  /** Lens centre in the table frame, mm. */
  readonly centreMm: readonly [number, number, number];
  /** Table point the optical axis passes through, mm. */
  readonly lookAtMm: readonly [number, number];
  readonly focalPx: number;
  /** Principal point (lens shift), px. */
  readonly principalPx: readonly [number, number];
}

export const OVERHEAD: ProjectorPose = {
  centreMm: [1150, 120, 1900],
  lookAtMm: [0, 0],
  focalPx: 1950,
  principalPx: [960, 560],
};

const sub = (a: readonly number[], b: readonly number[]) => a.map((v, i) => v - b[i]);
const dot = (a: readonly number[], b: readonly number[]) => a.reduce((s, v, i) => s + v * b[i], 0);
const cross = (a: readonly number[], b: readonly number[]) => [
  a[1] * b[2] - a[2] * b[1],
  a[2] * b[0] - a[0] * b[2],
  a[0] * b[1] - a[1] * b[0],
];
const unit = (a: readonly number[]) => a.map((v) => v / Math.hypot(...a));

/** The table-plane (z = 0) → image homography of a pinhole projector: K · [r1 r2 −R·C]. */
export function trueHomography(pose: ProjectorPose = OVERHEAD): Mat3 {
  const c = pose.centreMm;
  const fwd = unit(sub([pose.lookAtMm[0], pose.lookAtMm[1], 0], c));
  const right = unit(cross(fwd, [0, 0, 1]));
  const down = cross(fwd, right);
  const rows = [right, down, fwd];
  const t = rows.map((r) => -dot(r, c));
  const [f, u0, v0] = [pose.focalPx, pose.principalPx[0], pose.principalPx[1]];
  const rt = [0, 1, 2].map((i) => [rows[i][0], rows[i][1], t[i]]);
  const k = [
    [f, 0, u0],
    [0, f, v0],
    [0, 0, 1],
  ];
  const h: number[] = [];
  for (let i = 0; i < 3; i++)
    for (let j = 0; j < 3; j++) h.push(k[i][0] * rt[0][j] + k[i][1] * rt[1][j] + k[i][2] * rt[2][j]);
  return normalise(h as unknown as Mat3);
}

/** Fiducials an operator would use: the four corners (20 mm in), edge midpoints, the centre and four more inside. */
export const TABLE_FIDUCIALS_MM: readonly Vec2[] = [
  [480, 580],
  [480, -580],
  [-480, -580],
  [-480, 580],
  [480, 0],
  [0, -580],
  [-480, 0],
  [0, 580],
  [0, 0],
  [250, 300],
  [250, -300],
  [-250, -300],
  [-250, 300],
];

/**
 * The operator nudges each crosshair onto its fiducial: it ends up where the projector draws a
 * table point a little off the fiducial (seeded normal noise, noiseMm per axis), on a whole pixel.
 */
export function simulateAlignment(
  h: Mat3,
  fiducials: readonly Vec2[],
  noiseMm: number,
  seed: number,
  opts: { roundPx?: boolean } = {},
): CalibrationPoint[] {
  const rng = createRng(seed);
  return fiducials.map((t, i) => {
    const off: Vec2 = [t[0] + noiseMm * rng.normal(), t[1] + noiseMm * rng.normal()];
    const [u, v] = mapPoint(h, off);
    return {
      label: `fiducial ${i + 1}`,
      tableMm: t,
      projectorPx: opts.roundPx === false ? [u, v] : [Math.round(u), Math.round(v)],
    };
  });
}
