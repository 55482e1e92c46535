/**
 * The two sim engines in one run: tandem's rollout loop (code policy, supervisor, task events,
 * scoring) on Rapier (the default record) and on MuJoCo 3 (`engine: 'mujoco'`, mujoco-js), beside
 * mujoco-js stepping the same exported scene alone (replaying the MuJoCo engine's applied commands,
 * and at rest) and Debian's native MuJoCo 2.2.2 `mujoco-testspeed` at rest when it is on PATH
 * (package libmujoco-samples). Then sweep throughput on 2 worker threads for both engines.
 *
 *   npm run bench -- sim-engines
 *
 * Sizes (env): SIM_ENGINES_SECONDS (episode seconds, default 20), SIM_ENGINES_SWEEP (rollouts per
 * engine in the sweep rows, default 6; 0 skips them). Per core = simulated seconds ÷ CPU seconds of
 * this process (testspeed: of its child), so a busy machine does not flatter a row.
 */
import os from 'node:os';
import { performance } from 'node:perf_hooks';
import { sampleLayoutSet } from '../src/layouts/layout-set.js';
import { getTask } from '../src/tasks/registry.js';
import type { Layout } from '../src/tasks/types.js';
import type { Policy } from '../src/policy/contract.js';
import { openPolicy } from '../src/rollout/policy-registry.js';
import { DEFAULT_SIM_CALIBRATION, withEngine, type SimCalibration } from '../src/sim/calibration.js';
import { runSimRollout } from '../src/sim/sim-rollout.js';
import { runSweep } from '../src/sim/sweep.js';
import type { Trajectory } from '../src/rollout/episode.js';
import { mjcfAtStep, mujocoJsRate, nativeMujocoMissing, nativeMujocoRate, type StepRate } from './mujoco-baseline.js';

const SECONDS = Number(process.env.SIM_ENGINES_SECONDS ?? 20);
const SWEEP = Number(process.env.SIM_ENGINES_SWEEP ?? 6);
const POLICY = 'code:bottles-in-the-bin';
const task = getTask('bottles-in-the-bin');
const RAPIER = DEFAULT_SIM_CALIBRATION;
const MUJOCO = withEngine(DEFAULT_SIM_CALIBRATION, 'mujoco');

interface Loop extends StepRate {
  readonly progress: number[];
  readonly trajectories: Trajectory[];
  readonly statuses: string[];
}

/**
 * Rollouts one after another on one policy, as a sweep worker runs them (it opens its policy once).
 * The policy should be warm: a code policy's worker thread costs ≈ 0.7 s of CPU on its first
 * episode (modules, JIT), which is the worker's start, not the loop's (docs/sim.md).
 */
async function loop(layouts: readonly Layout[], cal: SimCalibration, seconds: number, policy: Policy): Promise<Loop> {
  const c0 = process.cpuUsage();
  const w0 = performance.now();
  let steps = 0;
  const progress: number[] = [];
  const trajectories: Trajectory[] = [];
  const statuses: string[] = [];
  for (const layout of layouts) {
    // Placement noise off: the exported scene mujoco-js steps alone is the layout as written.
    const r = await runSimRollout({
      task,
      layout,
      policy,
      seed: 0,
      episodeSeconds: seconds,
      calibration: cal,
      placementNoise: false,
    });
    steps += r.physicsSteps;
    progress.push(r.episode.progress?.progress ?? NaN);
    trajectories.push(r.episode.trajectory);
    statuses.push(r.episode.status === 'valid' ? 'valid' : `${r.episode.status}: ${r.episode.reason ?? ''}`);
  }
  const c = process.cpuUsage(c0);
  return {
    simS: seconds * layouts.length,
    cpuS: (c.user + c.system) / 1e6,
    wallS: (performance.now() - w0) / 1000,
    steps,
    progress,
    trajectories,
    statuses,
  };
}

const rtf = (r: { simS: number; cpuS: number }): number => r.simS / r.cpuS;

function line(name: string, r: StepRate, extra = ''): string {
  return `${name.padEnd(58)} ${rtf(r).toFixed(2).padStart(7)}× per core  ${(r.simS / r.wallS).toFixed(2).padStart(7)}× wall  ${((r.cpuS * 1e6) / Math.max(r.steps, 1)).toFixed(0).padStart(5)} µs CPU/step  ${extra}`;
}

async function main(): Promise<void> {
  const tier5 = sampleLayoutSet({ task: task.id, tiers: [5], perTier: 2, seed: 2026 });
  const [l1, l5, l15] = os.loadavg();
  console.log(
    `tier-5 bottles scene (${tier5.layouts.map((l) => `${l.objects.length} bottles`).join(', ')}), ${POLICY}, ${SECONDS} s episodes, control 50 Hz, step ${RAPIER.physicsStepS * 1000} ms; load average ${l1.toFixed(1)} ${l5.toFixed(1)} ${l15.toFixed(1)}`,
  );
  // Warm both engines (WebAssembly compile, JIT tiers) and each row's policy worker before any row is timed.
  const [rapierPolicy, mujocoPolicy] = await Promise.all([
    openPolicy(POLICY, { cwd: process.cwd() }),
    openPolicy(POLICY, { cwd: process.cwd() }),
  ]);
  await loop(tier5.layouts.slice(0, 1), RAPIER, 2, rapierPolicy);
  await loop(tier5.layouts.slice(0, 1), MUJOCO, 2, mujocoPolicy);

  const rapier = await loop(tier5.layouts, RAPIER, SECONDS, rapierPolicy);
  const mujoco = await loop(tier5.layouts, MUJOCO, SECONDS, mujocoPolicy);
  await Promise.all([rapierPolicy.close?.(), mujocoPolicy.close?.()]);
  const step = RAPIER.physicsStepS;
  const scenes = await Promise.all(tier5.layouts.map((l) => mjcfAtStep(task, l, MUJOCO, step)));
  await mujocoJsRate(scenes, mujoco.trajectories, SECONDS, step);
  const alone = await mujocoJsRate(scenes, mujoco.trajectories, SECONDS, step);
  const rest = await mujocoJsRate(
    scenes,
    scenes.map(() => undefined),
    SECONDS,
    step,
  );
  const missing = nativeMujocoMissing();
  const native = missing ? undefined : nativeMujocoRate(scenes, SECONDS, step);
  const m = rtf(mujoco);
  const show = (p: number[], s: string[]): string =>
    `progress ${p.map((x) => x.toFixed(2)).join(' ')}${s.some((x) => x !== 'valid') ? `  ${s.join('; ')}` : ''}`;
  console.log(
    line(
      'Rapier engine, whole loop (default record)',
      rapier,
      `MuJoCo engine ${(m / rtf(rapier)).toFixed(2)}× this   ${show(rapier.progress, rapier.statuses)}`,
    ),
  );
  console.log(line('MuJoCo engine, whole loop (engine: mujoco)', mujoco, show(mujoco.progress, mujoco.statuses)));
  console.log(
    line(
      'mujoco-js stepping the scene alone, replaying its commands',
      alone,
      `MuJoCo engine ${(m / rtf(alone)).toFixed(2)}× this (loop overhead ${(100 * (1 - m / rtf(alone))).toFixed(0)}%)`,
    ),
  );
  console.log(
    line(
      'mujoco-js stepping the scene alone, arms holding home',
      rest,
      `MuJoCo engine ${(m / rtf(rest)).toFixed(2)}× this`,
    ),
  );
  if (native)
    console.log(
      line(
        `native MuJoCo ${native.version || '(Debian)'} testspeed, arms holding home`,
        native,
        `MuJoCo engine ${(m / rtf(native)).toFixed(2)}× this; mujoco-js at rest ${(rtf(rest) / rtf(native)).toFixed(2)}× this`,
      ),
    );
  else console.log(`native MuJoCo: skipped — ${missing}`);

  if (SWEEP > 0) {
    console.log('');
    const set = sampleLayoutSet({ task: task.id, tiers: [1, 2, 3], perTier: Math.ceil(SWEEP / 3), seed: 7 });
    const layouts = { ...set, layouts: set.layouts.slice(0, SWEEP) };
    for (const [name, cal] of [
      ['Rapier', RAPIER],
      ['MuJoCo', MUJOCO],
    ] as const) {
      const o = await runSweep({
        layoutSet: layouts,
        policySpec: POLICY,
        repeats: 1,
        workers: 2,
        seconds: SECONDS,
        cwd: process.cwd(),
        calibration: cal,
      });
      const perHour = (o.rollouts.length / (o.wallMs / 1000)) * 3600;
      const valid = o.rollouts.filter((r) => r.status === 'valid').length;
      console.log(
        `sweep on 2 workers, ${name}: ${o.rollouts.length} tier-1..3 rollouts of ${SECONDS} s (${valid} valid) in ${(o.wallMs / 1000).toFixed(1)} s = ${perHour.toFixed(0)} rollouts/hour, ${((o.rollouts.length * SECONDS) / (o.wallMs / 1000)).toFixed(1)}× real time`,
      );
    }
  }
}

await main();
