import { test } from 'node:test';
import assert from 'node:assert/strict';
import { tickThrough } from '../rig/contract-suite.js';
import { yamRigModel, YAM_LIMIT_BUFFER_RAD } from '../../src/rig/yam.js';
import { BOTTLES_IN_THE_BIN } from '../../src/tasks/index.js';
import { DEFAULT_SIM_CALIBRATION, withCalibration, type SimCalibration } from '../../src/sim/calibration.js';
import { createScene, HOME_START_POSITION, type SimScene } from '../../src/sim/scene.js';
import { linkFramesTable } from '../../src/rig/kinematics.js';
import { armReach } from '../../src/policy/code/arm-reach.js';
import { newMotorCommand } from '../../src/sim/arm/motor-command.js';
import { SimRig } from '../../src/sim/sim-rig.js';
import type { Layout } from '../../src/tasks/types.js';

// How the sim arms move under their motors, at the default physics step: what SysID fits and
// what every policy's trajectory rests on.

const EMPTY: Layout = {
  index: 0,
  tier: 1,
  fixtures: [{ id: 'bin', kind: 'bin', pose: { x: 0.1, y: -0.3, yawRad: 0 } }],
  objects: [],
};
/** Both arms reaching out and turned, so gravity loads every joint (the wrists included). */
const REACHING = [0.3, 1.2, 1.0, -0.4, 0.5, 0.7, 1, -0.5, 0.8, 0.6, 0.3, -0.2, 1.1, 1];
const FINE: SimCalibration = withCalibration(DEFAULT_SIM_CALIBRATION, { physicsStepS: 1 / 1000, solverIterations: 8 });

async function rigAt(calibration: SimCalibration, start: readonly number[]): Promise<{ scene: SimScene; rig: SimRig }> {
  const scene = await createScene({
    rigModel: yamRigModel(),
    task: BOTTLES_IN_THE_BIN,
    layout: EMPTY,
    calibration,
    startPosition: start,
  });
  const rig = new SimRig({ scene });
  await rig.configure();
  await rig.activate();
  return { scene, rig };
}

/** Commands target(t) every 20 ms control tick for `seconds`; returns the measured state after each tick. */
async function track(rig: SimRig, seconds: number, target: (tS: number) => Float64Array): Promise<Float64Array[]> {
  const out: Float64Array[] = [];
  const t0 = rig.clock.nowS();
  for (let k = 0; k < Math.round(seconds / 0.02); k++) {
    rig.write({ position: target(rig.clock.nowS() - t0) });
    await tickThrough(rig, rig.clock, 0.02);
    out.push(Float64Array.from(rig.read().position));
  }
  return out;
}

const JOINTS = [0, 1, 2, 3, 4, 5, 7, 8, 9, 10, 11, 12];
const maxJointError = (a: ArrayLike<number>, b: ArrayLike<number>): number =>
  Math.max(...JOINTS.map((j) => Math.abs(a[j] - b[j])));

test('an arm holding a reaching pose against gravity stays on target at the default step: no creep', async () => {
  const { scene, rig } = await rigAt(DEFAULT_SIM_CALIBRATION, REACHING);
  try {
    const hold = Float64Array.from(REACHING);
    const states = await track(rig, 3, () => hold);
    // The arms' weight is carried in joint space (gravity as a generalized force), so nothing
    // leaks through the joint constraints: before, the light wrists crept 0.04–0.07 rad off
    // target at this step, and kept creeping.
    const at1 = maxJointError(states[49], hold);
    const at3 = maxJointError(states[states.length - 1], hold);
    assert.ok(at1 < 0.005, `1 s: a joint is ${at1.toFixed(4)} rad off its target`);
    assert.ok(at3 < 0.005, `3 s: a joint is ${at3.toFixed(4)} rad off its target`);
    assert.deepEqual(rig.read().faults, []);
  } finally {
    scene.free();
  }
});

/** Every joint swinging at its own frequency, ramped in over the first second. */
function sineTarget(tS: number): Float64Array {
  const amp = [0.8, 0.6, 0.6, 0.8, 1.0, 1.2];
  const hz = [0.3, 0.45, 0.5, 0.7, 0.9, 1.1];
  const centre = [0, 0.8, 0.8, 0, 0, 0];
  const ramp = Math.min(1, tS);
  const q = new Float64Array(14);
  for (const arm of [0, 7]) {
    for (let j = 0; j < 6; j++) q[arm + j] = ramp * (centre[j] + amp[j] * Math.sin(2 * Math.PI * hz[j] * tS));
    q[arm + 6] = 1;
  }
  return q;
}

/** The rms and worst joint-angle deviation between each calibration's tracking of sineTarget over 4 s. */
async function trackingDeviation(a: SimCalibration, b: SimCalibration): Promise<{ rms: number; worst: number }> {
  const home = Array.from(sineTarget(0));
  const runs: Float64Array[][] = [];
  for (const cal of [a, b]) {
    const { scene, rig } = await rigAt(cal, home);
    try {
      runs.push(await track(rig, 4, sineTarget));
      assert.deepEqual(rig.read().faults, []);
    } finally {
      scene.free();
    }
  }
  let sq = 0;
  let n = 0;
  let worst = 0;
  runs[0].forEach((fine, k) => {
    for (const j of JOINTS) {
      const d = runs[1][k][j] - fine[j];
      sq += d * d;
      n += 1;
      worst = Math.max(worst, Math.abs(d));
    }
  });
  return { rms: Math.sqrt(sq / n), worst };
}

test('a moving target is tracked at the default step as at a fine reference step', async () => {
  const { rms, worst } = await trackingDeviation(FINE, DEFAULT_SIM_CALIBRATION);
  // Measured: rms 0.02 rad, worst 0.15 rad (the light wrist roll in its fastest swing).
  assert.ok(rms < 0.03, `rms deviation from the fine step ${rms.toFixed(4)} rad`);
  assert.ok(worst < 0.25, `worst deviation from the fine step ${worst.toFixed(3)} rad`);
});

test('multibody arms (calibration armJoints, an experiment) start where built, hold against gravity and track as the fine impulse step does, at one substep', async () => {
  const multibody = withCalibration(DEFAULT_SIM_CALIBRATION, { armJoints: 'multibody', solverIterations: 1 });
  const { scene, rig } = await rigAt(multibody, REACHING);
  try {
    // A multibody starts each joint at coordinate 0; the bodies are turned so that is the start angle.
    assert.ok(maxJointError(rig.read().position, REACHING) < 1e-4, 'read where built');
    const hold = Float64Array.from(REACHING);
    const states = await track(rig, 1, () => hold);
    assert.ok(
      maxJointError(states[states.length - 1], hold) < 0.005,
      `1 s: a joint is ${maxJointError(states[states.length - 1], hold).toFixed(4)} rad off its target`,
    );
  } finally {
    scene.free();
  }
  // The joints are exact at any substep, and the damping is solved in joint space (arm/multibody-arm.ts):
  // measured rms 0.005 rad, worst 0.04 (the impulse arm at one substep: 0.064, worst 0.29).
  const { rms, worst } = await trackingDeviation(FINE, multibody);
  assert.ok(rms < 0.02, `rms deviation from the fine impulse step ${rms.toFixed(4)} rad`);
  assert.ok(worst < 0.1, `worst deviation from the fine impulse step ${worst.toFixed(3)} rad`);
});

test('a joint pushed from outside stops at its end stop instead of spinning through its limit', async () => {
  const scene = await createScene({
    rigModel: yamRigModel(),
    task: BOTTLES_IN_THE_BIN,
    layout: EMPTY,
    calibration: DEFAULT_SIM_CALIBRATION,
  });
  try {
    const arm = scene.arms[0];
    const commands = [newMotorCommand(), newMotorCommand()];
    const g = new Float64Array(6);
    const wrist = 5;
    const limit = arm.model.joints[wrist].maxRad;
    const steps = Math.round(3 / DEFAULT_SIM_CALIBRATION.physicsStepS);
    for (let s = 0; s < steps; s++) {
      for (let a = 0; a < 2; a++) {
        scene.arms[a].gravityTorque(g);
        const c = commands[a];
        for (let j = 0; j < 6; j++) {
          c.q[j] = 0;
          c.kp[j] = scene.arms[a].model.joints[j].kp;
          c.kd[j] = scene.arms[a].model.joints[j].kd;
          c.tauFf[j] = g[j];
        }
      }
      // The left wrist roll is limp and twisted hard (as a collision would), far past its limit.
      commands[0].kp[wrist] = 0;
      commands[0].kd[wrist] = 0;
      commands[0].tauFf[wrist] = 2;
      scene.step(commands);
    }
    const q = arm.q[wrist];
    assert.ok(
      q > limit + YAM_LIMIT_BUFFER_RAD && q < limit + YAM_LIMIT_BUFFER_RAD + 0.05,
      `the wrist rests at ${q.toFixed(3)} rad (limit ${limit.toFixed(3)})`,
    );
    assert.ok(Math.abs(arm.dq[wrist]) < 0.05, `and is still (${arm.dq[wrist].toFixed(3)} rad/s)`);
    assert.equal(scene.instability(), undefined);
  } finally {
    scene.free();
  }
});

test('arm links rest on the table instead of passing through it', async () => {
  // A target pose (inside the limits) that would put the right forearm's wrist end 6 cm into the
  // table top while the hand points up, clear of it (the hand always collided with the table).
  const model = yamRigModel();
  const right = model.arms[1];
  const target = [0, 3.0, 0.6, -1.6, 0, 0];
  const forearm = (q: ArrayLike<number>): number =>
    Math.min(
      ...linkFramesTable(right, q)
        .slice(3, 6)
        .map((f) => f.position[2]),
    );
  assert.ok(forearm(target) < -0.05, `the target pose would take a link axis to z = ${forearm(target).toFixed(3)} m`);
  const start = [...HOME_START_POSITION];
  const { scene, rig } = await rigAt(DEFAULT_SIM_CALIBRATION, start);
  try {
    const goal = Float64Array.from(start);
    goal.set(target, 7);
    // Ramp there over 2 s, as a policy would command it, then push for 1 s.
    await track(rig, 3, (tS) => Float64Array.from(start, (v, k) => v + (goal[k] - v) * Math.min(1, tS / 2)));
    const q = Array.from(rig.read().position.subarray(7, 13));
    const reached = forearm(q);
    // Link frames sit on the capsules' axes: resting on the top, an axis stays about a radius up.
    assert.ok(reached > 0, `the lowest link axis is at z = ${reached.toFixed(3)} m`);
    assert.deepEqual(rig.read().faults, []);
  } finally {
    scene.free();
  }
});

test('the two arms collide with each other: both sent to one point, their hands stay apart', async () => {
  const model = yamRigModel();
  const point: [number, number, number] = [-0.2, 0, 0.2];
  const qs = model.arms.map((arm) => armReach(arm).solve({ position: point, approach: [0, 0, -1] }));
  assert.ok(qs[0] && qs[1], 'both arms reach the point');
  const start = [...HOME_START_POSITION];
  const { scene, rig } = await rigAt(DEFAULT_SIM_CALIBRATION, start);
  try {
    const goal = Float64Array.from(start);
    goal.set(qs[0], 0);
    goal.set(qs[1], 7);
    await track(rig, 3, (tS) => Float64Array.from(start, (v, k) => v + (goal[k] - v) * Math.min(1, tS / 2)));
    const [l, r] = scene.arms.map((a) => a.links[6].translation());
    const apart = Math.hypot(l.x - r.x, l.y - r.y, l.z - r.z);
    // Each palm is 6 × 12 cm: where the hands meet, their flanges cannot come within a few cm.
    assert.ok(apart > 0.04, `the flanges are ${(apart * 100).toFixed(1)} cm apart`);
    assert.deepEqual(rig.read().faults, []);
  } finally {
    scene.free();
  }
});
