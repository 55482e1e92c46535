/**
 * An excitation trajectory for system-identification takes: the leader lifts the arms from where
 * they rest to a pose in free space, then moves every joint on a sum of sines (seeded phases,
 * 0.15–1.2 Hz) about it, grippers opening and closing — rich enough in speed and acceleration to
 * tell damping, friction, armature and torque constant apart, and never near the table or the
 * other arm (checked point by point on the rig's own kinematics; amplitudes shrink until it holds).
 *
 * The file is the emulated leader's trajectory format (`teleop record --trajectory`); on hardware
 * an operator moves the leader by hand, and any free-space motion of similar richness serves.
 */
import { DOF_PER_ARM, JOINTS_PER_ARM, STATE_DIM, type RigModel } from '../../src/rig/contract.js';
import { linkFramesTable } from '../../src/rig/kinematics.js';
import { createRng } from '../../src/layouts/random.js';

/** Where the arms move about: shoulder and elbow lifted, wrist level — the hand ≈ 0.35 m above the table. */
export const EXCITATION_CENTRE_RAD: readonly number[] = [0, 1.2, 1.2, -0.3, 0, 0];
/** Per joint, the largest swing about the centre (rad): what the wrist and shoulder can do in free space. */
const AMPLITUDE_RAD = [0.35, 0.3, 0.3, 0.4, 0.4, 0.6];
const FREQUENCIES_HZ = [0.15, 0.3, 0.55, 0.85, 1.2];
/** Rest → centre on a minimum-jerk path, then the sines ease in. */
const LIFT_S = 4;
const EASE_IN_S = 2;
/** No fingertip lower than this above the table top (m): contacts are another phase, not what a free-motion fit should see. */
export const MIN_TIP_HEIGHT_M = 0.05;
/** Fingertips sit this far along the gripper's approach axis (src/sim/arm/geometry.ts GRIPPER_GEOMETRY). */
const TIP_OFFSET_M = -0.14;

export interface ExcitationOptions {
  readonly seconds: number;
  readonly seed: number;
  /** Where the arms rest at t = 0 (policy order, 14): the leader's rest pose. */
  readonly start: readonly number[];
  /** Points per second (default 50). */
  readonly pointsPerS?: number;
}

export interface ExcitationTrajectory {
  readonly points: { readonly t: number; readonly q: readonly number[] }[];
  /** The amplitude scale that kept every fingertip above MIN_TIP_HEIGHT_M (1 = full). */
  readonly amplitudeScale: number;
  readonly minTipHeightM: number;
}

export function excitationTrajectory(model: RigModel, o: ExcitationOptions): ExcitationTrajectory {
  if (o.start.length !== STATE_DIM)
    throw new Error(`excitation start pose needs ${STATE_DIM} values, not ${o.start.length}`);
  for (let scale = 1; scale > 0.1; scale *= 0.8) {
    const t = build(o, scale);
    const minTip = minTipHeight(model, t, LIFT_S);
    if (minTip >= MIN_TIP_HEIGHT_M) return { points: t, amplitudeScale: scale, minTipHeightM: minTip };
  }
  throw new Error('no excitation amplitude keeps the fingertips above the table');
}

function build(o: ExcitationOptions, scale: number): { t: number; q: number[] }[] {
  const rng = createRng(o.seed);
  const phases = Array.from({ length: STATE_DIM * FREQUENCIES_HZ.length }, () => rng.uniform(0, 2 * Math.PI));
  const gripperPeriod = Array.from({ length: 2 }, () => rng.uniform(2.5, 4));
  const hz = o.pointsPerS ?? 50;
  const n = Math.floor(o.seconds * hz) + 1;
  const points: { t: number; q: number[] }[] = [];
  for (let i = 0; i < n; i++) {
    const t = i / hz;
    const lift = minimumJerk(Math.min(1, t / LIFT_S));
    const s = Math.max(0, t - LIFT_S);
    const ease = minimumJerk(Math.min(1, s / EASE_IN_S));
    const q: number[] = new Array(STATE_DIM);
    for (let a = 0; a < 2; a++) {
      const base = a * DOF_PER_ARM;
      for (let j = 0; j < JOINTS_PER_ARM; j++) {
        let sum = 0;
        for (let k = 0; k < FREQUENCIES_HZ.length; k++)
          sum += Math.sin(2 * Math.PI * FREQUENCIES_HZ[k] * s + phases[(base + j) * FREQUENCIES_HZ.length + k]);
        const centre = o.start[base + j] + (EXCITATION_CENTRE_RAD[j] - o.start[base + j]) * lift;
        q[base + j] = round5(centre + ease * scale * AMPLITUDE_RAD[j] * (sum / FREQUENCIES_HZ.length) * 1.6);
      }
      // Open (1) → shut (0.1) → open, on each arm's own period once lifted.
      const g = 0.55 + 0.45 * Math.cos((2 * Math.PI * s) / gripperPeriod[a]);
      q[base + JOINTS_PER_ARM] = round5(o.start[base + JOINTS_PER_ARM] + (g - o.start[base + JOINTS_PER_ARM]) * ease);
    }
    points.push({ t: round5(t), q });
  }
  return points;
}

/** Lowest fingertip over the points after `fromS` (while lifting, the arms leave their rest pose by the table). */
function minTipHeight(model: RigModel, points: readonly { t: number; q: readonly number[] }[], fromS: number): number {
  let min = Infinity;
  for (const p of points) {
    if (p.t < fromS) continue;
    for (let a = 0; a < 2; a++) {
      const frames = linkFramesTable(model.arms[a], p.q.slice(a * DOF_PER_ARM, a * DOF_PER_ARM + JOINTS_PER_ARM));
      const g = frames[frames.length - 1];
      const z = g.position[2] + g.rotation[8] * TIP_OFFSET_M - model.arms[a].basePose.position[2];
      if (z < min) min = z;
    }
  }
  return min;
}

function minimumJerk(u: number): number {
  return u * u * u * (10 - 15 * u + 6 * u * u);
}

function round5(x: number): number {
  return Math.round(x * 1e5) / 1e5;
}
