/**
 * System identification speed: `fitSysid` on ten 20 s takes (the issue's budget: under 5 minutes
 * on this 2-core machine), beside the same run's baseline — one replay of every take on one thread,
 * the unit of work a fit repeats. The takes are recorded on the sim twin with the emulated cell's
 * seed-3 physics (its truth, the gripper's rotor mass, its motors' torque constants and latency),
 * so the fit has the cell's gap to find without a real-time recording in the bench.
 *
 *   npm run bench -- sysid     (SYSID_BENCH_EPISODES=10, SYSID_BENCH_SECONDS=20 by default)
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { loadavg, availableParallelism, tmpdir } from 'node:os';
import { join } from 'node:path';
import { yamRigModel } from '../src/rig/yam.js';
import { DEFAULT_SIM_CALIBRATION } from '../src/sim/calibration.js';
import { cellTruth } from '../src/emulated-cell/cell-truth.js';
import { readEpisodeTrajectory } from '../calibration/sysid/episode-trajectory.js';
import { replayEpisode } from '../calibration/sysid/replay.js';
import { fitSysid } from '../calibration/sysid/fit.js';
import { mrad } from '../calibration/sysid/residuals.js';
import { recordSimTake } from '../test/calibration/sysid/sim-take.js';

const EPISODES = Number(process.env.SYSID_BENCH_EPISODES ?? 10);
const SECONDS = Number(process.env.SYSID_BENCH_SECONDS ?? 20);
const model = yamRigModel();
const t = cellTruth({ kind: 'seed', seed: 3 }).truth;
const robot = { ...t.physics, motorTorqueScale: t.motorTorqueScale, commandLatencyS: t.replyLatencyMs / 1000 };
const dir = mkdtempSync(join(tmpdir(), 'tandem-sysid-bench-'));
try {
  const files: string[] = [];
  for (let k = 0; k < EPISODES; k++) {
    const file = join(dir, `take-${String(k).padStart(2, '0')}.mcap`);
    await recordSimTake({ file, calibration: robot, seconds: SECONDS, seed: 100 + k });
    files.push(file);
  }
  const load0 = loadavg()[0];
  // Baseline: every take replayed once, in this thread.
  let w = performance.now();
  for (const f of files) await replayEpisode(await readEpisodeTrajectory(f, model), model, DEFAULT_SIM_CALIBRATION);
  const replayS = (performance.now() - w) / 1000;
  w = performance.now();
  const r = await fitSysid({
    files,
    model,
    from: DEFAULT_SIM_CALIBRATION,
    holdout: Math.max(1, Math.floor(EPISODES / 5)),
  });
  const fitS = (performance.now() - w) / 1000;
  console.log(
    `replay baseline: ${EPISODES} × ${SECONDS} s takes replayed once on one thread in ${replayS.toFixed(1)} s (${((EPISODES * SECONDS) / replayS).toFixed(1)}× real time)`,
  );
  console.log(
    `sysid fit: ${fitS.toFixed(1)} s on ${availableParallelism()} worker threads (goal < 300 s) — ${(fitS / replayS).toFixed(1)}× the baseline; ${r.iterations} iterations, ${r.evaluations} evaluations of ${r.episodes.filter((e) => e.role === 'fit').length} × 6 s windows; stopped: ${r.stopped}`,
  );
  console.log(
    `held-out RMS ${mrad(r.heldOut.beforeAll)} → ${mrad(r.heldOut.afterAll)}; identified ${r.parameters.filter((p) => p.identified).length} of ${r.parameters.length} parameters; reflected mass ${r.parameters.find((p) => p.name === 'fingerReflectedMassKg')!.fitted.toFixed(3)} kg (truth ${t.physics.fingerReflectedMassKg})`,
  );
  console.log(`load average ${load0.toFixed(2)} at the start, ${loadavg()[0].toFixed(2)} at the end`);
} finally {
  rmSync(dir, { recursive: true, force: true });
}
process.exit(0);
