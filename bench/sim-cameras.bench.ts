/**
 * Sim camera benchmark (npm run bench -- sim-cameras).
 * Frame time of the headless-chromium renderer (three.js on SwiftShader), a tier-5-sized bottles
 * scene with both arms moving every frame:
 *   - baseline: one camera (cam_high) per request, steady state;
 *   - three cameras in one request (what a VLA observation costs), and as three requests;
 *   - the first frame of a fresh renderer (browser start + page bundle), i.e. what a camera-less
 *     policy never pays;
 *   - the same three cameras with 4× MSAA;
 *   - the Node-side share: snapshot → page frame geometry, no browser.
 * Set SIM_CAMERAS_PNG_DIR=DIR to also write the three images of the last frame as PNGs to look at.
 */
import { mkdirSync, readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { availableParallelism } from 'node:os';
import sharp from 'sharp';
import { ChromiumRenderer } from '../src/sim/render/chromium-renderer.js';
import { snapshotBodies, snapshotCameras } from '../src/sim/render/scene-frame.js';
import { rigSnapshotGrippers, rigSnapshotLinks, type SceneSnapshot } from '../src/sim/render/scene-snapshot.js';
import { CAMERA_NAMES, type CameraName } from '../src/policy/contract.js';
import { yamRigModel } from '../src/rig/yam.js';
import { BIN, BOTTLE } from '../src/tasks/catalogue.js';
import { objectPose3 } from '../src/tasks/footprint.js';
import { DEFAULT_CAMERA_CALIBRATION } from '../src/sim/render/camera-calibration.js';

const FRAMES = Number(process.env.BENCH_FRAMES ?? 20);
const pngDir = process.env.SIM_CAMERAS_PNG_DIR;
const model = yamRigModel();
const task = { id: 'bottles-in-the-bin' as const, objectKinds: [BOTTLE], fixtureKinds: [BIN] };
const median = (xs: number[]): number => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];

/** Frame i of a scene where both arms sweep and eight bottles stand or lie around the bin. */
function snapshot(i: number): SceneSnapshot {
  const q = new Float64Array(14);
  const arm = [0.3 * Math.sin(i / 7), 1.0 + 0.2 * Math.sin(i / 5), 0.9, -0.5, 0.2 * Math.sin(i / 3), 0, 0.5 + 0.4 * Math.sin(i / 4)];
  for (let j = 0; j < 7; j++) {
    q[j] = arm[j];
    q[7 + j] = j === 0 ? -arm[j] : arm[j];
  }
  const spots: [number, number, number, 'upright' | 'lying'][] = [
    [-0.05, 0.3, 0, 'upright'],
    [0.1, 0.15, 1, 'lying'],
    [0.05, -0.05, 0, 'upright'],
    [-0.1, -0.25, 2, 'lying'],
    [0.15, -0.3, 0, 'upright'],
    [-0.15, 0.05, 0.5, 'lying'],
    [0.2, 0.35, 0, 'upright'],
    [0.0, 0.45, 0, 'upright'],
  ];
  return {
    task,
    links: rigSnapshotLinks(model, q),
    grippers: rigSnapshotGrippers(model, q),
    objects: spots.map(([x, y, yawRad, posture], k) => ({ id: `bottle-${k + 1}`, kind: BOTTLE.id, pose: objectPose3(BOTTLE, posture, { x, y, yawRad }) })),
    fixtures: [{ id: 'bin', kind: BIN.id, pose: { position: [0.32, -0.05, 0], quaternion: [0, 0, 0, 1] } }],
  };
}

/** CPU time (ms) used so far by the browser's processes (found by its unique profile dir) and by this process. */
function cpuMs(profileDir: string | undefined): number {
  let ticks = 0;
  if (profileDir) {
    for (const pid of readdirSync('/proc').filter((p) => /^\d+$/.test(p))) {
      try {
        if (!readFileSync(`/proc/${pid}/cmdline`, 'utf8').includes(profileDir)) continue;
        const fields = readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1].split(' ');
        ticks += Number(fields[11]) + Number(fields[12]); // utime + stime
      } catch {
        // process ended meanwhile
      }
    }
  }
  const own = process.cpuUsage();
  return ticks * 10 + (own.user + own.system) / 1000; // USER_HZ is 100 on Linux
}

/** Median wall time per frame, and CPU time per frame (browser + this process) — the latter barely moves with machine load. */
async function frames(r: ChromiumRenderer, cams: readonly CameraName[], separate: boolean): Promise<{ wallMs: number; cpuMs: number }> {
  const times: number[] = [];
  const dir = await r.runningProfileDir();
  const cpu0 = cpuMs(dir);
  for (let i = 0; i < FRAMES; i++) {
    const s = snapshot(i);
    const t0 = performance.now();
    if (separate) for (const c of cams) await r.render(s, [c]);
    else await r.render(s, cams);
    times.push(performance.now() - t0);
  }
  return { wallMs: median(times), cpuMs: (cpuMs(dir) - cpu0) / FRAMES };
}

async function main(): Promise<void> {
  console.log(`sim cameras: 224×224 RGB, SwiftShader WebGL in /usr/bin/chromium; median of ${FRAMES} frames, the scene changes every frame`);
  const prep: number[] = [];
  for (let i = 0; i < 200; i++) {
    const s = snapshot(i);
    const t0 = performance.now();
    snapshotBodies(s);
    snapshotCameras(s, DEFAULT_CAMERA_CALIBRATION, CAMERA_NAMES);
    prep.push(performance.now() - t0);
  }

  const r = new ChromiumRenderer();
  let t0 = performance.now();
  const first = await r.render(snapshot(0), CAMERA_NAMES);
  const coldMs = performance.now() - t0;
  await frames(r, CAMERA_NAMES, false); // warm-up: shader compiles, JIT
  const one = await frames(r, ['cam_high'], false);
  const three = await frames(r, CAMERA_NAMES, false);
  const threeSeparate = await frames(r, CAMERA_NAMES, true);
  t0 = performance.now();
  const last = await r.render(snapshot(FRAMES), CAMERA_NAMES);
  void (performance.now() - t0);
  await r.close();

  const aa = new ChromiumRenderer({ antialias: true });
  await aa.render(snapshot(0), CAMERA_NAMES);
  await frames(aa, CAMERA_NAMES, false);
  const threeAa = await frames(aa, CAMERA_NAMES, false);
  await aa.close();

  const row = (label: string, m: { wallMs: number; cpuMs?: number }): void => {
    const cpu = m.cpuMs === undefined ? ''.padStart(30) : `${m.cpuMs.toFixed(1).padStart(8)} CPU-ms/frame ${(m.cpuMs / one.cpuMs).toFixed(2).padStart(5)}×`;
    console.log(`${label.padEnd(50)} ${m.wallMs.toFixed(1).padStart(8)} ms/frame ${(m.wallMs / one.wallMs).toFixed(2).padStart(6)}× ${(1000 / m.wallMs).toFixed(1).padStart(7)} frames/s ${cpu}`);
  };
  console.log(`\n${''.padEnd(50)} ${'wall (median)'.padStart(17)} ${'vs baseline'.padStart(6)} ${''.padStart(15)} ${'CPU, all chromium processes + node'.padStart(30)}`);
  row('baseline: cam_high only, one request', one);
  row('3 cameras, one request (a VLA observation)', three);
  row('3 cameras, three requests', threeSeparate);
  row('3 cameras, one request, 4× MSAA', threeAa);
  row('first frame of a fresh renderer (browser start)', { wallMs: coldMs });
  row('Node-side geometry only (snapshot → page frame)', { wallMs: median(prep) });
  console.log(`\nper camera in a batch: ${(three.wallMs / 3).toFixed(1)} ms wall, ${(three.cpuMs / 3).toFixed(1)} CPU-ms; batching saves ${(threeSeparate.wallMs - three.wallMs).toFixed(1)} ms per observation`);
  console.log(`machine load while measuring: ${readFileSync('/proc/loadavg', 'utf8').split(' ').slice(0, 3).join(' ')} on ${availableParallelism()} cores (wall times scale with it; CPU-ms much less)`);
  console.log('policies without cameras pay 0: the browser starts on the first image request.');
  if (first.cam_high === undefined) throw new Error('no image');

  if (pngDir) {
    mkdirSync(pngDir, { recursive: true });
    for (const name of CAMERA_NAMES) {
      const img = last[name]!;
      await sharp(Buffer.from(img.data), { raw: { width: img.width, height: img.height, channels: 3 } })
        .png()
        .toFile(join(pngDir, `${name}.png`));
    }
    console.log(`wrote ${CAMERA_NAMES.map((n) => `${n}.png`).join(', ')} to ${pngDir}`);
  }
}

await main();
