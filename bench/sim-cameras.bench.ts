/**
 * Sim camera benchmark (npm run bench -- sim-cameras).
 * Frame time of the headless-chromium renderer (three.js on SwiftShader), a tier-5-sized bottles
 * scene with both arms moving every frame:
 *   - baseline: one camera (cam_high) per request, steady state;
 *   - three cameras in one request (what a VLA observation costs), and as three requests;
 *   - old vs new in the same run: the renderer as before issue 17 item 5 (`transfer: 'raw'`,
 *     `floorUnderside: true`: raw base64 per camera, the floor's underside always drawn) against
 *     the default (one deflated buffer, the underside left out where no camera sees it), CPU-ms
 *     and wall ms per observation, the ratio, and how many frames came back byte-identical;
 *   - the first frame of a fresh renderer (browser start + page bundle), i.e. what a camera-less
 *     policy never pays;
 *   - the same three cameras with 4× MSAA;
 *   - the Node-side share: snapshot → page frame geometry, no browser;
 *   - where the CPU of a three-camera observation goes: per chromium process type (GPU process =
 *     SwiftShader's rasterisation, renderer = three.js and the page's read-back, browser = the
 *     DevTools relay of the pixels) and node, and the same observation at 224, 112 and 56 px, from
 *     which a fixed and a per-pixel cost are fitted (what decides whether ≤ 30 CPU-ms is reachable).
 * Set SIM_CAMERAS_PNG_DIR=DIR to also write the three images of the last frame as PNGs to look at,
 * SIM_CAMERAS_BREAKDOWN=0 to skip the breakdown.
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
import {
  DEFAULT_CAMERA_CALIBRATION,
  type CameraCalibration,
  type CameraModel,
} from '../src/sim/render/camera-calibration.js';

const FRAMES = Number(process.env.BENCH_FRAMES ?? 20);
const pngDir = process.env.SIM_CAMERAS_PNG_DIR;
const model = yamRigModel();
const task = { id: 'bottles-in-the-bin' as const, objectKinds: [BOTTLE], fixtureKinds: [BIN] };
const median = (xs: number[]): number => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];

/** Frame i of a scene where both arms sweep and eight bottles stand or lie around the bin. */
function snapshot(i: number): SceneSnapshot {
  const q = new Float64Array(14);
  const arm = [
    0.3 * Math.sin(i / 7),
    1.0 + 0.2 * Math.sin(i / 5),
    0.9,
    -0.5,
    0.2 * Math.sin(i / 3),
    0,
    0.5 + 0.4 * Math.sin(i / 4),
  ];
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
    objects: spots.map(([x, y, yawRad, posture], k) => ({
      id: `bottle-${k + 1}`,
      kind: BOTTLE.id,
      pose: objectPose3(BOTTLE, posture, { x, y, yawRad }),
    })),
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

/** CPU time (ms) so far per chromium process type (--type=…, the browser itself has none). */
function cpuMsByProcess(profileDir: string): Map<string, number> {
  const out = new Map<string, number>();
  for (const pid of readdirSync('/proc').filter((p) => /^\d+$/.test(p))) {
    try {
      const cmd = readFileSync(`/proc/${pid}/cmdline`, 'utf8');
      if (!cmd.includes(profileDir)) continue;
      const type = /--type=([\w-]+)/.exec(cmd)?.[1] ?? 'browser';
      const fields = readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1].split(' ');
      out.set(type, (out.get(type) ?? 0) + (Number(fields[11]) + Number(fields[12])) * 10);
    } catch {
      // process ended meanwhile
    }
  }
  return out;
}

/** The same cameras scaled to `sizePx` square (focal lengths scaled with them, so each sees the same view). */
function calibrationAt(sizePx: number): CameraCalibration {
  const k = sizePx / DEFAULT_CAMERA_CALIBRATION.cameras.cam_high.intrinsics.widthPx;
  const at = (m: CameraModel): CameraModel => ({
    ...m,
    intrinsics: {
      widthPx: sizePx,
      heightPx: sizePx,
      fxPx: m.intrinsics.fxPx * k,
      fyPx: m.intrinsics.fyPx * k,
      cxPx: (sizePx - 1) / 2,
      cyPx: (sizePx - 1) / 2,
    },
  });
  const c = DEFAULT_CAMERA_CALIBRATION.cameras;
  return {
    name: `scaled ${sizePx}`,
    version: 1,
    cameras: { cam_high: at(c.cam_high), cam_left_wrist: at(c.cam_left_wrist), cam_right_wrist: at(c.cam_right_wrist) },
  };
}

/** Where a three-camera observation's CPU goes, and how it scales with the image size. */
async function costBreakdown(): Promise<void> {
  console.log(`\nwhere the CPU of a 3-camera observation goes (${FRAMES} frames each):`);
  const bySize: [number, number][] = [];
  for (const size of [224, 112, 56]) {
    const r = new ChromiumRenderer({ calibration: calibrationAt(size) });
    await r.render(snapshot(0), CAMERA_NAMES);
    for (let i = 0; i < 5; i++) await r.render(snapshot(i), CAMERA_NAMES);
    const dir = (await r.runningProfileDir())!;
    const before = cpuMsByProcess(dir);
    const own0 = process.cpuUsage();
    for (let i = 0; i < FRAMES; i++) await r.render(snapshot(i), CAMERA_NAMES);
    const own = process.cpuUsage(own0);
    const after = cpuMsByProcess(dir);
    await r.close();
    const parts = [...after]
      .map(([type, ms]) => [type, (ms - (before.get(type) ?? 0)) / FRAMES] as const)
      .filter(([, ms]) => ms >= 0.5);
    const nodeMs = (own.user + own.system) / 1000 / FRAMES;
    const total = parts.reduce((s, [, ms]) => s + ms, 0) + nodeMs;
    bySize.push([3 * size * size, total]);
    console.log(
      `  ${String(size).padStart(3)} px: ${total.toFixed(1).padStart(6)} CPU-ms = ${[...parts.map(([t, ms]) => `${t} ${ms.toFixed(1)}`), `node ${nodeMs.toFixed(1)}`].join(', ')}`,
    );
  }
  // Least-squares line through (pixels, CPU-ms): fixed cost per observation + cost per pixel.
  const n = bySize.length;
  const mx = bySize.reduce((s, [x]) => s + x, 0) / n;
  const my = bySize.reduce((s, [, y]) => s + y, 0) / n;
  const slope =
    bySize.reduce((s, [x, y]) => s + (x - mx) * (y - my), 0) / bySize.reduce((s, [x]) => s + (x - mx) ** 2, 0);
  const fixed = my - slope * mx;
  console.log(
    `  fit: ${fixed.toFixed(1)} CPU-ms fixed + ${(slope * 1e6).toFixed(0)} CPU-ns per pixel; 3 × 224² = ${(fixed + slope * 3 * 224 * 224).toFixed(1)} CPU-ms, of which pixels ${(slope * 3 * 224 * 224).toFixed(1)}`,
  );
}

/** Median wall time per frame, and CPU time per frame (browser + this process) — the latter barely moves with machine load. */
async function frames(
  r: ChromiumRenderer,
  cams: readonly CameraName[],
  separate: boolean,
): Promise<{ wallMs: number; cpuMs: number }> {
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
  console.log(
    `sim cameras: 224×224 RGB, SwiftShader WebGL in /usr/bin/chromium; median of ${FRAMES} frames, the scene changes every frame`,
  );
  const prep: number[] = [];
  for (let i = 0; i < 200; i++) {
    const s = snapshot(i);
    const t0 = performance.now();
    snapshotBodies(s);
    snapshotCameras(s, DEFAULT_CAMERA_CALIBRATION, CAMERA_NAMES);
    prep.push(performance.now() - t0);
  }

  const r = new ChromiumRenderer();
  const t0 = performance.now();
  const first = await r.render(snapshot(0), CAMERA_NAMES);
  const coldMs = performance.now() - t0;
  await frames(r, CAMERA_NAMES, false); // warm-up: shader compiles, JIT
  // The old way beside it, both browsers up, measured in alternating blocks so machine load hits both alike.
  const old = new ChromiumRenderer({ transfer: 'raw', floorUnderside: true });
  await old.render(snapshot(0), CAMERA_NAMES);
  await frames(old, CAMERA_NAMES, false);
  const blocks: { now: { wallMs: number; cpuMs: number }; before: { wallMs: number; cpuMs: number } }[] = [];
  for (let b = 0; b < 3; b++)
    blocks.push({ before: await frames(old, CAMERA_NAMES, false), now: await frames(r, CAMERA_NAMES, false) });
  const meanOf = (k: 'now' | 'before'): { wallMs: number; cpuMs: number } => ({
    wallMs: median(blocks.map((x) => x[k].wallMs)),
    cpuMs: blocks.reduce((s, x) => s + x[k].cpuMs, 0) / blocks.length,
  });
  const three = meanOf('now');
  const threeBefore = meanOf('before');
  let identical = 0;
  for (let i = 0; i < FRAMES; i++) {
    const [a, b] = [await r.render(snapshot(i), CAMERA_NAMES), await old.render(snapshot(i), CAMERA_NAMES)];
    if (CAMERA_NAMES.every((n) => Buffer.from(a[n]!.data).equals(Buffer.from(b[n]!.data)))) identical += 1;
  }
  await old.close();
  const one = await frames(r, ['cam_high'], false);
  const threeSeparate = await frames(r, CAMERA_NAMES, true);
  const last = await r.render(snapshot(FRAMES), CAMERA_NAMES);
  await r.close();

  const aa = new ChromiumRenderer({ antialias: true });
  await aa.render(snapshot(0), CAMERA_NAMES);
  await frames(aa, CAMERA_NAMES, false);
  const threeAa = await frames(aa, CAMERA_NAMES, false);
  await aa.close();

  const row = (label: string, m: { wallMs: number; cpuMs?: number }): void => {
    const cpu =
      m.cpuMs === undefined
        ? ''.padStart(30)
        : `${m.cpuMs.toFixed(1).padStart(8)} CPU-ms/frame ${(m.cpuMs / one.cpuMs).toFixed(2).padStart(5)}×`;
    console.log(
      `${label.padEnd(50)} ${m.wallMs.toFixed(1).padStart(8)} ms/frame ${(m.wallMs / one.wallMs).toFixed(2).padStart(6)}× ${(1000 / m.wallMs).toFixed(1).padStart(7)} frames/s ${cpu}`,
    );
  };
  console.log(
    `\n${''.padEnd(50)} ${'wall (median)'.padStart(17)} ${'vs baseline'.padStart(6)} ${''.padStart(15)} ${'CPU, all chromium processes + node'.padStart(30)}`,
  );
  row('baseline: cam_high only, one request', one);
  row('3 cameras, one request, as before issue 17 item 5', threeBefore);
  row('3 cameras, one request (a VLA observation)', three);
  row('3 cameras, three requests', threeSeparate);
  row('3 cameras, one request, 4× MSAA', threeAa);
  row('first frame of a fresh renderer (browser start)', { wallMs: coldMs });
  row('Node-side geometry only (snapshot → page frame)', { wallMs: median(prep) });
  console.log(
    `\nnow vs before issue 17 item 5: ${three.cpuMs.toFixed(1)} vs ${threeBefore.cpuMs.toFixed(1)} CPU-ms per observation (${(three.cpuMs / threeBefore.cpuMs).toFixed(2)}×), ${three.wallMs.toFixed(1)} vs ${threeBefore.wallMs.toFixed(1)} ms wall (${(three.wallMs / threeBefore.wallMs).toFixed(2)}×); byte-identical images in ${identical} of ${FRAMES} frames`,
  );
  console.log(
    `per camera in a batch: ${(three.wallMs / 3).toFixed(1)} ms wall, ${(three.cpuMs / 3).toFixed(1)} CPU-ms; batching saves ${(threeSeparate.wallMs - three.wallMs).toFixed(1)} ms per observation`,
  );
  console.log(
    `machine load while measuring: ${readFileSync('/proc/loadavg', 'utf8').split(' ').slice(0, 3).join(' ')} on ${availableParallelism()} cores (wall times scale with it; CPU-ms much less)`,
  );
  console.log('policies without cameras pay 0: the browser starts on the first image request.');
  if (first.cam_high === undefined) throw new Error('no image');
  if (process.env.SIM_CAMERAS_BREAKDOWN !== '0') await costBreakdown();

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
