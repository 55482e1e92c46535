/**
 * The recorder's soak: both arms' states at 250 Hz and three 640×480 MJPEG cameras at 30 fps
 * (ffmpeg testsrc2 through the real FfmpegCamera), recorded as back-to-back episodes.
 *
 *   npm run bench -- record                          10 min per condition (the default)
 *   RECORD_BENCH_SECONDS=60 npm run bench -- record  shorter
 *   RECORD_BENCH_EPISODE_S=15                        episode length (default 15 s, LeRobot's anchor)
 *   RECORD_BENCH_LOADED=0                            skip the loaded condition
 *
 * Per condition — idle, then both cores loaded by a `tandem sim sweep --workers 2`:
 * - baseline (same run, same cameras and 250 Hz loop, nothing recorded): this process's CPU;
 * - the soak: frames the cameras delivered vs frames in the files (dropped = the difference plus
 *   the cameras' own dropped counters), the recorder's CPU share (soak CPU − baseline CPU, of one
 *   core; ffmpeg's own CPU is the camera's and not counted), MB/s written, and each episode's close
 *   latency (close() called → file finished and synced) — the pause between two episodes.
 * Anchor (docs: ../shared/reference/policies-and-recording.md): LeRobot's recorder took 30–40 s per
 * 15 s episode before its streaming encoder, which drops ≈2% of frames by design.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { FfmpegCamera } from '../drivers/cameras/ffmpeg-camera.js';
import { EpisodeRecorder } from '../src/record/episode-recorder.js';
import { inspectEpisodeFile } from '../src/record/inspect.js';
import { RealtimeClock } from '../src/rig/clocks.js';
import { yamRigModel } from '../src/rig/yam.js';
import { sampleLayoutSet, serializeLayoutSet } from '../src/layouts/layout-set.js';
import type { RigState } from '../src/rig/contract.js';

const SOAK_S = Number(process.env.RECORD_BENCH_SECONDS ?? 600);
const EPISODE_S = Number(process.env.RECORD_BENCH_EPISODE_S ?? 15);
const BASELINE_S = Math.min(30, Math.max(5, SOAK_S / 4));
const LOADED = process.env.RECORD_BENCH_LOADED !== '0';
const ROOT = fileURLToPath(new URL('..', import.meta.url));
const CONTROL_HZ = 250;

function cpuS(): number {
  const u = process.cpuUsage();
  return (u.user + u.system) / 1e6;
}

async function openCameras(clock: RealtimeClock): Promise<FfmpegCamera[]> {
  const cams = ['cam_high', 'cam_left_wrist', 'cam_right_wrist'].map(
    (name) =>
      new FfmpegCamera({ name, kind: 'testsrc', width: 640, height: 480, fps: 30 }, { nowS: () => clock.nowS() }),
  );
  await Promise.all(cams.map((c) => c.open()));
  return cams;
}

/** The 250 Hz "control loop": a state every period, handed to `sink`, until `untilS`. */
async function statesLoop(clock: RealtimeClock, untilS: number, sink: (s: RigState) => void): Promise<number> {
  const z = new Float64Array(14);
  let n = 0;
  for (let t = clock.nowS(); t < untilS; t += 1 / CONTROL_HZ) {
    await clock.waitUntil(t);
    const position = z.map((_, k) => Math.sin(t + k));
    sink({ timeS: clock.nowS(), mode: 'active', position, velocity: z, effort: z, faults: [] });
    n += 1;
  }
  return n;
}

interface Soak {
  readonly condition: string;
  readonly episodes: number;
  readonly seconds: number;
  readonly framesDelivered: number;
  readonly framesRecorded: number;
  readonly cameraDropped: number;
  readonly recorderLost: number;
  readonly statesRecorded: number;
  readonly baselineCpuShare: number;
  readonly soakCpuShare: number;
  readonly mbPerS: number;
  readonly closeMs: number[];
  /** From one episode's close() call to the next episode recording: the pause between episodes. */
  readonly gapsMs: number[];
}

async function soak(condition: string, dir: string): Promise<Soak> {
  const clock = new RealtimeClock();
  const cams = await openCameras(clock);
  try {
    // Baseline: the same cameras and loop, nothing recorded.
    let c0 = cpuS();
    let t0 = clock.nowS();
    await statesLoop(clock, t0 + BASELINE_S, () => undefined);
    const baselineCpuShare = (cpuS() - c0) / (clock.nowS() - t0);
    const dropped0 = cams.reduce((n, c) => n + c.counters().dropped, 0);
    c0 = cpuS();
    t0 = clock.nowS();
    const end = t0 + SOAK_S;
    const closeMs: number[] = [];
    const files: string[] = [];
    let bytes = 0;
    let lost = 0;
    let states = 0;
    // Frames delivered while an episode records them (between episodes, nothing is recording).
    let framesDelivered = 0;
    const gapsMs: number[] = [];
    let closedAtMs: number | undefined;
    while (clock.nowS() < end - 0.5) {
      const file = join(dir, `${condition}-${files.length}.mcap`);
      files.push(file);
      const rec = await EpisodeRecorder.open({
        file,
        rigModel: yamRigModel(),
        cameras: cams.map((c) => c.info),
        metadata: { task: 'soak' },
        unixOffsetS: Date.now() / 1000 - clock.nowS(),
      });
      for (const c of cams) rec.attachCamera(c, () => clock.nowS());
      const counting = cams.map((c) => c.onFrame(() => (framesDelivered += 1)));
      if (closedAtMs !== undefined) gapsMs.push(performance.now() - closedAtMs);
      states += await statesLoop(clock, Math.min(end, clock.nowS() + EPISODE_S), (s) => rec.jointState(s));
      for (const stop of counting) stop();
      const closeCalledMs = performance.now();
      const summary = await rec.close({ outcome: 'completed' });
      closedAtMs = closeCalledMs;
      if (summary.status !== 'finished') throw new Error(summary.failure);
      closeMs.push(summary.closeMs);
      bytes += summary.bytes;
      lost += summary.lostMessages;
    }
    const seconds = clock.nowS() - t0;
    const soakCpuShare = (cpuS() - c0) / seconds;
    const cameraDropped = cams.reduce((n, c) => n + c.counters().dropped, 0) - dropped0;
    let framesRecorded = 0;
    for (const f of files) framesRecorded += (await inspectEpisodeFile(f)).cameras.reduce((n, c) => n + c.frames, 0);
    return {
      condition,
      episodes: files.length,
      seconds,
      framesDelivered,
      framesRecorded,
      cameraDropped,
      recorderLost: lost,
      statesRecorded: states,
      baselineCpuShare,
      soakCpuShare,
      mbPerS: bytes / 1048576 / seconds,
      closeMs,
      gapsMs,
    };
  } finally {
    await Promise.all(cams.map((c) => c.close()));
  }
}

/** Both cores busy: a sim sweep on two worker threads, restarted should it finish early. */
function loadBothCores(dir: string): { stop(): void } {
  const layouts = join(dir, 'load-layouts.json');
  writeFileSync(
    layouts,
    serializeLayoutSet(sampleLayoutSet({ task: 'bottles-in-the-bin', tiers: [5], perTier: 40, seed: 1 })),
  );
  let child: ChildProcess | undefined;
  let stopped = false;
  const start = (): void => {
    child = spawn(
      process.execPath,
      [
        join(ROOT, 'bin/tandem.js'),
        'sim',
        'sweep',
        '--layouts',
        layouts,
        '--policy',
        'code:bottles-in-the-bin',
        '--workers',
        '2',
        '--repeats',
        '10',
        '--data',
        join(dir, 'load-data'),
        '--json',
      ],
      { stdio: 'ignore' },
    );
    child.on('exit', () => {
      if (!stopped) start();
    });
  };
  start();
  return {
    stop() {
      stopped = true;
      child?.kill('SIGKILL');
    },
  };
}

function pct(sorted: number[], q: number): number {
  return sorted[Math.min(sorted.length - 1, Math.floor(q * sorted.length))];
}

function print(s: Soak): void {
  const dropped = s.framesDelivered - s.framesRecorded + s.cameraDropped;
  const expected = s.framesDelivered + s.cameraDropped;
  const close = [...s.closeMs].sort((a, b) => a - b);
  console.log(`\n${s.condition}: ${s.episodes} episodes of ${EPISODE_S} s, ${s.seconds.toFixed(0)} s in all`);
  console.log(`  joint states recorded   ${s.statesRecorded} (${(s.statesRecorded / s.seconds).toFixed(1)} Hz)`);
  console.log(
    `  camera frames           ${s.framesRecorded} recorded of ${s.framesDelivered} delivered while recording; camera-side drops ${s.cameraDropped}; recorder lost ${s.recorderLost}`,
  );
  console.log(
    `  dropped frames          ${dropped} (${((100 * dropped) / Math.max(1, expected)).toFixed(3)}%)   goal 0; LeRobot streaming encoder ≈2% by design`,
  );
  console.log(
    `  recorder CPU            ${(100 * (s.soakCpuShare - s.baselineCpuShare)).toFixed(1)}% of a core (process ${(100 * s.soakCpuShare).toFixed(1)}% recording, ${(100 * s.baselineCpuShare).toFixed(1)}% baseline, same cameras and loop)`,
  );
  console.log(`  written                 ${s.mbPerS.toFixed(2)} MB/s`);
  const gaps = [...s.gapsMs].sort((a, b) => a - b);
  if (gaps.length)
    console.log(
      `  between episodes        p50 ${pct(gaps, 0.5).toFixed(1)} ms, max ${gaps[gaps.length - 1].toFixed(1)} ms (close + open of the next file; frames then belong to no episode)`,
    );
  console.log(
    `  episode close           p50 ${pct(close, 0.5).toFixed(1)} ms, max ${close[close.length - 1].toFixed(1)} ms   goal < 1000 ms; LeRobot before streaming: 30–40 s per 15 s episode (×${(35_000 / Math.max(1, pct(close, 0.5))).toFixed(0)} slower)`,
  );
}

const dir = mkdtempSync(join(tmpdir(), 'tandem-record-bench-'));
try {
  console.log(
    `record soak: 250 Hz joint states + 3 × 640×480 MJPEG @ 30 fps (ffmpeg testsrc2), ${SOAK_S} s per condition, baseline ${BASELINE_S} s`,
  );
  print(await soak('idle', dir));
  if (LOADED) {
    const load = loadBothCores(dir);
    try {
      await new Promise((r) => setTimeout(r, 3000)); // the sweep's workers up
      print(await soak('both cores loaded by a sim sweep', dir));
    } finally {
      load.stop();
    }
  }
} finally {
  rmSync(dir, { recursive: true, force: true });
}
