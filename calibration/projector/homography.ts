/**
 * The table → projector homography: fitted by the direct linear transform (DLT) with Hartley
 * normalisation from point pairs (table mm ↔ projector px), applied and inverted.
 *
 * Why DLT with normalisation: the raw DLT matrix mixes millimetres, pixels and their products
 * (values from 1 to 10⁶ in one row), so its smallest singular vector is swamped by rounding;
 * moving each point set to its centroid and scaling it to a mean distance of √2 (Hartley, "In
 * defence of the eight-point algorithm", 1997) makes every column the same size and the fit
 * stable at any coordinate scale. The 9×9 normal matrix is solved with a Jacobi eigen
 * decomposition: small, exact enough in double precision after normalisation, and it hands us
 * all the singular values, so rank deficiency (degenerate point sets) is seen, not guessed.
 */

/** A 3×3 matrix, row-major. */
export type Mat3 = readonly [number, number, number, number, number, number, number, number, number];
export type Vec2 = readonly [number, number];

export interface PointPair {
  /** A point on the table plane, table frame, millimetres. */
  readonly tableMm: Vec2;
  /** Where the projector draws it, pixels (column, row). */
  readonly projectorPx: Vec2;
}

/** Bad calibration input: the message is one sentence an operator can act on. */
export class ProjectorCalibrationError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'ProjectorCalibrationError';
  }
}

export const MIN_POINT_PAIRS = 4;

/** Applies h to (x, y); returns the point and its homogeneous w (its sign says which side of the horizon). */
export function applyHomography(h: Mat3, p: Vec2): { point: [number, number]; w: number } {
  const w = h[6] * p[0] + h[7] * p[1] + h[8];
  return { point: [(h[0] * p[0] + h[1] * p[1] + h[2]) / w, (h[3] * p[0] + h[4] * p[1] + h[5]) / w], w };
}

/** Maps a point through h. */
export function mapPoint(h: Mat3, p: Vec2): [number, number] {
  return applyHomography(h, p).point;
}

export function multiply(a: Mat3, b: Mat3): Mat3 {
  const r: number[] = [];
  for (let i = 0; i < 3; i++)
    for (let j = 0; j < 3; j++) r.push(a[3 * i] * b[j] + a[3 * i + 1] * b[3 + j] + a[3 * i + 2] * b[6 + j]);
  return r as unknown as Mat3;
}

/** The inverse of h (by its adjugate), scaled so its largest entry is 1 — a homography's scale is arbitrary. */
export function invert(h: Mat3): Mat3 {
  const [a, b, c, d, e, f, g, k, l] = h;
  const adj = [
    e * l - f * k,
    c * k - b * l,
    b * f - c * e,
    f * g - d * l,
    a * l - c * g,
    c * d - a * f,
    d * k - e * g,
    b * g - a * k,
    a * e - b * d,
  ];
  const det = a * adj[0] + b * adj[3] + c * adj[6];
  if (!Number.isFinite(det) || det === 0)
    throw new ProjectorCalibrationError(
      'The homography cannot be inverted; calibrate again with points spread over the table.',
    );
  return normalise(adj as unknown as Mat3);
}

/** Scales h so h[8] is 1 when it can be (the usual convention), else so its largest entry is 1. */
export function normalise(h: Mat3): Mat3 {
  const s = Math.abs(h[8]) > 1e-12 * Math.max(...h.map(Math.abs)) ? h[8] : Math.max(...h.map(Math.abs));
  return h.map((v) => v / s) as unknown as Mat3;
}

/** Hartley's similarity: centroid to the origin, mean distance √2. */
function normalisingTransform(points: readonly Vec2[]): Mat3 {
  const n = points.length;
  const cx = points.reduce((s, p) => s + p[0], 0) / n;
  const cy = points.reduce((s, p) => s + p[1], 0) / n;
  const meanDist = points.reduce((s, p) => s + Math.hypot(p[0] - cx, p[1] - cy), 0) / n;
  const k = Math.SQRT2 / meanDist;
  return [k, 0, -k * cx, 0, k, -k * cy, 0, 0, 1];
}

/**
 * Eigen decomposition of a symmetric matrix by cyclic Jacobi rotations. Returns eigenvalues in
 * ascending order with their eigenvectors (columns of `vectors`, as arrays).
 */
export function symmetricEigen(m: readonly number[][]): { values: number[]; vectors: number[][] } {
  const n = m.length;
  const a = m.map((row) => [...row]);
  const v: number[][] = Array.from({ length: n }, (_, i) => Array.from({ length: n }, (_, j) => (i === j ? 1 : 0)));
  for (let sweep = 0; sweep < 100; sweep++) {
    let off = 0;
    let diag = 0;
    for (let i = 0; i < n; i++) {
      diag += a[i][i] * a[i][i];
      for (let j = i + 1; j < n; j++) off += a[i][j] * a[i][j];
    }
    if (off <= 1e-30 * diag || off === 0) break;
    for (let p = 0; p < n; p++) {
      for (let q = p + 1; q < n; q++) {
        if (a[p][q] === 0) continue;
        const theta = (a[q][q] - a[p][p]) / (2 * a[p][q]);
        const t = Math.sign(theta || 1) / (Math.abs(theta) + Math.sqrt(theta * theta + 1));
        const c = 1 / Math.sqrt(t * t + 1);
        const s = t * c;
        for (let k = 0; k < n; k++) {
          const akp = a[k][p];
          const akq = a[k][q];
          a[k][p] = c * akp - s * akq;
          a[k][q] = s * akp + c * akq;
        }
        for (let k = 0; k < n; k++) {
          const apk = a[p][k];
          const aqk = a[q][k];
          a[p][k] = c * apk - s * aqk;
          a[q][k] = s * apk + c * aqk;
        }
        for (let k = 0; k < n; k++) {
          const vkp = v[k][p];
          const vkq = v[k][q];
          v[k][p] = c * vkp - s * vkq;
          v[k][q] = s * vkp + c * vkq;
        }
      }
    }
  }
  const order = a.map((row, i) => [row[i], i] as const).sort((x, y) => x[0] - y[0]);
  return { values: order.map(([val]) => val), vectors: order.map(([, i]) => v.map((row) => row[i])) };
}

/** How far the points are from lying on one line: the smaller spread over the larger (0 = a line). */
function flatness(points: readonly Vec2[]): { ratio: number; minorSpread: number } {
  const n = points.length;
  const cx = points.reduce((s, p) => s + p[0], 0) / n;
  const cy = points.reduce((s, p) => s + p[1], 0) / n;
  let sxx = 0;
  let syy = 0;
  let sxy = 0;
  for (const [x, y] of points) {
    sxx += (x - cx) ** 2;
    syy += (y - cy) ** 2;
    sxy += (x - cx) * (y - cy);
  }
  const { values } = symmetricEigen([
    [sxx / n, sxy / n],
    [sxy / n, syy / n],
  ]);
  const minor = Math.sqrt(Math.max(0, values[0]));
  const major = Math.sqrt(Math.max(0, values[1]));
  return { ratio: major === 0 ? 0 : minor / major, minorSpread: minor };
}

/** Below this ratio of the second-smallest to the largest singular value, the pairs do not pin one homography. */
export const RANK_TOLERANCE = 1e-4;
/** Point sets thinner than this (minor over major spread) count as lying on a line. */
const LINE_TOLERANCE = 0.02;

export interface HomographyFit {
  /** Table mm → projector px, scaled so h[8] = 1. */
  readonly tableToProjector: Mat3;
  readonly projectorToTable: Mat3;
  /** Singular values of the normalised DLT matrix, ascending (the first is the fit's algebraic residual). */
  readonly singularValues: readonly number[];
  /** Second-smallest over largest singular value: how well the pairs pin the homography (0 = not at all). */
  readonly conditioning: number;
}

function describe(pairs: readonly PointPair[], i: number): string {
  const p = pairs[i];
  return `pair ${i + 1} (table ${p.tableMm[0]}, ${p.tableMm[1]} mm)`;
}

/**
 * Fits the table → projector homography to ≥ 4 pairs, refusing configurations that do not
 * determine it (too few, repeated, on a line, three of four on a line) with a sentence saying
 * what to do.
 */
export function fitHomography(pairs: readonly PointPair[]): HomographyFit {
  if (pairs.length < MIN_POINT_PAIRS) {
    throw new ProjectorCalibrationError(
      `A projector calibration needs at least ${MIN_POINT_PAIRS} point pairs and got ${pairs.length}; align the crosshairs to at least 4 table corners or fiducials spread over the table (6 or more also measure the error).`,
    );
  }
  for (const [i, p] of pairs.entries()) {
    if (![...p.tableMm, ...p.projectorPx].every(Number.isFinite))
      throw new ProjectorCalibrationError(
        `Point ${describe(pairs, i)} has a coordinate that is not a number; give each pair as table [x, y] mm and projector [column, row] px.`,
      );
  }
  for (let i = 0; i < pairs.length; i++) {
    for (let j = i + 1; j < pairs.length; j++) {
      if (Math.hypot(pairs[i].tableMm[0] - pairs[j].tableMm[0], pairs[i].tableMm[1] - pairs[j].tableMm[1]) < 1) {
        throw new ProjectorCalibrationError(
          `Points ${i + 1} and ${j + 1} are the same table point; each pair must be a different corner or fiducial.`,
        );
      }
      if (
        Math.hypot(
          pairs[i].projectorPx[0] - pairs[j].projectorPx[0],
          pairs[i].projectorPx[1] - pairs[j].projectorPx[1],
        ) < 0.5
      ) {
        throw new ProjectorCalibrationError(
          `Points ${i + 1} and ${j + 1} have the same projector pixel; each crosshair must be aligned to its own table point.`,
        );
      }
    }
  }
  const table = pairs.map((p) => p.tableMm);
  const proj = pairs.map((p) => p.projectorPx);
  for (const [what, pts] of [
    ['table points', table],
    ['projector pixels', proj],
  ] as const) {
    if (flatness(pts).ratio < LINE_TOLERANCE) {
      throw new ProjectorCalibrationError(
        `The ${what} lie on (or very near) one line, which cannot fix a homography; use points spread over the table in both directions, such as its four corners.`,
      );
    }
  }
  const tn = normalisingTransform(table);
  const pn = normalisingTransform(proj);
  const ata = Array.from({ length: 9 }, () => new Array<number>(9).fill(0));
  const addRow = (row: readonly number[]) => {
    for (let i = 0; i < 9; i++) for (let j = 0; j < 9; j++) ata[i][j] += row[i] * row[j];
  };
  for (const pair of pairs) {
    const [x, y] = mapPoint(tn, pair.tableMm);
    const [u, v] = mapPoint(pn, pair.projectorPx);
    addRow([-x, -y, -1, 0, 0, 0, u * x, u * y, u]);
    addRow([0, 0, 0, -x, -y, -1, v * x, v * y, v]);
  }
  const { values, vectors } = symmetricEigen(ata);
  const singularValues = values.map((v) => Math.sqrt(Math.max(0, v)));
  const conditioning = singularValues[1] / singularValues[8];
  if (!(conditioning > RANK_TOLERANCE)) {
    throw new ProjectorCalibrationError(
      'The point pairs do not determine one homography (three of them lie on a line, or the pairs contradict each other); use at least 4 points spread over the table with no three in a line.',
    );
  }
  const hn = vectors[0] as unknown as Mat3;
  // A unique but singular solution means the two point sets disagree about collinearity (three
  // in a line on the table but not in the image): no projector maps one onto the other.
  const hnt = [0, 1, 2].map((i) => [0, 1, 2].map((j) => hn[i] * hn[j] + hn[3 + i] * hn[3 + j] + hn[6 + i] * hn[6 + j]));
  const hs = symmetricEigen(hnt).values.map((v) => Math.sqrt(Math.max(0, v)));
  if (!(hs[0] / hs[2] > RANK_TOLERANCE)) {
    throw new ProjectorCalibrationError(
      'The point pairs do not determine one homography (three of them lie on a line, or the pairs contradict each other); use at least 4 points spread over the table with no three in a line.',
    );
  }
  // Undo the normalisation: H = Tp⁻¹ · Hn · Tt.
  const h = normalise(multiply(multiply(invert(pn), hn), tn));
  // Every table point must land on the same side of the projector's horizon: a pair on the
  // other side is a mirrored or swapped pair no real projector produces.
  const sides = table.map((t) => Math.sign(applyHomography(h, t).w));
  if (new Set(sides).size > 1) {
    throw new ProjectorCalibrationError(
      'The point pairs are not consistent with one projector view (a pair looks swapped or mirrored); check that each table point is paired with its own crosshair.',
    );
  }
  return { tableToProjector: h, projectorToTable: invert(h), singularValues, conditioning };
}
