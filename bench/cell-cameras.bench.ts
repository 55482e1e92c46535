/**
 * The emulated cell's three cameras while its world keeps real time.
 *
 *   npm run bench -- cell-cameras
 *   CELL_CAMERAS_FPS=5,10,15 CELL_CAMERAS_HOLD_S=20 npm run bench -- cell-cameras
 *
 * The cell with a tier-5 bottles layout, held under the 250 Hz control loop through the real byte
 * protocol (as bench/cell.bench.ts's margin part), for CELL_CAMERAS_HOLD_S (default 15) per run:
 * - baseline (same run): no cameras — the world's real-time margin and this process's CPU;
 * - then cam_high and both wrist cameras at 224×224 streaming at each rate in CELL_CAMERAS_FPS
 *   (default 5,10): frames per second each camera delivered, dropped (ticks the renderer could
 *   not make in time), late and the longest gap, the world's margin beside them, and CPU — this
 *   process (world, control loop, camera ticker) and every chromium process, as a share of a core.
 * Each run is a fresh cell; the browser's start-up is before the measured window.
 * CELL_CAMERAS_NICENESS=0 runs the renderer at normal priority (the cameras' default is 19).
 */
import { readdirSync, readFileSync } from 'node:fs';
import { availableParallelism } from 'node:os';
import { monitorEventLoopDelay, performance } from 'node:perf_hooks';
import { sampleLayoutSet } from '../src/layouts/layout-set.js';
import { getTask } from '../src/tasks/registry.js';
import { RealtimeClock } from '../src/rig/clocks.js';
import { ControlLoop } from '../src/rig/control-loop.js';
import { createEmulatedCell } from '../src/emulated-cell/emulated-cell.js';
import { cellCameras } from '../src/emulated-cell/cell-cameras.js';
import type { ChromiumRenderer } from '../src/sim/render/chromium-renderer.js';
import { CAMERA_NAMES } from '../src/policy/contract.js';

const HOLD_S = Number(process.env.CELL_CAMERAS_HOLD_S ?? 15);
const RATES = (process.env.CELL_CAMERAS_FPS ?? '5,10').split(',').map(Number);
/** The renderer's niceness (the cameras' default 19; 0 to see what equal priority costs the world). */
const NICENESS =
  process.env.CELL_CAMERAS_NICENESS === undefined ? undefined : Number(process.env.CELL_CAMERAS_NICENESS);
const task = getTask('bottles-in-the-bin');
const layout = sampleLayoutSet({ task: task.id, tiers: [5], perTier: 1, seed: 5 }).layouts[0];

/** CPU time (ms) so far of the processes whose command line holds `marker` (chromium by its profile dir). */
function childCpuMs(marker: string | undefined): number {
  if (!marker) return 0;
  let ticks = 0;
  for (const pid of readdirSync('/proc').filter((p) => /^\d+$/.test(p))) {
    try {
      if (!readFileSync(`/proc/${pid}/cmdline`, 'utf8').includes(marker)) continue;
      const fields = readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1].split(' ');
      ticks += Number(fields[11]) + Number(fields[12]); // utime + stime
    } catch {
      // process ended meanwhile
    }
  }
  return ticks * 10; // USER_HZ is 100 on Linux
}

const ownCpuMs = (): number => {
  const u = process.cpuUsage();
  return (u.user + u.system) / 1000;
};

async function run(fps: number | undefined): Promise<void> {
  const clock = new RealtimeClock();
  const cell = await createEmulatedCell({ task, layout, gap: { kind: 'seed', seed: 1 }, clock, replyDeadlineMs: 350 });
  const cams = fps ? cellCameras(cell.world, { fps, nowS: () => clock.nowS(), rendererNiceness: NICENESS }) : undefined;
  try {
    if (cams) await Promise.all(CAMERA_NAMES.map((n) => cams.cameras[n].open()));
    await cell.rig.configure();
    await cell.rig.activate();
    const hold = { position: Float64Array.from(cell.rig.read().position) };
    const profile = cams ? await (cams.renderer as ChromiumRenderer).runningProfileDir() : undefined;
    const before = CAMERA_NAMES.map((n) => cams?.cameras[n].counters());
    const tick0 = cams?.timing().ticks ?? 0;
    const own0 = ownCpuMs();
    const chromium0 = childCpuMs(profile);
    const eld = monitorEventLoopDelay({ resolution: 1 });
    eld.enable();
    const t0 = performance.now();
    const stats = await new ControlLoop({ rig: cell.rig, clock, rateHz: 250, source: () => hold }).run({
      untilS: clock.nowS() + HOLD_S,
    });
    const wallMs = performance.now() - t0;
    eld.disable();
    const ownShare = (ownCpuMs() - own0) / wallMs;
    const chromiumMs = childCpuMs(profile) - chromium0;
    const chromiumShare = chromiumMs / wallMs;
    const ticks = (cams?.timing().ticks ?? 0) - tick0;
    const t = cell.world.timing();
    const faults = cell.rig.read().faults.length;
    console.log(
      fps
        ? `\nthree cameras at ${fps} fps each, 224×224 JPEG (renderer niceness ${NICENESS ?? 19}):`
        : `\nbaseline: no cameras`,
    );
    if (cams) {
      CAMERA_NAMES.forEach((n, i) => {
        const c = cams.cameras[n].counters();
        const b = before[i]!;
        const got = c.received - b.received;
        console.log(
          `  ${n.padEnd(16)} ${((got * 1000) / wallMs).toFixed(1).padStart(5)} fps delivered (${got} frames), dropped ${c.dropped - b.dropped}, late ${c.late - b.late}, longest gap ${(c.longestGapS * 1000).toFixed(0)} ms, ${cams.cameras[n].status}`,
        );
      });
      const tm = cams.timing();
      console.log(
        `  per tick (3 cameras): render ${tm.renderMsMean.toFixed(1)} ms wall, JPEG encode ${tm.encodeMsMean.toFixed(1)} ms wall; ${ticks} ticks`,
      );
    }
    console.log(
      `  world: ${(t.busyFraction * 100).toFixed(1)}% of a core stepping → ${t.marginX.toFixed(1)}× real-time margin; worst lag ${t.maxLagMs.toFixed(0)} ms, fell behind ${t.behindEvents}×; rig faults ${faults}`,
    );
    console.log(
      `  control loop ${stats.achievedHz.toFixed(1)} Hz, p99 jitter ${stats.jitterP99Ms.toFixed(2)} ms; event-loop delay p50 ${(eld.percentile(50) / 1e6).toFixed(1)} ms, p99 ${(eld.percentile(99) / 1e6).toFixed(1)} ms, max ${(eld.max / 1e6).toFixed(0)} ms`,
    );
    const total = ownShare + chromiumShare;
    console.log(
      `  CPU: this process ${(ownShare * 100).toFixed(0)}% of a core, chromium ${(chromiumShare * 100).toFixed(0)}%, total ${(total * 100).toFixed(0)}% of one core (${((total / availableParallelism()) * 100).toFixed(0)}% of the machine's ${availableParallelism()})` +
        (ticks > 0 ? `; ${(chromiumMs / ticks).toFixed(0)} chromium CPU-ms per three-camera tick drawn` : ''),
    );
    await cell.rig.deactivate();
  } finally {
    await cams?.close();
    await cell.close();
  }
}

console.log(
  `tier-5 bottles layout (${layout.objects.length} objects), each run held ${HOLD_S} s at 250 Hz through the byte protocol`,
);
console.log(
  `machine load before: ${readFileSync('/proc/loadavg', 'utf8').split(' ').slice(0, 3).join(' ')} on ${availableParallelism()} cores`,
);
await run(undefined);
for (const fps of RATES) await run(fps);
console.log(`\nmachine load after: ${readFileSync('/proc/loadavg', 'utf8').split(' ').slice(0, 3).join(' ')}`);
