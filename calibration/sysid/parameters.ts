/**
 * The physical parameters system identification fits, each with its bounds, its scale (log for
 * positive quantities spanning decades, linear for ratios and delays) and the residuals it acts
 * on first (its own joint's, for per-joint parameters; all, for global ones). The optimiser works
 * in unit coordinates u ∈ [0, 1] per parameter, so bounds are a clamp and steps are comparable.
 */
import type { JointCalibration, SimCalibration } from '../../src/sim/calibration.js';
import { motorTorqueScales } from '../../src/sim/calibration.js';
import { SIM_CALIBRATION_RANGES } from '../../src/sim/calibration-file.js';

export interface FitParameter {
  /** As a user reads it: 'joint2.dampingNms', 'commandLatencyS'. */
  readonly name: string;
  readonly unit: string;
  readonly lo: number;
  readonly hi: number;
  readonly log: boolean;
  /** The arm joint (0–5) whose residuals this parameter drives first, or undefined for a global one. */
  readonly joint?: number;
  /** Parameters of one kind share a group: one finite-difference evaluation moves the whole group (one per joint). */
  readonly group: string;
  get(cal: SimCalibration): number;
  set(cal: MutableCalibration, v: number): void;
}

export type MutableCalibration = {
  -readonly [K in keyof SimCalibration]: SimCalibration[K];
} & { joints: JointCalibration[]; motorTorqueScale: number[] };

/** Per-joint quantities may sit a decade either side of the vendor's numbers the twin starts from. */
const DECADE = 10;

/**
 * Bounds built around a start value, kept inside what a calibration file may hold
 * (SIM_CALIBRATION_RANGES): a fit that ended beyond them would write a record `--calibration`
 * refuses (fingerFriction 1.2 × 3 = 3.6 against the file's 3).
 */
function inRange(key: string, lo: number, hi: number): { lo: number; hi: number } {
  const r = SIM_CALIBRATION_RANGES[key];
  return r ? { lo: Math.max(lo, r.min), hi: Math.min(hi, r.max) } : { lo, hi };
}

/**
 * The set: per arm joint damping, Coulomb friction, armature and motor torque scale; command
 * latency; the gripper's reflected rotor mass (seen in arm motion, see SimCalibration). Bounds are
 * taken around `base` (the record the fit starts from) and never leave SIM_CALIBRATION_RANGES.
 */
export function fitParameters(base: SimCalibration): FitParameter[] {
  const out: FitParameter[] = [];
  const perJoint: { key: keyof JointCalibration; unit: string; floor: number }[] = [
    { key: 'dampingNms', unit: 'N·m·s/rad', floor: 0.005 },
    { key: 'frictionNm', unit: 'N·m', floor: 0.005 },
    { key: 'armatureKgM2', unit: 'kg·m²', floor: 0.0002 },
  ];
  for (const { key, unit, floor } of perJoint) {
    base.joints.forEach((j, i) => {
      const v = Math.max(j[key], floor);
      out.push({
        name: `joint${i + 1}.${key}`,
        unit,
        ...inRange(`joints.${key}`, Math.max(floor / DECADE, v / DECADE), v * DECADE),
        log: true,
        joint: i,
        group: key,
        get: (c) => c.joints[i][key],
        set: (c, x) => {
          c.joints[i] = { ...c.joints[i], [key]: x };
        },
      });
    });
  }
  for (let i = 0; i < 6; i++) {
    out.push({
      name: `joint${i + 1}.motorTorqueScale`,
      unit: '',
      lo: 0.7,
      hi: 1.3,
      log: false,
      joint: i,
      group: 'motorTorqueScale',
      get: (c) => motorTorqueScales(c)[i],
      set: (c, x) => {
        c.motorTorqueScale[i] = x;
      },
    });
  }
  out.push({
    name: 'commandLatencyS',
    unit: 's',
    lo: 0,
    hi: 0.02,
    log: false,
    group: 'commandLatencyS',
    get: (c) => c.commandLatencyS ?? 0,
    set: (c, x) => void (c.commandLatencyS = x),
  });
  out.push({
    name: 'fingerReflectedMassKg',
    unit: 'kg',
    lo: 0,
    hi: 2,
    log: false,
    group: 'fingerReflectedMassKg',
    get: (c) => c.fingerReflectedMassKg ?? 0,
    set: (c, x) => void (c.fingerReflectedMassKg = x),
  });
  return out;
}

/** Parameter value → unit coordinate (clamped into the bounds). */
export function toUnit(p: FitParameter, v: number): number {
  const x = Math.min(p.hi, Math.max(p.lo, v));
  if (p.log) return Math.log(x / p.lo) / Math.log(p.hi / p.lo);
  return (x - p.lo) / (p.hi - p.lo);
}

export function fromUnit(p: FitParameter, u: number): number {
  const c = Math.min(1, Math.max(0, u));
  return p.log ? p.lo * Math.pow(p.hi / p.lo, c) : p.lo + c * (p.hi - p.lo);
}

/** d(value)/du at u: converts an uncertainty in u to the parameter's unit. */
export function unitSlope(p: FitParameter, u: number): number {
  return p.log ? fromUnit(p, u) * Math.log(p.hi / p.lo) : p.hi - p.lo;
}

export function mutableCopy(cal: SimCalibration): MutableCalibration {
  return { ...cal, joints: cal.joints.map((j) => ({ ...j })), motorTorqueScale: [...motorTorqueScales(cal)] };
}

/** The calibration at unit coordinates `u` (one per parameter), on top of `base`; numbers rounded to 6 significant digits so the record reads cleanly. */
export function calibrationAt(
  base: SimCalibration,
  params: readonly FitParameter[],
  u: ArrayLike<number>,
): SimCalibration {
  const c = mutableCopy(base);
  params.forEach((p, k) => p.set(c, Number(fromUnit(p, u[k]).toPrecision(6))));
  return c;
}

/**
 * What takes that hold objects may carry, fitted on the holding samples with the joints held: the
 * objects' mass scale, and the grasp's squeeze and frictions (which set how the object sits and
 * slips in the fingers). Bounds: a factor 2 either side for the mass (bottles filled by hand), 3
 * for the squeeze and frictions; never outside SIM_CALIBRATION_RANGES.
 */
export function objectParameters(base: SimCalibration): FitParameter[] {
  const scaled = (
    name: 'gripperMaxForceN' | 'objectFrictionScale' | 'fingerFriction',
    unit: string,
    factor: number,
  ): FitParameter => ({
    name,
    unit,
    ...inRange(name, base[name] / factor, base[name] * factor),
    log: true,
    group: name,
    get: (c) => c[name],
    set: (c, x) => void (c[name] = x),
  });
  return [
    {
      name: 'objectMassScale',
      unit: '',
      ...inRange('objectMassScale', base.objectMassScale / 2, base.objectMassScale * 2),
      log: false,
      group: 'objectMassScale',
      get: (c) => c.objectMassScale,
      set: (c, x) => void (c.objectMassScale = x),
    },
    scaled('gripperMaxForceN', 'N', 3),
    scaled('objectFrictionScale', '', 3),
    scaled('fingerFriction', '', 3),
  ];
}
