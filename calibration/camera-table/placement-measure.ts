/**
 * How far each object stands from where the layout puts it, measured in one overhead camera frame
 * against what the sim twin draws from the same calibrated camera: the twin's picture of the layout
 * (expected) and of the empty table (background, the same arms and fixtures without the objects).
 *
 * Per object: its expected pixels are where the expected picture differs from the background,
 * nearest to its own projected centre; its observed pixels are where the camera frame differs from
 * the background, in the object's colour, near those expected pixels. The centroid's pixel shift
 * becomes a table shift through the camera model's Jacobian at the object's own centre height (a
 * ground-plane mapping would read a tall bottle's shift ~12 % long from 0.9 m); its rotation is the
 * turn of the blob's principal axis on the plane at that height, for objects whose blob has one
 * (an upright bottle is round from above: no angle to measure).
 *
 * Pure: images in, numbers out; the camera model is the calibration's, so what it measures is only
 * as good as that calibration (its hash goes with every measurement).
 */
import type { Pose3 } from '../../src/tasks/geometry.js';
import type { CameraIntrinsics } from '../../src/sim/render/camera-calibration.js';
import { projectToPixel } from '../../src/sim/render/camera-projection.js';

/** 8-bit RGB, row-major, top-left first: the shape of the policy contract's RgbFrame. */
export interface RgbFrame {
  readonly width: number;
  readonly height: number;
  readonly data: Uint8Array;
}

export interface ExpectedObject {
  readonly id: string;
  /** Where the layout puts its visual centre, table frame, metres. */
  readonly centreM: readonly [number, number, number];
  /** The catalogue colour it is drawn in (0–255). */
  readonly color: readonly [number, number, number];
}

export interface ObjectPlacementError {
  readonly id: string;
  /** Distance on the table between where it is and where the layout puts it, mm; Infinity when it was not seen. */
  readonly errorMm: number;
  /** The shift, table frame, mm (absent when not seen). */
  readonly shiftMm?: readonly [number, number];
  /** Turn about the vertical, degrees (absent when the object looks the same turned: round from above, or not seen). */
  readonly errorDeg?: number;
  /** Pixels of the object in the camera frame (0: not seen near its place). */
  readonly pixels: number;
}

export interface MeasureOptions {
  /** A pixel differs from the background above this summed |ΔR|+|ΔG|+|ΔB|. Default 45. */
  readonly differenceThreshold?: number;
  /** Pixels must be within this chromaticity distance (r/(r+g+b), g/(r+g+b)) of the object's mean colour in the twin's picture. Default 0.06. */
  readonly colorTolerance?: number;
  /** How far from its expected pixels an object is looked for, table mm. Default 80. */
  readonly searchMm?: number;
}

const diff = (a: Uint8Array, b: Uint8Array, i: number): number =>
  Math.abs(a[i] - b[i]) + Math.abs(a[i + 1] - b[i + 1]) + Math.abs(a[i + 2] - b[i + 2]);

/** Table (x, y) on the plane z = h seen at pixel (u, v): the camera ray cut with the plane. */
function pixelToPlane(k: CameraIntrinsics, cam: Pose3, u: number, v: number, h: number): [number, number] {
  const [qx, qy, qz, qw] = cam.quaternion;
  // Rotation matrix of the optical frame in the table frame (columns: the optical axes).
  const R = [
    1 - 2 * (qy * qy + qz * qz),
    2 * (qx * qy - qz * qw),
    2 * (qx * qz + qy * qw),
    2 * (qx * qy + qz * qw),
    1 - 2 * (qx * qx + qz * qz),
    2 * (qy * qz - qx * qw),
    2 * (qx * qz - qy * qw),
    2 * (qy * qz + qx * qw),
    1 - 2 * (qx * qx + qy * qy),
  ];
  const dc = [(u - k.cxPx) / k.fxPx, (v - k.cyPx) / k.fyPx, 1];
  const d = [0, 1, 2].map((r) => R[3 * r] * dc[0] + R[3 * r + 1] * dc[1] + R[3 * r + 2] * dc[2]);
  const o = cam.position;
  const t = (h - o[2]) / d[2];
  return [o[0] + t * d[0], o[1] + t * d[1]];
}

interface Blob {
  n: number;
  su: number;
  sv: number;
  pts: number[];
  r: number;
  g: number;
  b: number;
}
const newBlob = (): Blob => ({ n: 0, su: 0, sv: 0, pts: [], r: 0, g: 0, b: 0 });

/** Principal axis angle (radians, mod π) of points on a plane, and how elongated they are (0 round … 1 a line). */
function principalAxis(xy: readonly number[]): { angle: number; elongation: number } {
  const n = xy.length / 2;
  let mx = 0;
  let my = 0;
  for (let i = 0; i < xy.length; i += 2) {
    mx += xy[i];
    my += xy[i + 1];
  }
  mx /= n;
  my /= n;
  let sxx = 0;
  let syy = 0;
  let sxy = 0;
  for (let i = 0; i < xy.length; i += 2) {
    const dx = xy[i] - mx;
    const dy = xy[i + 1] - my;
    sxx += dx * dx;
    syy += dy * dy;
    sxy += dx * dy;
  }
  const tr = sxx + syy;
  const det = sxx * syy - sxy * sxy;
  const disc = Math.sqrt(Math.max(0, (tr * tr) / 4 - det));
  const l1 = tr / 2 + disc;
  const l2 = tr / 2 - disc;
  return { angle: 0.5 * Math.atan2(2 * sxy, sxx - syy), elongation: l1 > 0 ? 1 - Math.sqrt(Math.max(0, l2) / l1) : 0 };
}

/** Blobs this elongated (minor/major spread below 1 − this) have an axis whose turn is measured. */
const AXIS_ELONGATION = 0.3;

/**
 * Each object's placement error, in the order given. `camera`: the overhead camera's intrinsics and
 * its optical frame in the table frame, from the calibration the twin drew with.
 */
export function measurePlacement(
  frames: { readonly observed: RgbFrame; readonly expected: RgbFrame; readonly background: RgbFrame },
  camera: { readonly intrinsics: CameraIntrinsics; readonly poseInTable: Pose3 },
  objects: readonly ExpectedObject[],
  options: MeasureOptions = {},
): ObjectPlacementError[] {
  const { observed, expected, background } = frames;
  const W = background.width;
  const H = background.height;
  for (const [what, im] of [
    ['observed', observed],
    ['expected', expected],
  ] as const) {
    if (im.width !== W || im.height !== H)
      throw new Error(
        `The ${what} frame is ${im.width}×${im.height} but the twin drew ${W}×${H}; the overhead camera's calibration must describe this camera.`,
      );
  }
  const threshold = options.differenceThreshold ?? 45;
  const colorTol = options.colorTolerance ?? 0.06;
  const searchMm = options.searchMm ?? 80;
  const k = camera.intrinsics;
  const cam = camera.poseInTable;
  const centresPx = objects.map((o) => projectToPixel(k, cam, o.centreM));
  const nearest = (u: number, v: number): number => {
    let best = -1;
    let bestD = Infinity;
    centresPx.forEach((c, i) => {
      const d = (c.u - u) ** 2 + (c.v - v) ** 2;
      if (d < bestD) {
        bestD = d;
        best = i;
      }
    });
    return best;
  };
  // Expected pixels of each object.
  const exp = objects.map(newBlob);
  for (let v = 0; v < H; v++) {
    for (let u = 0; u < W; u++) {
      const i = 3 * (v * W + u);
      if (diff(expected.data, background.data, i) <= threshold) continue;
      const b = exp[nearest(u, v)];
      b.n++;
      b.su += u;
      b.sv += v;
      b.pts.push(u, v);
      b.r += expected.data[i];
      b.g += expected.data[i + 1];
      b.b += expected.data[i + 2];
    }
  }
  // Where to look for each: its expected pixels' box, widened by the search distance in pixels at its place.
  const boxes = objects.map((o, j) => {
    const e = exp[j];
    const c = centresPx[j];
    const px = projectToPixel(k, cam, [o.centreM[0] + searchMm / 1000, o.centreM[1], o.centreM[2]]);
    const py = projectToPixel(k, cam, [o.centreM[0], o.centreM[1] + searchMm / 1000, o.centreM[2]]);
    const m = Math.max(Math.hypot(px.u - c.u, px.v - c.v), Math.hypot(py.u - c.u, py.v - c.v));
    let u0 = c.u;
    let u1 = c.u;
    let v0 = c.v;
    let v1 = c.v;
    for (let p = 0; p < e.pts.length; p += 2) {
      u0 = Math.min(u0, e.pts[p]);
      u1 = Math.max(u1, e.pts[p]);
      v0 = Math.min(v0, e.pts[p + 1]);
      v1 = Math.max(v1, e.pts[p + 1]);
    }
    return { u0: u0 - m, u1: u1 + m, v0: v0 - m, v1: v1 + m };
  });
  const meanColor = exp.map((e, j) => (e.n > 0 ? [e.r / e.n, e.g / e.n, e.b / e.n] : [...objects[j].color]));
  // Chromaticity (brightness divided out): shading darkens a side, it does not change its hue.
  const chroma = (r: number, g: number, b: number): [number, number] => {
    const t = r + g + b + 1;
    return [r / t, g / t];
  };
  const meanChroma = meanColor.map((c) => chroma(c[0], c[1], c[2]));
  /** Pixels of a frame that differ from the background in an object's colour within its search box, each given to the nearest such object. */
  const select = (frame: RgbFrame): Blob[] => {
    const out = objects.map(newBlob);
    for (let v = 0; v < H; v++) {
      for (let u = 0; u < W; u++) {
        const i = 3 * (v * W + u);
        if (diff(frame.data, background.data, i) <= threshold) continue;
        const [cr, cg] = chroma(frame.data[i], frame.data[i + 1], frame.data[i + 2]);
        let best = -1;
        let bestD = Infinity;
        for (let j = 0; j < objects.length; j++) {
          const bx = boxes[j];
          if (u < bx.u0 || u > bx.u1 || v < bx.v0 || v > bx.v1) continue;
          if (Math.hypot(cr - meanChroma[j][0], cg - meanChroma[j][1]) > colorTol) continue;
          const d = (centresPx[j].u - u) ** 2 + (centresPx[j].v - v) ** 2;
          if (d < bestD) {
            bestD = d;
            best = j;
          }
        }
        if (best < 0) continue;
        const b = out[best];
        b.n++;
        b.su += u;
        b.sv += v;
        b.pts.push(u, v);
      }
    }
    return out;
  };
  // The same rule picks both: what the twin drew and what the camera sees are compared like for like.
  const expSel = select(expected);
  const obs = select(observed);
  return objects.map((o, j) => {
    const e = expSel[j];
    const b = obs[j];
    // Fewer than a quarter of the pixels the twin drew: not there (moved away, hidden, fallen).
    if (e.n === 0 || b.n < Math.max(3, e.n / 4)) return { id: o.id, errorMm: Infinity, pixels: b.n };
    const du = b.su / b.n - e.su / e.n;
    const dv = b.sv / b.n - e.sv / e.n;
    // Table shift from pixel shift: the projection's Jacobian at the object's centre (1 mm steps).
    const c = centresPx[j];
    const ax = projectToPixel(k, cam, [o.centreM[0] + 0.001, o.centreM[1], o.centreM[2]]);
    const ay = projectToPixel(k, cam, [o.centreM[0], o.centreM[1] + 0.001, o.centreM[2]]);
    const j11 = ax.u - c.u;
    const j21 = ax.v - c.v;
    const j12 = ay.u - c.u;
    const j22 = ay.v - c.v;
    const det = j11 * j22 - j12 * j21;
    const dx = (j22 * du - j12 * dv) / det;
    const dy = (-j21 * du + j11 * dv) / det;
    const toPlane = (pts: readonly number[]): number[] => {
      const out: number[] = [];
      for (let p = 0; p < pts.length; p += 2) out.push(...pixelToPlane(k, cam, pts[p], pts[p + 1], o.centreM[2]));
      return out;
    };
    const ea = principalAxis(toPlane(e.pts));
    const round = ea.elongation < AXIS_ELONGATION;
    let errorDeg: number | undefined;
    if (!round) {
      const oa = principalAxis(toPlane(b.pts));
      let d = ((oa.angle - ea.angle) * 180) / Math.PI;
      d = ((((d + 90) % 180) + 180) % 180) - 90;
      errorDeg = Math.round(Math.abs(d) * 10) / 10;
    }
    return {
      id: o.id,
      errorMm: Math.round(Math.hypot(dx, dy) * 10) / 10,
      shiftMm: [Math.round(dx * 10) / 10, Math.round(dy * 10) / 10],
      ...(errorDeg !== undefined ? { errorDeg } : {}),
      pixels: b.n,
    };
  });
}
