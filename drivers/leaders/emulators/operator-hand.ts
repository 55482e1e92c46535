/**
 * The emulated operator's hand on a leader: where it moves the leader's joints at each instant,
 * and when it presses the buttons. Either a smooth scripted motion (slow sines about a rest pose,
 * eased in so it starts at rest) or a joint trajectory file; button presses on cue.
 *
 * Trajectory file (JSON): {"points": [{"t": 0, "q": [14 numbers, policy order, grippers 0 closed … 1 open]}, …],
 * "buttons": [{"t": 2.5, "arm": "left", "button": 1, "holdS": 0.2}]} — points in rising t, joints in
 * radians; between points the hand moves on a cubic (smoothstep) blend, after the last it stays.
 */
import { readFileSync } from 'node:fs';
import { ARM_SIDES, DOF_PER_ARM, JOINTS_PER_ARM, STATE_DIM, type ArmSide } from '../../../src/rig/contract.js';

export interface ButtonCue {
  /** Seconds after the hand starts moving. */
  readonly t: number;
  readonly arm: ArmSide;
  readonly button: number;
  /** How long the button stays down. Default 0.15 s. */
  readonly holdS?: number;
}

export interface HandMotion {
  /** Writes the hand's pose at time t (seconds since start) into out (14 entries); velocities into v. */
  pose(t: number, out: Float64Array, v: Float64Array): void;
  /** Button bits of `arm` at t. */
  buttons(t: number, arm: ArmSide): number;
}

/**
 * The pose the emulated cell's arms rest in, unpowered: joints 2–3 a hair above their lower stops,
 * the wrist (joint 4) folded under its own weight, the gripper open — where an operator lays the
 * leader down beside it.
 */
export const LEADER_REST_POSE: readonly number[] = [0, 0.015, 0.015, -0.74, 0, 0, 1, 0, 0.015, 0.015, -0.74, 0, 0, 1];

function buttonBits(cues: readonly ButtonCue[], t: number, arm: ArmSide): number {
  let bits = 0;
  for (const c of cues) if (c.arm === arm && t >= c.t && t < c.t + (c.holdS ?? 0.15)) bits |= 1 << c.button;
  return bits;
}

export interface ScriptedMotionOptions {
  /** Where the hand starts and what it moves about. Default LEADER_REST_POSE. */
  readonly rest?: readonly number[];
  /** Seconds at rest before moving. Default 0. */
  readonly stillS?: number;
  /** Amplitude scale (1 ≈ 0.35 rad on the shoulder). Default 1. */
  readonly amplitude?: number;
  readonly cues?: readonly ButtonCue[];
}

/** Per joint: amplitude (rad) and period (s). Joints 2–3 only rise from their stops (1 − cos). */
const AMPLITUDE = [0.35, 0.5, 0.45, 0.3, 0.3, 0.4];
const PERIOD_S = [5.1, 4.3, 3.7, 3.1, 2.9, 2.3];
const GRIPPER_PERIOD_S = 3.3;
/** The motion eases in over this long, so the hand starts at rest with zero velocity. */
const EASE_S = 1;

export function scriptedMotion(o: ScriptedMotionOptions = {}): HandMotion {
  const rest = o.rest ?? LEADER_REST_POSE;
  const still = o.stillS ?? 0;
  const scale = o.amplitude ?? 1;
  const cues = o.cues ?? [];
  return {
    pose(t, out, v) {
      const s = Math.max(0, t - still);
      // Smoothstep ease-in of the amplitude: position and velocity continuous at s = 0.
      const u = Math.min(1, s / EASE_S);
      const ease = u * u * (3 - 2 * u);
      const dease = s < EASE_S ? (6 * u * (1 - u)) / EASE_S : 0;
      for (let a = 0; a < 2; a++) {
        const base = a * DOF_PER_ARM;
        const mirror = a === 0 ? 1 : -1;
        for (let j = 0; j < JOINTS_PER_ARM; j++) {
          const w = (2 * Math.PI) / PERIOD_S[j];
          const amp = AMPLITUDE[j] * scale * (j === 0 || j === 3 || j === 5 ? mirror : 1);
          // Joints 2–3 rise from their stops (1 − cos ≥ 0); the others swing about rest.
          const f = j === 1 || j === 2 ? (1 - Math.cos(w * s)) / 2 : Math.sin(w * s);
          const df = j === 1 || j === 2 ? (w * Math.sin(w * s)) / 2 : w * Math.cos(w * s);
          out[base + j] = rest[base + j] + amp * ease * f;
          v[base + j] = amp * (dease * f + ease * df);
        }
        const wg = (2 * Math.PI) / GRIPPER_PERIOD_S;
        const g = (1 - Math.cos(wg * s)) / 2; // 0 → 1 → 0: open, closed, open
        out[base + JOINTS_PER_ARM] = rest[base + JOINTS_PER_ARM] - ease * g * 0.9;
        v[base + JOINTS_PER_ARM] = -(dease * g + (ease * wg * Math.sin(wg * s)) / 2) * 0.9;
      }
    },
    buttons: (t, arm) => buttonBits(cues, t, arm),
  };
}

export class TrajectoryFileError extends Error {}

/** A joint trajectory (see the file format above) as a hand motion. */
export function trajectoryMotion(
  points: readonly { t: number; q: readonly number[] }[],
  cues: readonly ButtonCue[] = [],
): HandMotion {
  if (points.length === 0) throw new TrajectoryFileError('The trajectory has no points.');
  points.forEach((p, i) => {
    if (!Number.isFinite(p.t) || (i > 0 && p.t <= points[i - 1].t))
      throw new TrajectoryFileError(
        `Trajectory point ${i} has time ${String(p.t)}; times must be numbers rising from point to point.`,
      );
    if (p.q.length !== STATE_DIM || !p.q.every(Number.isFinite))
      throw new TrajectoryFileError(
        `Trajectory point ${i} needs ${STATE_DIM} finite numbers in q (policy order), not ${p.q.length}.`,
      );
  });
  // The segment last used: time only moves forward, so the search starts there (a scan from the
  // first point on every call made a long excitation file cost more than the whole cell).
  let last = 0;
  return {
    pose(t, out, v) {
      let i = last < points.length && points[last].t <= t ? last : 0;
      while (i + 1 < points.length && points[i + 1].t <= t) i++;
      last = i;
      const a = points[i];
      const b = points[Math.min(i + 1, points.length - 1)];
      if (b === a || t <= a.t) {
        for (let k = 0; k < STATE_DIM; k++) {
          out[k] = (t <= a.t ? points[0] : a).q[k];
          v[k] = 0;
        }
        return;
      }
      const span = b.t - a.t;
      const u = (t - a.t) / span;
      const s = u * u * (3 - 2 * u);
      const ds = (6 * u * (1 - u)) / span;
      for (let k = 0; k < STATE_DIM; k++) {
        out[k] = a.q[k] + (b.q[k] - a.q[k]) * s;
        v[k] = (b.q[k] - a.q[k]) * ds;
      }
    },
    buttons: (t, arm) => buttonBits(cues, t, arm),
  };
}

export function readTrajectoryFile(file: string): HandMotion {
  let text: string;
  try {
    text = readFileSync(file, 'utf8');
  } catch (e) {
    throw new TrajectoryFileError(`Cannot read the trajectory file ${file}: ${(e as Error).message}.`);
  }
  return parseTrajectory(text, file);
}

const isObject = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v);

/** A trajectory file's text as a hand motion; anything else is one TrajectoryFileError sentence naming `file`. */
export function parseTrajectory(text: string, file: string): HandMotion {
  let json: unknown;
  try {
    json = JSON.parse(text);
  } catch (e) {
    throw new TrajectoryFileError(`Cannot read the trajectory file ${file}: ${(e as Error).message}.`);
  }
  const o = isObject(json) ? json : {};
  if (!Array.isArray(o.points))
    throw new TrajectoryFileError(
      `The trajectory file ${file} needs a "points" array of {"t": seconds, "q": [${STATE_DIM} numbers]}.`,
    );
  const cues = Array.isArray(o.buttons) ? (o.buttons as unknown[]) : [];
  for (const c of cues) {
    if (
      !isObject(c) ||
      !ARM_SIDES.includes(c.arm as ArmSide) ||
      !(c.button === 0 || c.button === 1) ||
      typeof c.t !== 'number' ||
      !Number.isFinite(c.t)
    )
      throw new TrajectoryFileError(
        `The trajectory file ${file} has a button cue that is not {"t": s, "arm": "left"|"right", "button": 0|1}.`,
      );
  }
  (o.points as unknown[]).forEach((p, i) => {
    if (!isObject(p) || typeof p.t !== 'number' || !Array.isArray(p.q) || !p.q.every((x) => typeof x === 'number')) {
      throw new TrajectoryFileError(
        `${file}: trajectory point ${i} is not {"t": seconds, "q": [${STATE_DIM} numbers]}.`,
      );
    }
  });
  try {
    return trajectoryMotion(o.points as { t: number; q: number[] }[], cues as unknown as ButtonCue[]);
  } catch (e) {
    throw new TrajectoryFileError(`${file}: ${(e as Error).message}`);
  }
}
