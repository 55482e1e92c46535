/**
 * Sim benchmark: real-time factor of the tier-5 bottles scene with the code policy, per core,
 * without and with cameras; sweep throughput at 1 and 2 workers; a same-run naive configuration
 * and one row per optimisation so each shows what it buys; and the check that the coarse physics
 * step's *policy-level* outcome (task progress) matches a fine reference step on ≥ 95% of layouts.
 *
 *   npm run bench -- sim
 *
 * Sizes (env): SIM_BENCH_SECONDS (episode seconds for the RTF rows, default 20),
 * SIM_BENCH_AGREE_LAYOUTS (layouts in the agreement check, default 10),
 * SIM_BENCH_AGREE_SECONDS (default 30), SIM_BENCH_CAMERAS=0 to skip the camera row,
 * SIM_BENCH_ONLY=agree for the agreement check alone.
 *
 * "Per core" = simulated seconds ÷ CPU seconds this process used (process.cpuUsage), which does
 * not flatter a run on a machine whose other cores are busy; wall-clock factors are printed too.
 */
import { performance } from 'node:perf_hooks';
import { sampleLayoutSet, type LayoutSet } from '../src/layouts/layout-set.js';
import { getTask } from '../src/tasks/registry.js';
import type { Layout } from '../src/tasks/types.js';
import { openPolicy } from '../src/rollout/policy-registry.js';
import type { Policy } from '../src/policy/contract.js';
import { CAMERA_NAMES } from '../src/policy/contract.js';
import { DEFAULT_SIM_CALIBRATION, withCalibration, type SimCalibration } from '../src/sim/calibration.js';
import { runSimRollout } from '../src/sim/sim-rollout.js';
import { runSweep } from '../src/sim/sweep.js';
import type { Renderer } from '../src/sim/render/renderer.js';

const SECONDS = Number(process.env.SIM_BENCH_SECONDS ?? 20);
const AGREE_LAYOUTS = Number(process.env.SIM_BENCH_AGREE_LAYOUTS ?? 10);
const AGREE_SECONDS = Number(process.env.SIM_BENCH_AGREE_SECONDS ?? 30);
const WITH_CAMERAS = process.env.SIM_BENCH_CAMERAS !== '0';
/** SIM_BENCH_ONLY=agree runs only the coarse-vs-fine agreement check. */
const ONLY_AGREE = process.env.SIM_BENCH_ONLY === 'agree';
const POLICY = 'code:bottles-in-the-bin';
const task = getTask('bottles-in-the-bin');
const COARSE: [string, SimCalibration][] = [
  ['+ 2 ms step × 2 substeps', withCalibration(DEFAULT_SIM_CALIBRATION, { solverIterations: 2 })],
  ['+ 4 ms step × 2 substeps', withCalibration(DEFAULT_SIM_CALIBRATION, { physicsStepS: 1 / 250, solverIterations: 2 })],
];

interface Measured {
  readonly simS: number;
  readonly cpuS: number;
  readonly wallS: number;
  readonly steps: number;
  readonly progress: number[];
  readonly statuses: string[];
}

async function measure(layouts: readonly Layout[], cal: SimCalibration, seconds: number, policyFor: () => Promise<Policy>, renderer?: Renderer): Promise<Measured> {
  const c0 = process.cpuUsage();
  const w0 = performance.now();
  let steps = 0;
  const progress: number[] = [];
  const statuses: string[] = [];
  for (const layout of layouts) {
    const policy = await policyFor();
    const r = await runSimRollout({ task, layout, policy, seed: 0, episodeSeconds: seconds, calibration: cal, renderer });
    steps += r.physicsSteps;
    progress.push(r.episode.progress?.progress ?? NaN);
    statuses.push(r.episode.status === 'valid' ? 'valid' : `${r.episode.status}: ${r.episode.reason ?? ''}`);
  }
  const c = process.cpuUsage(c0);
  return { simS: seconds * layouts.length, cpuS: (c.user + c.system) / 1e6, wallS: (performance.now() - w0) / 1000, steps, progress, statuses };
}

function row(name: string, m: Measured, baseline?: Measured): string {
  const perCore = m.simS / m.cpuS;
  const wall = m.simS / m.wallS;
  const usPerStep = (m.cpuS * 1e6) / Math.max(m.steps, 1);
  const ratio = baseline ? `  ${(perCore / (baseline.simS / baseline.cpuS)).toFixed(2)}× naive` : '';
  return `${name.padEnd(44)} ${perCore.toFixed(2).padStart(7)}× per core  ${wall.toFixed(2).padStart(7)}× wall  ${usPerStep.toFixed(0).padStart(5)} µs CPU/physics step${ratio}`;
}

const codePolicy = (): Promise<Policy> => openPolicy(POLICY, { cwd: process.cwd() });

/** The code policy, declaring the three cameras so every observation is rendered (what a VLA costs). */
async function codePolicyWithCameras(): Promise<Policy> {
  const p = await codePolicy();
  return { info: { ...p.info, cameras: CAMERA_NAMES }, reset: (ctx) => p.reset(ctx), infer: (obs) => p.infer(obs) };
}

async function main(): Promise<void> {
  const tier5: LayoutSet = sampleLayoutSet({ task: task.id, tiers: [5], perTier: 2, seed: 2026 });
  console.log(`tier-5 bottles scene (${tier5.layouts.map((l) => `${l.objects.length} bottles`).join(', ')}), ${POLICY}, ${SECONDS} s episodes, control 50 Hz`);
  console.log(`default calibration: physics step ${(DEFAULT_SIM_CALIBRATION.physicsStepS * 1000).toFixed(1)} ms, ${DEFAULT_SIM_CALIBRATION.solverIterations} solver iterations, sleeping ${DEFAULT_SIM_CALIBRATION.allowSleep}\n`);

  if (!ONLY_AGREE) await speedRows(tier5);
  await agreement();
}

async function speedRows(tier5: LayoutSet): Promise<void> {
  // Warm the WebAssembly tiers and the JIT so the first row is not charged for them.
  await measure(tier5.layouts.slice(0, 1), DEFAULT_SIM_CALIBRATION, 2, codePolicy);

  // Rapier's solver substeps each step numSolverIterations times, so cost and accuracy follow the
  // substep (step ÷ iterations), not the step alone.
  const naiveCal = withCalibration(DEFAULT_SIM_CALIBRATION, { physicsStepS: 1 / 1000, allowSleep: false });
  const configs: [string, SimCalibration][] = [
    ['naive: 1 ms step × 4 substeps, no sleeping', naiveCal],
    ['+ sleeping bodies', withCalibration(naiveCal, { allowSleep: true })],
    ['+ 2 ms step × 4 (default calibration)', DEFAULT_SIM_CALIBRATION],
    ...COARSE,
  ];
  let naive: Measured | undefined;
  for (const [name, cal] of configs) {
    const m = await measure(tier5.layouts, cal, SECONDS, codePolicy);
    naive ??= m;
    console.log(row(name, m, naive === m ? undefined : naive));
  }

  if (WITH_CAMERAS) {
    let renderer: Renderer | undefined;
    try {
      const { ChromiumRenderer } = await import('../src/sim/render/chromium-renderer.js');
      renderer = new ChromiumRenderer();
      const camSeconds = Math.min(SECONDS, 6);
      const m = await measure(tier5.layouts.slice(0, 1), DEFAULT_SIM_CALIBRATION, camSeconds, codePolicyWithCameras, renderer);
      console.log(row(`with 3 cameras at 224² (5 Hz obs, ${camSeconds} s)`, m, naive));
      console.log('  (per-core factor counts only this process; chromium renders in its own processes — the wall factor is the honest one)');
    } catch (e) {
      console.log(`with cameras: skipped — ${(e as Error).message}`);
    } finally {
      await renderer?.close();
    }
  }

  // Sweep throughput: the same rollouts on 1 and 2 worker threads.
  console.log('');
  const sweepSet = sampleLayoutSet({ task: task.id, tiers: [5], perTier: 4, seed: 7 });
  const sweepSeconds = Math.min(SECONDS, 10);
  let oneWorker = 0;
  for (const workers of [1, 2]) {
    const o = await runSweep({ layoutSet: sweepSet, policySpec: POLICY, repeats: 1, workers, seconds: sweepSeconds, cwd: process.cwd() });
    const rate = o.rollouts.length / (o.wallMs / 1000);
    oneWorker ||= rate;
    console.log(
      `sweep, ${workers} worker${workers === 1 ? ' ' : 's'}: ${o.rollouts.length} rollouts of ${sweepSeconds} s in ${(o.wallMs / 1000).toFixed(1)} s = ${rate.toFixed(3)} rollouts/s, ${((o.rollouts.length * sweepSeconds) / (o.wallMs / 1000)).toFixed(2)}× real time  (${(rate / oneWorker).toFixed(2)}× one worker)`,
    );
  }

}

/** Policy-level agreement: each coarse setting vs a fine reference step on the same layouts. */
async function agreement(): Promise<void> {
  console.log('');
  const agreeSet = sampleLayoutSet({ task: task.id, tiers: [1, 2, 3], perTier: Math.ceil(AGREE_LAYOUTS / 3), seed: 99 });
  const layouts = agreeSet.layouts.slice(0, AGREE_LAYOUTS);
  const fineCal = withCalibration(DEFAULT_SIM_CALIBRATION, { physicsStepS: 1 / 1000, solverIterations: 8 });
  const fine = await measure(layouts, fineCal, AGREE_SECONDS, codePolicy);
  // SIM_BENCH_AGREE_DEFAULT_ONLY=1 checks only the default calibration against the reference.
  const candidates = process.env.SIM_BENCH_AGREE_DEFAULT_ONLY === '1' ? [] : COARSE;
  for (const [name, cal] of [['default 2 ms × 4', DEFAULT_SIM_CALIBRATION] as [string, SimCalibration], ...candidates]) {
    const coarse = await measure(layouts, cal, AGREE_SECONDS, codePolicy);
    let agree = 0;
    coarse.progress.forEach((p, i) => {
      if (p === fine.progress[i] || (Number.isNaN(p) && Number.isNaN(fine.progress[i]))) agree += 1;
    });
    const share = agree / layouts.length;
    console.log(
      `agreement ${name} vs 1 ms × 8 reference on ${layouts.length} tier-1..3 layouts (${AGREE_SECONDS} s): ${agree}/${layouts.length} = ${(100 * share).toFixed(0)}% same task progress ${share >= 0.95 ? '(≥ 95%: OK)' : '(< 95%: NOT OK)'}`,
    );
    console.log(`  coarse progress ${coarse.progress.map((p) => p.toFixed(2)).join(' ')}`);
    console.log(`  fine   progress ${fine.progress.map((p) => p.toFixed(2)).join(' ')}`);
    const bad = [...coarse.statuses, ...fine.statuses].filter((s) => s !== 'valid');
    if (bad.length > 0) console.log(`  not valid: ${[...new Set(bad)].join('; ')}`);
  }
}

await main();
