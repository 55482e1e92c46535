/**
 * The emulated cell's *truth*: the physics its world really runs on, deliberately different from
 * the sim twin's default calibration — the stand-in for everything a lab does not know about its
 * own cell. Drawn from a seed within ranges a real YAM cell plausibly shows, and hashed.
 *
 * The station never reads it. System identification must recover it from recordings, and paired
 * reports must see it as a sim–real gap; only tests, benchmarks and `tandem cell truth --reveal`
 * look. `gap: 'none'` gives a cell whose physics equal the sim twin's default.
 */
import { createHash } from 'node:crypto';
import canonicalize from 'canonicalize';
import { createRng } from '../layouts/random.js';
import { DEFAULT_SIM_CALIBRATION, type JointCalibration, type SimCalibration } from '../sim/calibration.js';
import { CAMERA_NAMES, type CameraName } from '../policy/contract.js';

export const CELL_TRUTH_FORMAT = 'tandem.cell-truth/1';

/** A camera's mounting error: where it really is relative to its calibrated pose. */
export interface CameraPoseOffset {
  /** Translation in the camera's mount frame, metres. */
  readonly positionM: readonly [number, number, number];
  /** Small rotation about the mount frame's x, y, z, radians. */
  readonly rotationRad: readonly [number, number, number];
}

export interface CellTruth {
  readonly format: typeof CELL_TRUTH_FORMAT;
  /** 'none', or 'seed:N' — how the record was made. */
  readonly gap: string;
  /** The world's physics, in the sim calibration's own terms (object masses/frictions, joint damping, Coulomb friction, armature, gripper squeeze). */
  readonly physics: SimCalibration;
  /** Per arm joint (6, both arms): torque the motor delivers per N·m it is asked for (its true torque constant over the nominal one). */
  readonly motorTorqueScale: readonly number[];
  /** Delay from a command reaching the bus to the motor's reply leaving the adapter, ms. */
  readonly replyLatencyMs: number;
  /** Mounting errors of the three cameras. */
  readonly cameraOffsets: Readonly<Record<CameraName, CameraPoseOffset>>;
}

export interface HashedCellTruth {
  readonly truth: CellTruth;
  /** SHA-256 (hex) of the truth's canonical JSON. */
  readonly sha256: string;
}

/** `--gap` values: 'none' or 'seed:N'. One sentence for anything else. */
export class CellGapError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'CellGapError';
  }
}

export type CellGap = { readonly kind: 'none' } | { readonly kind: 'seed'; readonly seed: number };

export function parseCellGap(text: string): CellGap {
  if (text === 'none') return { kind: 'none' };
  const m = /^seed:(\d{1,10})$/.exec(text);
  if (m && Number(m[1]) <= 2 ** 31 - 1) return { kind: 'seed', seed: Number(m[1]) };
  throw new CellGapError(
    `The cell gap must be 'none' (the sim twin's physics) or 'seed:N' with N a whole number from 0 to ${2 ** 31 - 1}, not '${text}'.`,
  );
}

export function formatCellGap(gap: CellGap): string {
  return gap.kind === 'none' ? 'none' : `seed:${gap.seed}`;
}

/** The gap a cell runs with when none is asked for: a fixed seed, so the default cell is the same everywhere. */
export const DEFAULT_CELL_GAP: CellGap = { kind: 'seed', seed: 1 };

const ZERO_OFFSET: CameraPoseOffset = { positionM: [0, 0, 0], rotationRad: [0, 0, 0] };

/**
 * Ranges of the draw, and why: each is a real cell's plausible departure from the vendor numbers
 * the sim twin starts from.
 */
const RANGES = {
  /** Bottles are filled by hand; ±20–25% of the catalogue mass. */
  objectMassScale: [0.8, 1.25],
  /** Label paper, condensation, dust: ±30% on the catalogue friction. */
  objectFrictionScale: [0.7, 1.3],
  /** Table top and finger pads (foam pads wear): ±20%. */
  tableFriction: [0.8, 1.2],
  fingerFriction: [0.8, 1.2],
  /** Gearbox damping and friction vary several-fold between units and with temperature. */
  jointDamping: [0.5, 2],
  jointFriction: [0.5, 2],
  /** Rotor inertia estimates are guesses until SysID: −30%…+50%. */
  armature: [0.7, 1.5],
  /** The gripper's current limit and pad compliance: ±30% of the squeeze. */
  gripperMaxForce: [0.7, 1.3],
  /** Torque constants of Damiao motors differ by several percent; none delivers much more than nominal. */
  motorTorqueScale: [0.9, 1.05],
  /** USB-CAN adapters answer in 0.2–1.5 ms. */
  replyLatencyMs: [0.2, 1.5],
  /** A camera bracket is off by millimetres and a fraction of a degree (σ). */
  cameraPositionSigmaM: 0.005,
  cameraRotationSigmaRad: (0.5 * Math.PI) / 180,
  wristPositionSigmaM: 0.002,
  wristRotationSigmaRad: (0.3 * Math.PI) / 180,
} as const;

/** The truth for a gap: the sim twin's default physics for 'none', a seeded draw for 'seed:N'. */
export function cellTruth(gap: CellGap): HashedCellTruth {
  const truth = gap.kind === 'none' ? noGapTruth() : drawTruth(gap.seed);
  return { truth, sha256: cellTruthHash(truth) };
}

/**
 * The gripper motor's rotor seen at each finger through the rack: rotor inertia × (motor radians
 * per finger metre)² ≈ 3e-5 kg·m² × 137² ≈ 0.6 kg. Without it the 70 g fingers reached ~1 m/s in
 * a few ms under the squeeze force, and the gripper motor reported steps no DM4310 can turn —
 * which the driver rightly drops as implausible and faults on. Every cell has it, gap 'none'
 * included: the one way that cell's physics differ from the twin's default record, which leaves
 * it out (the twin's results were measured without it). It also moves with the hand as the arm
 * turns (Rapier's masses are the same in every direction), so it shows in arm motion, where
 * system identification finds it.
 */
export const CELL_FINGER_REFLECTED_MASS_KG = 0.6;

function noGapTruth(): CellTruth {
  return {
    format: CELL_TRUTH_FORMAT,
    gap: 'none',
    physics: { ...DEFAULT_SIM_CALIBRATION, fingerReflectedMassKg: CELL_FINGER_REFLECTED_MASS_KG },
    motorTorqueScale: [1, 1, 1, 1, 1, 1],
    replyLatencyMs: 0,
    cameraOffsets: Object.fromEntries(CAMERA_NAMES.map((n) => [n, ZERO_OFFSET])) as Record<
      CameraName,
      CameraPoseOffset
    >,
  };
}

function drawTruth(seed: number): CellTruth {
  const rng = createRng(seed);
  const u = (r: readonly [number, number]): number => round6(rng.uniform(r[0], r[1]));
  const base = DEFAULT_SIM_CALIBRATION;
  const joints: JointCalibration[] = base.joints.map((j) => ({
    dampingNms: round6(j.dampingNms * u(RANGES.jointDamping)),
    frictionNm: round6(j.frictionNm * u(RANGES.jointFriction)),
    armatureKgM2: round6(j.armatureKgM2 * u(RANGES.armature)),
  }));
  const physics: SimCalibration = {
    ...base,
    name: `emulated-cell-truth-${seed}`,
    version: 1,
    joints,
    objectMassScale: u(RANGES.objectMassScale),
    objectFrictionScale: u(RANGES.objectFrictionScale),
    tableFriction: round6(base.tableFriction * u(RANGES.tableFriction)),
    fingerFriction: round6(base.fingerFriction * u(RANGES.fingerFriction)),
    gripperMaxForceN: round6(base.gripperMaxForceN * u(RANGES.gripperMaxForce)),
    fingerReflectedMassKg: CELL_FINGER_REFLECTED_MASS_KG,
  };
  const motorTorqueScale = base.joints.map(() => u(RANGES.motorTorqueScale));
  const replyLatencyMs = u(RANGES.replyLatencyMs);
  const offset = (wrist: boolean): CameraPoseOffset => {
    const sp = wrist ? RANGES.wristPositionSigmaM : RANGES.cameraPositionSigmaM;
    const sr = wrist ? RANGES.wristRotationSigmaRad : RANGES.cameraRotationSigmaRad;
    return {
      positionM: [round6(sp * rng.normal()), round6(sp * rng.normal()), round6(sp * rng.normal())],
      rotationRad: [round6(sr * rng.normal()), round6(sr * rng.normal()), round6(sr * rng.normal())],
    };
  };
  const cameraOffsets = Object.fromEntries(CAMERA_NAMES.map((n) => [n, offset(n !== 'cam_high')])) as Record<
    CameraName,
    CameraPoseOffset
  >;
  return { format: CELL_TRUTH_FORMAT, gap: `seed:${seed}`, physics, motorTorqueScale, replyLatencyMs, cameraOffsets };
}

export function cellTruthJson(truth: CellTruth): string {
  const text = canonicalize(truth);
  if (text === undefined) throw new Error('cell truth is not JSON-serialisable');
  return text;
}

export function cellTruthHash(truth: CellTruth): string {
  return createHash('sha256').update(cellTruthJson(truth)).digest('hex');
}

/**
 * What the station may know about the cell it ran on: which truth (by hash) and how it was made,
 * never the numbers. Stored as a calibration record of this kind and linked from every rollout,
 * so analyses can group rollouts by cell without seeing the gap.
 */
export const EMULATED_CELL_KIND = 'emulated-cell';

export function cellMarkerJson(t: HashedCellTruth): string {
  return canonicalize({ kind: EMULATED_CELL_KIND, version: 1, truthSha256: t.sha256 })!;
}

/** That record as the store's calibrations table takes it: its canonical JSON and SHA-256. */
export function cellMarker(t: HashedCellTruth): { readonly json: string; readonly sha256: string } {
  const json = cellMarkerJson(t);
  return { json, sha256: createHash('sha256').update(json).digest('hex') };
}

function round6(x: number): number {
  return Math.round(x * 1e6) / 1e6;
}
