/**
 * Open-loop replay: the sim twin driven by a recorded episode's applied commands at their recorded
 * times, from its recorded start pose, through the same SimRig (safety supervisor, gravity
 * feed-forward as the YAM driver adds it) every sim rollout uses, on the physics engine the
 * calibration record names — then the simulated joint angles
 * beside the measured ones at every recorded state time.
 *
 * "Open loop" means the commands are the recording's, not recomputed: nothing the sim does changes
 * what is sent. The motors' own PD law still closes the loop inside each joint, as on the robot.
 *
 * The table is what the take had on it: empty, or its layout (objects and fixtures) placed where
 * the layout puts them — open loop, the arms grasp the objects as on the rig as long as they track.
 * Samples where a gripper held something (commanded shut, stopped open on it) are marked 'holding'
 * and give their own residuals: the held object's weight loads the arm (the driver's gravity
 * feed-forward does not know it), so they carry its mass. A replay whose simulated gripper closed
 * where the measured one held has lost the object (`lostObject`): its holding residuals say nothing
 * about the mass.
 */
import { ARM_SIDES, DOF_PER_ARM, JOINTS_PER_ARM, STATE_DIM, type RigModel } from '../../src/rig/contract.js';
import { createEngineScene } from '../../src/sim/engine-scene.js';
import { SimRig } from '../../src/sim/sim-rig.js';
import type { SimCalibration } from '../../src/sim/calibration.js';
import { getTask } from '../../src/tasks/registry.js';
import { forwardKinematicsTable, newFrame } from '../../src/rig/kinematics.js';
import type { EpisodeTrajectory } from './episode-trajectory.js';

/** The first stretch of every replay is not compared: the sim starts at rest where the arm was already moving; the motors' PD law pulls it onto the recorded motion within this. */
export const BURN_IN_S = 0.5;
/** Residuals for the fit are taken at this rate (every state sample is still used for reported errors); neighbouring 250 Hz samples carry almost the same information. */
export const RESIDUAL_HZ = 25;
/** The twelve arm joints (no grippers), as indices into the 14-wide state. */
export const ARM_JOINT_INDICES: readonly number[] = ARM_SIDES.flatMap((_, a) =>
  Array.from({ length: JOINTS_PER_ARM }, (_, j) => a * DOF_PER_ARM + j),
);
/**
 * The joints whose holding residuals carry a held object's weight: each arm's three parallel pitch
 * joints (2–4, horizontal axes), loaded by it through the arm's length. Joint 1 (vertical) and the
 * wrist's yaw and roll (5–6) feel it only through where it sits in the fingers, which a replay
 * reproduces to millimetres at best: on sim takes of known physics, ±10 % of the object mass moved
 * their holding samples by as much off any trend as along it, where joints 2–4 moved along it
 * (bend under a seventh of the slope).
 */
export const HOLDING_JOINT_INDICES: readonly number[] = ARM_SIDES.flatMap((_, a) =>
  [1, 2, 3].map((j) => a * DOF_PER_ARM + j),
);
/**
 * A gripper commanded below this (0 closed … 1 open) and stopped at least HOLD_BLOCKED more open
 * than commanded is holding something (an empty gripper closes onto its command; the margin covers
 * its lag while closing).
 */
const HOLD_COMMAND_MAX = 0.5;
const HOLD_BLOCKED = 0.1;
/** The replay lost a held object when its simulated gripper closed onto its command on more than this share of the measured holding samples. */
const LOST_SHARE = 0.1;

/** A fingertip measured this close to the table top (m) may touch it: that sample is 'contact'. */
const CONTACT_HEIGHT_M = 0.02;
/** Fingertips along the gripper's approach axis (src/sim/arm/geometry.ts GRIPPER_GEOMETRY). */
const TIP_OFFSET_M = -0.14;

/** Free motion; a gripper holding something; a fingertip at the table (from the measured pose). */
export type ReplayPhase = 'free' | 'holding' | 'contact';
export const REPLAY_PHASES: readonly ReplayPhase[] = ['free', 'holding', 'contact'];

export interface ReplayResult {
  /** Compared state samples (after the burn-in): episode times, s. */
  readonly timesS: Float64Array;
  /** Measured and simulated positions at those times, 14 per sample. */
  readonly measured: Float64Array;
  readonly simulated: Float64Array;
  /** Per sample: its phase (index into REPLAY_PHASES). */
  readonly phase: Uint8Array;
  /** RMS of measured − simulated per state index (14; grippers in normalised opening) over the free-motion samples, rad. */
  readonly rmsRad: readonly number[];
  /** The same per phase, with the sample count (NaN where a phase has none). */
  readonly byPhase: Readonly<Record<ReplayPhase, { readonly samples: number; readonly rmsRad: readonly number[] }>>;
  /** Fit residuals (measured − simulated, rad) of the arm joints at RESIDUAL_HZ, free-motion samples only (on a table with objects: those before the first grasp or table contact). */
  readonly residuals: Float64Array;
  /** The same over the holding samples, of the pitch joints (HOLDING_JOINT_INDICES: the held object's weight in them). */
  readonly holdingResiduals: Float64Array;
  /** The measured gripper held an object the simulated one dropped or never caught: why, in one sentence. */
  readonly lostObject?: string;
  /** The sim became unstable or faulted: why (the replay stopped there). */
  readonly problem?: string;
}

export interface ReplayOptions {
  /** Replay only this long from the first command (the fit's window; default the whole episode). */
  readonly seconds?: number;
}

/** An empty table: the replay is of the arms alone. */
const EMPTY_TABLE = { index: 0, tier: 1, fixtures: [], objects: [] } as const;
/** The task whose scene an empty-table replay builds (any: nothing of it is placed). */
const EMPTY_TABLE_TASK = 'bottles-in-the-bin';

export async function replayEpisode(
  traj: EpisodeTrajectory,
  model: RigModel,
  calibration: SimCalibration,
  options: ReplayOptions = {},
): Promise<ReplayResult> {
  const { states, commands } = traj;
  const k0 = firstReplayedCommand(traj);
  const t0 = commands.timesS[k0];
  // Start from the last measured state at or before the first command (the pose the rig held then).
  let s0 = 0;
  while (s0 + 1 < states.timesS.length && states.timesS[s0 + 1] <= t0) s0++;
  const start = states.position.subarray(s0 * STATE_DIM, (s0 + 1) * STATE_DIM);
  // The layout where it says (no placement noise: where an operator really put each object is not recorded).
  // On the engine the record names: a fit of a MuJoCo record replays MuJoCo.
  const scene = await createEngineScene({
    rigModel: model,
    task: getTask(traj.table?.task ?? EMPTY_TABLE_TASK),
    layout: traj.table?.layout ?? EMPTY_TABLE,
    calibration,
    startPosition: start,
  });
  try {
    const rig = new SimRig({ scene });
    await rig.configure();
    await rig.activate();
    const nStates = states.timesS.length;
    const sim = new Float64Array(nStates * STATE_DIM);
    const compared = new Uint8Array(nStates);
    const cmd = {
      position: new Float64Array(STATE_DIM),
      velocity: new Float64Array(STATE_DIM),
      torqueNm: new Float64Array(STATE_DIM),
    };
    let si = s0 + 1;
    let problem: string | undefined;
    // Each recorded state is a measurement: the rig ticks (measures, feeds gravity forward from
    // it, runs its watchdog) at that time, as the driver did when the reply arrived; the command
    // after it is written on that measurement.
    let ticked = false;
    const sample = (): void => {
      const tS = states.timesS[si] - t0;
      rig.clock.waitUntil(tS);
      rig.tick();
      ticked = true;
      const st = rig.read();
      sim.set(st.position, si * STATE_DIM);
      compared[si] = tS >= BURN_IN_S ? 1 : 0;
      si++;
    };
    const endS = options.seconds ?? Infinity;
    let lastCommandS = 0;
    for (let k = k0; k < commands.timesS.length && problem === undefined; k++) {
      const tc = commands.timesS[k] - t0;
      if (tc > endS) break;
      lastCommandS = tc;
      while (si < nStates && states.timesS[si] - t0 <= tc) sample();
      rig.clock.waitUntil(tc);
      if (!ticked) rig.tick();
      ticked = false;
      const faults = rig.read().faults;
      if (faults.length > 0) {
        problem = faults[0].message;
        break;
      }
      const o = k * STATE_DIM;
      cmd.position.set(commands.position.subarray(o, o + STATE_DIM));
      cmd.velocity.set(commands.velocity.subarray(o, o + STATE_DIM));
      cmd.torqueNm.set(commands.effort.subarray(o, o + STATE_DIM));
      rig.write(cmd);
    }
    // The states after the last command: the motors keep it, as on the rig.
    while (problem === undefined && si < nStates && states.timesS[si] - t0 <= lastCommandS + 0.05) sample();
    return summarise(traj, model, sim, compared, problem);
  } finally {
    scene.free();
  }
}

function summarise(
  traj: EpisodeTrajectory,
  model: RigModel,
  sim: Float64Array,
  compared: Uint8Array,
  problem: string | undefined,
): ReplayResult {
  const { states, commands } = traj;
  const phases = phasesOf(traj, model);
  const idx: number[] = [];
  for (let i = 0; i < compared.length; i++) if (compared[i]) idx.push(i);
  const n = idx.length;
  const timesS = new Float64Array(n);
  const measured = new Float64Array(n * STATE_DIM);
  const simulated = new Float64Array(n * STATE_DIM);
  const phase = new Uint8Array(n);
  const sq = REPLAY_PHASES.map(() => new Float64Array(STATE_DIM));
  const count = REPLAY_PHASES.map(() => 0);
  let ci = 0;
  const residuals: number[] = [];
  const holdingResiduals: number[] = [];
  let nextResidualT = -Infinity;
  let nextHoldingT = -Infinity;
  let objectsMoved = false;
  const held = [0, 0];
  const dropped = [0, 0];
  const droppedAt = [NaN, NaN];
  idx.forEach((i, k) => {
    const t = states.timesS[i];
    timesS[k] = t;
    measured.set(states.position.subarray(i * STATE_DIM, (i + 1) * STATE_DIM), k * STATE_DIM);
    simulated.set(sim.subarray(i * STATE_DIM, (i + 1) * STATE_DIM), k * STATE_DIM);
    while (ci + 1 < commands.timesS.length && commands.timesS[ci + 1] <= t) ci++;
    const ph = phases[i];
    phase[k] = ph;
    if (ph === 1) {
      for (let a = 0; a < 2; a++) {
        if (!holdsAt(states.position, i, commands.position, ci, a)) continue;
        held[a] += 1;
        const g = a * DOF_PER_ARM + JOINTS_PER_ARM;
        if (simulated[k * STATE_DIM + g] <= commands.position[ci * STATE_DIM + g] + HOLD_BLOCKED) {
          dropped[a] += 1;
          if (Number.isNaN(droppedAt[a])) droppedAt[a] = t;
        }
      }
      if (t >= nextHoldingT) {
        nextHoldingT = t + 1 / RESIDUAL_HZ - 1e-9;
        for (const j of HOLDING_JOINT_INDICES)
          holdingResiduals.push(measured[k * STATE_DIM + j] - simulated[k * STATE_DIM + j]);
      }
    }
    count[ph] += 1;
    for (let j = 0; j < STATE_DIM; j++) {
      const d = measured[k * STATE_DIM + j] - simulated[k * STATE_DIM + j];
      sq[ph][j] += d * d;
    }
    // On a table with objects, free motion counts until the first grasp or table contact: after it
    // the objects may stand elsewhere in the replay than on the rig (held apart, below).
    if (ph !== 0 && traj.table) objectsMoved = true;
    if (ph === 0 && !objectsMoved && t >= nextResidualT) {
      nextResidualT = t + 1 / RESIDUAL_HZ - 1e-9;
      for (const j of ARM_JOINT_INDICES) residuals.push(measured[k * STATE_DIM + j] - simulated[k * STATE_DIM + j]);
    }
  });
  const rms = (p: number): number[] => Array.from(sq[p], (s) => (count[p] > 0 ? Math.sqrt(s / count[p]) : NaN));
  const byPhase = {
    free: { samples: count[0], rmsRad: rms(0) },
    holding: { samples: count[1], rmsRad: rms(1) },
    contact: { samples: count[2], rmsRad: rms(2) },
  };
  const lost = [0, 1].find((a) => held[a] > 0 && dropped[a] > LOST_SHARE * held[a]);
  const lostObject =
    lost === undefined
      ? undefined
      : `the replay of ${traj.file.split('/').pop()} lost the object the ${ARM_SIDES[lost]} gripper held on the rig (the simulated gripper closed on ${((dropped[lost] / held[lost]) * 100).toFixed(0)}% of the holding samples, first at ${droppedAt[lost].toFixed(2)} s): its holding samples say nothing about the object.`;
  return {
    timesS,
    measured,
    simulated,
    phase,
    rmsRad: rms(0),
    byPhase,
    residuals: Float64Array.from(residuals),
    holdingResiduals: Float64Array.from(holdingResiduals),
    lostObject,
    problem,
  };
}

/** Last measured holding sample's time from the first command (s), or undefined when the episode holds nothing after the burn-in: how far a replay must run to see every holding sample. */
export function holdingEndS(traj: EpisodeTrajectory, model: RigModel): number | undefined {
  const { states, commands } = traj;
  const t0 = commands.timesS[firstReplayedCommand(traj)];
  const phases = phasesOf(traj, model);
  let end: number | undefined;
  for (let i = 0; i < states.timesS.length; i++) {
    const t = states.timesS[i];
    if (t - t0 >= BURN_IN_S && phases[i] === 1) end = t - t0;
  }
  return end;
}

/** The first command the replay writes: the take's first, or the first after its last watchdog hold (EpisodeTrajectory.replayFromS). */
function firstReplayedCommand(traj: EpisodeTrajectory): number {
  const from = traj.replayFromS;
  if (from === undefined) return 0;
  let k = 0;
  while (k + 1 < traj.commands.timesS.length && traj.commands.timesS[k] < from) k++;
  return k;
}

/** Arm a's gripper was commanded shut and stopped open on something (measured). */
function holdsAt(position: Float64Array, i: number, command: Float64Array, ci: number, a: number): boolean {
  const g = a * DOF_PER_ARM + JOINTS_PER_ARM;
  const commanded = command[ci * STATE_DIM + g];
  return commanded < HOLD_COMMAND_MAX && position[i * STATE_DIM + g] > commanded + HOLD_BLOCKED;
}

/**
 * The phase of every state sample, from what was measured and commanded (never from the sim, so
 * every calibration sees the same samples): computed once per episode, not once per replay — a
 * fit replays each episode hundreds of times.
 */
const PHASES = new WeakMap<EpisodeTrajectory, { readonly model: RigModel; readonly phases: Uint8Array }>();
function phasesOf(traj: EpisodeTrajectory, model: RigModel): Uint8Array {
  const known = PHASES.get(traj);
  if (known && known.model === model) return known.phases;
  const { states, commands } = traj;
  const phases = new Uint8Array(states.timesS.length);
  let ci = 0;
  for (let i = 0; i < phases.length; i++) {
    while (ci + 1 < commands.timesS.length && commands.timesS[ci + 1] <= states.timesS[i]) ci++;
    phases[i] = phaseOf(model, states.position, i, commands.position, ci);
  }
  PHASES.set(traj, { model, phases });
  return phases;
}

const HAND = newFrame();
function phaseOf(model: RigModel, position: Float64Array, i: number, command: Float64Array, ci: number): number {
  let holding = false;
  for (let a = 0; a < 2; a++) {
    const base = a * DOF_PER_ARM;
    if (holdsAt(position, i, command, ci, a)) holding = true;
    const hand = forwardKinematicsTable(
      model.arms[a],
      position.subarray(i * STATE_DIM + base, i * STATE_DIM + base + JOINTS_PER_ARM),
      HAND,
    );
    const tipZ = hand.position[2] + hand.rotation[8] * TIP_OFFSET_M - model.arms[a].basePose.position[2];
    if (tipZ < CONTACT_HEIGHT_M) return 2;
  }
  return holding ? 1 : 0;
}
