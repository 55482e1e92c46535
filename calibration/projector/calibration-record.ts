/**
 * The projector calibration record: the point pairs the operator aligned, the fitted table →
 * projector homography, its reprojection errors and the projector's resolution, versioned and
 * pinned by the SHA-256 of its RFC 8785 canonical JSON — the same scheme as layout sets, and the
 * bytes the store's `calibrations` table (kind 'projector') hashes, so a rollout can name the
 * calibration it was shown with.
 */
import canonicalize from 'canonicalize';
import { sha256 } from '@noble/hashes/sha2.js';
import { bytesToHex, utf8ToBytes } from '@noble/hashes/utils.js';
import {
  fitHomography,
  mapPoint,
  invert,
  ProjectorCalibrationError,
  type Mat3,
  type PointPair,
  type Vec2,
} from './homography.js';

export const CALIBRATION_FORMAT = 'tandem-projector-calibration';
export const CALIBRATION_KIND = 'projector';

export interface ProjectorResolution {
  readonly widthPx: number;
  readonly heightPx: number;
}

export interface CalibrationPoint extends PointPair {
  /** What the operator aligned it to, e.g. "far-left table corner" (optional). */
  readonly label?: string;
}

export interface PointError {
  /** Table-plane distance between the point and its crosshair mapped back through the inverse, mm. */
  readonly mm: number;
  /** Image distance between the crosshair and the table point mapped forward, px. */
  readonly px: number;
}

export interface CalibrationErrors {
  readonly perPoint: readonly PointError[];
  readonly rmsMm: number;
  readonly maxMm: number;
  readonly rmsPx: number;
  readonly maxPx: number;
  /**
   * The alignment noise the residuals imply, per table axis, mm: √(Σ residual² / (2n − 8)), the
   * residuals corrected for the 8 degrees of freedom the fit spends. null with exactly 4 points,
   * which fit exactly and so say nothing about the error.
   */
  readonly sigmaMm: number | null;
}

export interface ProjectorCalibrationBody {
  readonly format: typeof CALIBRATION_FORMAT;
  readonly kind: typeof CALIBRATION_KIND;
  readonly version: number;
  readonly previous?: { readonly version: number; readonly sha256: string };
  readonly createdAt: string;
  readonly resolution: ProjectorResolution;
  readonly points: readonly CalibrationPoint[];
  /** Table mm → projector px, row-major, h[8] = 1. */
  readonly tableToProjector: Mat3;
  readonly errors: CalibrationErrors;
  /** Second-smallest over largest singular value of the normalised DLT system (0 = degenerate). */
  readonly conditioning: number;
}

export interface ProjectorCalibration extends ProjectorCalibrationBody {
  readonly sha256: string;
}

const round = (v: number, digits: number): number => Number(v.toFixed(digits));

/** RFC 8785 canonical JSON of the record without its sha256: the bytes the hash is taken over. */
export function calibrationCanonicalJson(body: ProjectorCalibrationBody): string {
  const { sha256: _id, ...rest } = body as ProjectorCalibrationBody & { sha256?: string };
  const text = canonicalize(rest);
  if (text === undefined) throw new RangeError('the calibration cannot be written as JSON');
  return text;
}

export function calibrationHash(body: ProjectorCalibrationBody): string {
  return bytesToHex(sha256(utf8ToBytes(calibrationCanonicalJson(body))));
}

/** Reprojection errors of h on the pairs, both ways. */
export function reprojectionErrors(h: Mat3, pairs: readonly PointPair[]): CalibrationErrors {
  const hInv = invert(h);
  const perPoint = pairs.map((p) => {
    const back = mapPoint(hInv, p.projectorPx);
    const fwd = mapPoint(h, p.tableMm);
    return {
      mm: Math.hypot(back[0] - p.tableMm[0], back[1] - p.tableMm[1]),
      px: Math.hypot(fwd[0] - p.projectorPx[0], fwd[1] - p.projectorPx[1]),
    };
  });
  const n = pairs.length;
  const ssMm = perPoint.reduce((s, e) => s + e.mm * e.mm, 0);
  const ssPx = perPoint.reduce((s, e) => s + e.px * e.px, 0);
  return {
    perPoint: perPoint.map((e) => ({ mm: round(e.mm, 3), px: round(e.px, 3) })),
    rmsMm: round(Math.sqrt(ssMm / n), 3),
    maxMm: round(Math.max(...perPoint.map((e) => e.mm)), 3),
    rmsPx: round(Math.sqrt(ssPx / n), 3),
    maxPx: round(Math.max(...perPoint.map((e) => e.px)), 3),
    sigmaMm: n > 4 ? round(Math.sqrt(ssMm / (2 * n - 8)), 3) : null,
  };
}

/**
 * A pair this far off the fit (mm) is a mistake, not alignment noise: crosshairs are aligned to
 * a few mm, and a swapped or mistyped pair lands hundreds of mm off.
 */
export const MAX_POINT_ERROR_MM = 20;

export interface CalibrateOptions {
  readonly points: readonly CalibrationPoint[];
  readonly resolution: ProjectorResolution;
  /** The calibration this one replaces: its version + 1 and its hash are recorded. */
  readonly previous?: ProjectorCalibration;
  readonly createdAt?: string;
}

/** Fits, measures and pins a calibration, refusing points outside the image or ones that do not determine the homography. */
export function calibrateProjector(opts: CalibrateOptions): ProjectorCalibration {
  const { widthPx, heightPx } = opts.resolution;
  if (
    !Number.isSafeInteger(widthPx) ||
    !Number.isSafeInteger(heightPx) ||
    widthPx < 16 ||
    heightPx < 16 ||
    widthPx > 16384 ||
    heightPx > 16384
  ) {
    throw new ProjectorCalibrationError(
      `The projector resolution ${widthPx}x${heightPx} is not a plausible image size; give it as WIDTHxHEIGHT pixels, e.g. 1920x1080.`,
    );
  }
  for (const [i, p] of opts.points.entries()) {
    const [u, v] = p.projectorPx;
    if (u < 0 || v < 0 || u > widthPx || v > heightPx) {
      throw new ProjectorCalibrationError(
        `Point ${i + 1}'s projector pixel (${u}, ${v}) is outside the ${widthPx}x${heightPx} image; check the points file or --resolution.`,
      );
    }
  }
  const points: CalibrationPoint[] = opts.points.map((p) => ({
    ...(p.label ? { label: p.label } : {}),
    tableMm: [p.tableMm[0], p.tableMm[1]] as Vec2,
    projectorPx: [p.projectorPx[0], p.projectorPx[1]] as Vec2,
  }));
  const fit = fitHomography(points);
  const errors = reprojectionErrors(fit.tableToProjector, points);
  const worst = errors.perPoint.reduce((w, e, i) => (e.mm > errors.perPoint[w].mm ? i : w), 0);
  if (errors.perPoint[worst].mm > MAX_POINT_ERROR_MM) {
    const p = points[worst];
    throw new ProjectorCalibrationError(
      `Point ${worst + 1}${p.label ? ` (${p.label})` : ''} is ${errors.perPoint[worst].mm.toFixed(0)} mm off the best fit, far more than aligning a crosshair can miss by; it is probably paired with the wrong crosshair or mistyped — check it, or leave it out.`,
    );
  }
  const body: ProjectorCalibrationBody = {
    format: CALIBRATION_FORMAT,
    kind: CALIBRATION_KIND,
    version: opts.previous ? opts.previous.version + 1 : 1,
    ...(opts.previous ? { previous: { version: opts.previous.version, sha256: opts.previous.sha256 } } : {}),
    createdAt: opts.createdAt ?? new Date().toISOString(),
    resolution: { widthPx, heightPx },
    points,
    tableToProjector: fit.tableToProjector,
    errors,
    conditioning: round(fit.conditioning, 6),
  };
  return { ...body, sha256: calibrationHash(body) };
}

/** The file form: pretty JSON, its fields in canonical order, sha256 last. */
export function serializeCalibration(c: ProjectorCalibration): string {
  const { sha256: id, ...body } = c;
  return `${JSON.stringify({ ...(JSON.parse(calibrationCanonicalJson(body)) as object), sha256: id }, null, 2)}\n`;
}

const isObj = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v);
const isVec2 = (v: unknown): v is Vec2 =>
  Array.isArray(v) && v.length === 2 && v.every((x) => typeof x === 'number' && Number.isFinite(x));

/** Reads a calibration file: checks its shape and that it still matches its hash. */
export function parseCalibration(text: string, source: string): ProjectorCalibration {
  let v: unknown;
  try {
    v = JSON.parse(text);
  } catch {
    throw new ProjectorCalibrationError(`${source} is not JSON; give the file 'tandem projector calibrate' wrote.`);
  }
  if (!isObj(v) || v.format !== CALIBRATION_FORMAT || v.kind !== CALIBRATION_KIND) {
    throw new ProjectorCalibrationError(
      `${source} is not a projector calibration (no "format": "${CALIBRATION_FORMAT}"); give the file 'tandem projector calibrate' wrote.`,
    );
  }
  const h = v.tableToProjector;
  const res = v.resolution;
  const ok =
    Number.isSafeInteger(v.version) &&
    typeof v.createdAt === 'string' &&
    isObj(res) &&
    Number.isSafeInteger(res.widthPx) &&
    Number.isSafeInteger(res.heightPx) &&
    Array.isArray(v.points) &&
    v.points.every((p) => isObj(p) && isVec2(p.tableMm) && isVec2(p.projectorPx)) &&
    Array.isArray(h) &&
    h.length === 9 &&
    h.every((x) => typeof x === 'number' && Number.isFinite(x)) &&
    isObj(v.errors) &&
    typeof v.sha256 === 'string';
  if (!ok)
    throw new ProjectorCalibrationError(
      `${source} is a damaged projector calibration (a field is missing or malformed); calibrate again with 'tandem projector calibrate'.`,
    );
  const found = calibrationHash(v as unknown as ProjectorCalibrationBody);
  if (found !== v.sha256) {
    throw new ProjectorCalibrationError(
      `${source} does not match its hash (recorded ${String(v.sha256).slice(0, 12)}…, computed ${found.slice(0, 12)}…): it was edited after calibration; calibrate again rather than editing the file.`,
    );
  }
  return v as unknown as ProjectorCalibration;
}

/** The row for the store's calibrations table (Store.putCalibration): kind, version, canonical JSON, hash. */
export function calibrationStoreInput(c: ProjectorCalibration): {
  sha256: string;
  kind: string;
  version: number;
  canonicalJson: string;
  createdAt: string;
} {
  return {
    sha256: c.sha256,
    kind: CALIBRATION_KIND,
    version: c.version,
    canonicalJson: calibrationCanonicalJson(c),
    createdAt: c.createdAt,
  };
}
