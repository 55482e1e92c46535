/**
 * Emulated-cell benchmark.
 *
 *   npm run bench -- cell
 *
 * 1. Real-time margin: the cell with a tier-5 bottles layout held for CELL_BENCH_HOLD_S (default
 *    10) under the 250 Hz control loop through the real byte protocol. The world's stepping CPU
 *    time as a fraction of wall time, against the same-run baseline: the same world stepped
 *    free-running (as fast as it goes, no rig) — how many times real time this machine's core
 *    could run it at all.
 * 2. Sim vs cell: the code policy on CELL_BENCH_LAYOUTS tier-1 layouts (default 4, seed 17) for
 *    CELL_BENCH_SECONDS (default 30) each, in the sim twin and on the cell at --gap none and at
 *    --gap seed:1 (scored by the cell's scripted operator), same seeds (so the same placements):
 *    per-layout progress, how many layouts agree with the sim, and the mean.
 * 3. Graded policies: skill 1 and CELL_BENCH_LOW_SKILL (default 0.3) on the same layouts in the
 *    sim and on the cell (gap seed:1): do both rank them the same way?
 * CELL_BENCH_ONLY=margin|agree|grades runs one part. Parts 2–3 run in real time (minutes).
 */
import { performance } from 'node:perf_hooks';
import { sampleLayoutSet } from '../src/layouts/layout-set.js';
import { getTask } from '../src/tasks/registry.js';
import type { Layout } from '../src/tasks/types.js';
import { RealtimeClock } from '../src/rig/clocks.js';
import { ControlLoop } from '../src/rig/control-loop.js';
import { openPolicy } from '../src/rollout/policy-registry.js';
import { POLICY_WARM_UP } from '../src/sim/policy-warm-up.js';
import { runRigRollout } from '../src/rollout/rig-rollout.js';
import { runSimRollout } from '../src/sim/sim-rollout.js';
import { createEmulatedCell } from '../src/emulated-cell/emulated-cell.js';
import { createScene } from '../src/sim/scene.js';
import { newMotorCommand } from '../src/sim/arm/motor-command.js';
import { cellTruth, type CellGap } from '../src/emulated-cell/cell-truth.js';
import { yamRigModel } from '../src/rig/yam.js';

const ONLY = process.env.CELL_BENCH_ONLY;
const HOLD_S = Number(process.env.CELL_BENCH_HOLD_S ?? 10);
const N_LAYOUTS = Number(process.env.CELL_BENCH_LAYOUTS ?? 4);
const SECONDS = Number(process.env.CELL_BENCH_SECONDS ?? 30);
const LOW_SKILL = Number(process.env.CELL_BENCH_LOW_SKILL ?? 0.3);
const task = getTask('bottles-in-the-bin');

async function margin(): Promise<void> {
  const layout = sampleLayoutSet({ task: task.id, tiers: [5], perTier: 1, seed: 5 }).layouts[0];
  // Baseline: the same world (the cell truth's physics, the same layout), stepped free-running.
  const physics = cellTruth({ kind: 'seed', seed: 1 }).truth.physics;
  const free = await createScene({ rigModel: yamRigModel(), task, layout, calibration: physics });
  const cmds = [newMotorCommand(), newMotorCommand()];
  for (let i = 0; i < 250; i++) free.step(cmds); // warm up (JIT), as the cell's settling second does
  const steps = 1000;
  const t0 = performance.now();
  for (let i = 0; i < steps; i++) free.step(cmds);
  const freeRtf = (steps * physics.physicsStepS) / ((performance.now() - t0) / 1000);
  free.free();
  const clock = new RealtimeClock();
  const cell = await createEmulatedCell({ task, layout, gap: { kind: 'seed', seed: 1 }, clock, replyDeadlineMs: 350 });
  await cell.rig.configure();
  await cell.rig.activate();
  const hold = { position: Float64Array.from(cell.rig.read().position) };
  const stats = await new ControlLoop({ rig: cell.rig, clock, rateHz: 250, source: () => hold }).run({
    untilS: clock.nowS() + HOLD_S,
  });
  const t = cell.world.timing();
  await cell.rig.deactivate();
  await cell.close();
  console.log(
    `tier-5 layout (${layout.objects.length} objects), ${HOLD_S} s held at 250 Hz through the byte protocol:`,
  );
  console.log(`  baseline: the world free-running           ${freeRtf.toFixed(1)}× real time on one core`);
  console.log(
    `  the cell on the wall clock                  world ${(t.busyFraction * 100).toFixed(1)}% of a core → ${t.marginX.toFixed(1)}× real-time margin (${(t.marginX / freeRtf).toFixed(2)} of the free-running rate)`,
  );
  console.log(
    `  loop ${stats.achievedHz.toFixed(1)} Hz, p99 jitter ${stats.jitterP99Ms.toFixed(2)} ms; worst world lag ${t.maxLagMs.toFixed(0)} ms, fell behind ${t.behindEvents}×; faults: ${cell.rig.read().faults.length}`,
  );
}

interface Run {
  readonly progress: number;
  readonly note: string;
  /** Measured joint positions (arm joints only), 14 per step. */
  readonly trajectory: Float32Array;
  readonly steps: number;
}

async function simRun(layout: Layout, spec: string, seed: number): Promise<Run> {
  const policy = await openPolicy(spec, { cwd: process.cwd() });
  try {
    const r = await runSimRollout({ task, layout, policy, seed, episodeSeconds: SECONDS });
    const e = r.episode;
    return {
      progress: e.status === 'valid' ? (e.progress?.progress ?? NaN) : NaN,
      note: '',
      trajectory: e.trajectory.position,
      steps: e.trajectory.steps,
    };
  } finally {
    await policy.close?.();
  }
}

const simProgress = async (layout: Layout, spec: string, seed: number): Promise<number> =>
  (await simRun(layout, spec, seed)).progress;

/** RMS difference of the arm joints' measured trajectories (the grippers left out), rad, over the steps both ran. */
function trajectoryRms(a: Run, b: Run): number {
  const n = Math.min(a.steps, b.steps);
  let sum = 0;
  let count = 0;
  for (let i = 0; i < n; i++) {
    for (let k = 0; k < 14; k++) {
      if (k % 7 === 6) continue;
      const d = a.trajectory[i * 14 + k] - b.trajectory[i * 14 + k];
      sum += d * d;
      count++;
    }
  }
  return count ? Math.sqrt(sum / count) : NaN;
}

async function cellRun(layout: Layout, spec: string, seed: number, gap: CellGap): Promise<Run> {
  const clock = new RealtimeClock();
  const cell = await createEmulatedCell({ task, layout, gap, clock, placementSeed: seed, replyDeadlineMs: 350 });
  // As `tandem rig rollout` opens it: warmed up, so its first plans stay inside the 100 ms watchdog.
  const policy = await openPolicy(spec, { cwd: process.cwd(), warmUp: POLICY_WARM_UP });
  try {
    const r = await runRigRollout({
      rig: cell.rig,
      policy,
      task,
      layout,
      episodeSeconds: SECONDS,
      controlHz: 50,
      seed,
      deadlineMs: 1500,
      clock,
      privileged: () => cell.world.privilegedState(),
      lookAtTable: cell.world,
    });
    const t = { trajectory: r.episode.trajectory.position, steps: r.episode.trajectory.steps };
    if (!r.tableEndStates)
      return { progress: NaN, note: `${r.episode.status}: ${r.episode.reason ?? ''}`.slice(0, 90), ...t };
    return { progress: task.scoreProgress(layout, r.tableEndStates).progress, note: '', ...t };
  } finally {
    await policy.close?.();
    await cell.close();
  }
}

const layouts = (): readonly Layout[] =>
  sampleLayoutSet({ task: task.id, tiers: [1], perTier: N_LAYOUTS, seed: 17 }).layouts;
const mean = (xs: number[]): number =>
  xs.filter(Number.isFinite).reduce((a, b) => a + b, 0) / Math.max(1, xs.filter(Number.isFinite).length);

async function agree(): Promise<void> {
  const spec = 'code:bottles-in-the-bin';
  console.log(
    `\n${spec}, ${N_LAYOUTS} tier-1 layouts (seed 17), ${SECONDS} s each; rollout seed = layout index (same placement in sim and cell)`,
  );
  const rows: { sim: number; none: number; gap: number; rmsNone: number; rmsGap: number }[] = [];
  for (const [i, layout] of layouts().entries()) {
    const sim = await simRun(layout, spec, i);
    const none = await cellRun(layout, spec, i, { kind: 'none' });
    const gap = await cellRun(layout, spec, i, { kind: 'seed', seed: 1 });
    const row = {
      sim: sim.progress,
      none: none.progress,
      gap: gap.progress,
      rmsNone: trajectoryRms(sim, none),
      rmsGap: trajectoryRms(sim, gap),
    };
    rows.push(row);
    console.log(
      `  layout ${i}: progress sim ${row.sim.toFixed(2)}, cell gap none ${row.none.toFixed(2)} ${none.note}, gap seed:1 ${row.gap.toFixed(2)} ${gap.note}; ` +
        `joint trajectory vs sim (rms) none ${(row.rmsNone * 1000).toFixed(0)} mrad, seed:1 ${(row.rmsGap * 1000).toFixed(0)} mrad`,
    );
  }
  const same = (k: 'none' | 'gap'): number => rows.filter((r) => r[k] === r.sim).length;
  console.log(
    `  agree with the sim: gap none ${same('none')}/${rows.length}, gap seed:1 ${same('gap')}/${rows.length}; means sim ${mean(rows.map((r) => r.sim)).toFixed(2)}, none ${mean(rows.map((r) => r.none)).toFixed(2)}, seed:1 ${mean(rows.map((r) => r.gap)).toFixed(2)}`,
  );
  console.log(
    `  joint trajectories vs sim, mean rms: gap none ${(mean(rows.map((r) => r.rmsNone)) * 1000).toFixed(0)} mrad, gap seed:1 ${(mean(rows.map((r) => r.rmsGap)) * 1000).toFixed(0)} mrad`,
  );
}

async function grades(): Promise<void> {
  const specs = ['code:bottles-in-the-bin', `code:bottles-in-the-bin?skill=${LOW_SKILL}`];
  console.log(`\ngraded policies on ${N_LAYOUTS} tier-1 layouts, ${SECONDS} s: sim vs cell (gap seed:1)`);
  const means: Record<string, { sim: number; cell: number }> = {};
  for (const spec of specs) {
    const sim: number[] = [];
    const cell: number[] = [];
    for (const [i, layout] of layouts().entries()) {
      sim.push(await simProgress(layout, spec, 100 + i));
      cell.push((await cellRun(layout, spec, 100 + i, { kind: 'seed', seed: 1 })).progress);
    }
    means[spec] = { sim: mean(sim), cell: mean(cell) };
    console.log(`  ${spec.padEnd(36)} sim ${means[spec].sim.toFixed(2)}  cell ${means[spec].cell.toFixed(2)}`);
  }
  const [a, b] = specs.map((s) => means[s]);
  console.log(
    `  same ranking in sim and on the cell: ${Math.sign(a.sim - b.sim) === Math.sign(a.cell - b.cell) ? 'yes' : 'no'}`,
  );
}

if (!ONLY || ONLY === 'margin') await margin();
if (!ONLY || ONLY === 'agree') await agree();
if (!ONLY || ONLY === 'grades') await grades();
