import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import sharp from 'sharp';
import { cellCameraMounting, cellCameras } from '../../src/emulated-cell/cell-cameras.js';
import { createThreadedCell } from '../../src/emulated-cell/threaded-cell.js';
import { RealtimeClock } from '../../src/rig/clocks.js';
import { runRigRollout } from '../../src/rollout/rig-rollout.js';
import { streamCameraSource } from '../../src/rollout/stream-camera-source.js';
import type { CameraFrame } from '../../src/rig/camera.js';
import { until } from '../helpers/until.js';
import { cellTruth } from '../../src/emulated-cell/cell-truth.js';
import { CellWorld } from '../../src/emulated-cell/cell-world.js';
import { DEFAULT_CAMERA_CALIBRATION } from '../../src/sim/render/camera-calibration.js';
import { ChromiumRenderer } from '../../src/sim/render/chromium-renderer.js';
import { sampleLayoutSet, serializeLayoutSet } from '../../src/layouts/layout-set.js';
import { getTask } from '../../src/tasks/registry.js';
import { yamRigModel } from '../../src/rig/yam.js';
import type { ActionChunk, Observation, Policy, RgbImage } from '../../src/policy/contract.js';
import { runTandem } from '../helpers/cli.js';
import { buildLinearPolicyModel } from '../policy/onnx-model.js';

const set = sampleLayoutSet({ task: 'bottles-in-the-bin', tiers: [3], perTier: 1, seed: 8 });

function spread(img: RgbImage): number {
  let lo = 255;
  let hi = 0;
  for (const v of img.data) {
    if (v < lo) lo = v;
    if (v > hi) hi = v;
  }
  return hi - lo;
}

function differingPixels(a: RgbImage, b: RgbImage): number {
  let n = 0;
  for (let i = 0; i < a.data.length; i += 3)
    if (a.data[i] !== b.data[i] || a.data[i + 1] !== b.data[i + 1] || a.data[i + 2] !== b.data[i + 2]) n++;
  return n;
}

test("the cell's cameras sit where its truth says: the calibrated mounting at gap none, moved by the drawn errors otherwise", () => {
  assert.deepEqual(cellCameraMounting(cellTruth({ kind: 'none' })).cameras, DEFAULT_CAMERA_CALIBRATION.cameras);
  const t = cellTruth({ kind: 'seed', seed: 6 });
  const m = cellCameraMounting(t);
  for (const name of ['cam_high', 'cam_left_wrist', 'cam_right_wrist'] as const) {
    const d = m.cameras[name].pose.position.map(
      (v, i) => v - DEFAULT_CAMERA_CALIBRATION.cameras[name].pose.position[i],
    );
    d.forEach((v, i) => assert.ok(Math.abs(v - t.truth.cameraOffsets[name].positionM[i]) < 1e-12));
    assert.notDeepEqual(m.cameras[name].pose.quaternion, DEFAULT_CAMERA_CALIBRATION.cameras[name].pose.quaternion);
    assert.ok(Math.abs(Math.hypot(...m.cameras[name].pose.quaternion) - 1) < 1e-5, 'still a rotation');
  }
});

/** The niceness of every thread of the processes whose command line holds `marker`. */
function browserThreadNiceness(marker: string): number[] {
  const out: number[] = [];
  for (const pid of readdirSync('/proc').filter((p) => /^\d+$/.test(p))) {
    try {
      if (!readFileSync(`/proc/${pid}/cmdline`, 'utf8').includes(marker)) continue;
      for (const tid of readdirSync(`/proc/${pid}/task`))
        out.push(Number(readFileSync(`/proc/${pid}/task/${tid}/stat`, 'utf8').split(') ')[1].split(' ')[16]));
    } catch {
      // ended meanwhile
    }
  }
  return out;
}

/** Mean absolute difference per channel value of two images of the same size. */
function meanAbsDiff(a: RgbImage, b: RgbImage): number {
  let sum = 0;
  for (let i = 0; i < a.data.length; i++) sum += Math.abs(a.data[i] - b.data[i]);
  return sum / a.data.length;
}

async function decodeJpeg(data: Uint8Array): Promise<RgbImage> {
  const { data: rgb, info } = await sharp(data).raw().toBuffer({ resolveWithObject: true });
  assert.equal(info.channels, 3);
  return { width: info.width, height: info.height, data: new Uint8Array(rgb) };
}

test("the cell's cameras stream JPEG frames of its own world through its true mounting, all cameras of a tick from one instant", async () => {
  const truth = cellTruth({ kind: 'seed', seed: 6 });
  const world = await CellWorld.create({
    rigModel: yamRigModel(),
    task: getTask(set.task),
    layout: set.layouts[0],
    truth,
    placementSeed: 0,
  });
  const cams = cellCameras(world, { fps: 5 });
  const calibrated = new ChromiumRenderer();
  try {
    const high = cams.cameras.cam_high;
    const wrist = cams.cameras.cam_left_wrist;
    assert.equal(high.status, 'closed');
    assert.deepEqual([high.info.width, high.info.height, high.info.format], [224, 224, 'jpeg']);
    const seen: CameraFrame[] = [];
    high.onFrame((f) => seen.push(f));
    await Promise.all([high.open(), wrist.open()]);
    assert.equal(cams.cameras.cam_right_wrist.status, 'closed', 'a camera nobody opened is not drawn');
    await until(() => seen.length >= 3, 30_000);
    assert.deepEqual(
      seen.map((f) => f.seq),
      seen.map((_, i) => i),
    );
    const c = high.counters();
    assert.ok(c.received >= 3 && c.longestGapS > 0);
    assert.ok(
      c.dropped <= c.received,
      `the browser's start-up is not counted as dropped frames (${c.dropped} dropped, ${c.received} received)`,
    );
    // The stand-in for camera hardware yields the CPU to the world: every thread of its chromium runs at niceness 19.
    const profile = await (cams.renderer as ChromiumRenderer).runningProfileDir();
    assert.ok(profile);
    const niceness = browserThreadNiceness(profile);
    assert.ok(niceness.length > 10, `${niceness.length} chromium threads found`);
    assert.deepEqual([...new Set(niceness)], [19]);
    // cam_high and the wrist camera's newest frames come from the same snapshot.
    const [h, w] = [high.latest()!, wrist.latest()!];
    assert.equal(h.capturedS, w.capturedS);
    assert.ok(h.arrivalS >= h.capturedS!, 'stamped when the JPEG was ready, after the instant it shows');
    const image = await decodeJpeg(h.data);
    assert.deepEqual([image.width, image.height], [224, 224]);
    assert.ok(spread(image) > 60, 'cam_high sees the table, objects and arms, not a blank frame');
    // The world stands still (no rig drives it): the cell's renderer draws the same image again.
    // JPEG keeps it close; the station's calibrated (default) mounting, a few mm and tenths of a
    // degree away, moves the picture much further.
    const raw = (await cams.renderer.render(world.snapshot(), ['cam_high'])).cam_high!;
    const asCalibrated = (await calibrated.render(world.snapshot(), ['cam_high'])).cam_high!;
    const jpegError = meanAbsDiff(image, raw);
    assert.ok(
      jpegError < 3,
      `JPEG at the cell's quality stays within ${jpegError.toFixed(2)} levels of the drawn image`,
    );
    assert.ok(differingPixels(raw, asCalibrated) > 500, 'the mounting error is visible');
    assert.ok(meanAbsDiff(image, asCalibrated) > 2 * jpegError);
  } finally {
    await cams.close();
    await calibrated.close();
    world.free();
  }
  assert.equal(cams.cameras.cam_high.status, 'closed');
});

test('a camera policy on the emulated cell observes real images from the streams: the cell drawn (from the snapshot its own thread publishes), not black frames', async () => {
  const clock = new RealtimeClock();
  const task = getTask(set.task);
  const cell = await createThreadedCell({
    task,
    layout: set.layouts[0],
    gap: { kind: 'seed', seed: 2 },
    transport: 'slcan',
    clock,
    replyDeadlineMs: 350,
  });
  const cams = cellCameras(cell.world, { fps: 10, nowS: () => clock.nowS() });
  const got: { spread: number; width: number; timeS: number }[] = [];
  const looking: Policy = {
    info: {
      name: 'test:looks',
      checkpointSha256: '0'.repeat(64),
      actionHorizon: 10,
      cameras: ['cam_high', 'cam_right_wrist'],
      needsPrivilegedState: false,
    },
    async reset() {},
    async infer(obs: Observation): Promise<ActionChunk> {
      const hi = obs.images.cam_high!;
      assert.ok(obs.images.cam_right_wrist, 'both cameras the policy reads');
      got.push({ spread: spread(hi), width: hi.width, timeS: obs.timeS });
      const actions = new Float32Array(10 * 14);
      for (let r = 0; r < 10; r++) actions.set(obs.state, r * 14);
      return { horizon: 10, actions };
    },
  };
  try {
    await Promise.all(looking.info.cameras.map((n) => cams.cameras[n].open()));
    const r = await runRigRollout({
      rig: cell.rig,
      policy: looking,
      cameras: streamCameraSource(cams.cameras),
      task,
      layout: set.layouts[0],
      episodeSeconds: 1,
      controlHz: 50,
      seed: 0,
      deadlineMs: 1500,
      clock,
    });
    assert.equal(r.episode.status, 'valid', r.episode.reason);
    assert.ok(got.length >= 3, `${got.length} observations`);
    for (const g of got) {
      assert.equal(g.width, 224);
      assert.ok(g.spread > 60, 'an image of the cell, not a blank frame');
    }
    assert.ok(cams.cameras.cam_high.counters().received >= 5, 'the camera streamed through the episode');
  } finally {
    await cams.close();
    await cell.rig.close();
  }
});

test('a camera policy runs on the emulated cell with its own camera images, no --blank-cameras', async () => {
  const dir = mkdtempSync(join(tmpdir(), 'tandem-cell-cams-'));
  try {
    const layouts = join(dir, 'bottles.json');
    writeFileSync(layouts, serializeLayoutSet(set));
    const model = join(dir, 'policy.onnx');
    writeFileSync(model, buildLinearPolicyModel({ horizon: 10, seed: 3, steadyGrippers: 1 }).bytes);
    const cfg = join(dir, 'cell.json');
    writeFileSync(cfg, JSON.stringify({ type: 'yam-cell', replyDeadlineMs: 350 }));
    const r = await runTandem([
      'rig',
      'rollout',
      '--policy',
      `onnx:${model}`,
      '--layouts',
      layouts,
      '--layout',
      '0',
      '--seconds',
      '1',
      '--rig-config',
      cfg,
      '--data',
      join(dir, 'data'),
      '--json',
    ]);
    assert.equal(r.code, 0, r.stdout + r.stderr);
    const j = JSON.parse(r.stdout);
    assert.equal(j.status, 'valid', j.reason);
    assert.ok(j.observations >= 5, `images were drawn for ${j.observations} observations`);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});
