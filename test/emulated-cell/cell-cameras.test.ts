import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { cellCameraMounting, cellCameras } from '../../src/emulated-cell/cell-cameras.js';
import { cellTruth } from '../../src/emulated-cell/cell-truth.js';
import { CellWorld } from '../../src/emulated-cell/cell-world.js';
import { DEFAULT_CAMERA_CALIBRATION } from '../../src/sim/render/camera-calibration.js';
import { ChromiumRenderer } from '../../src/sim/render/chromium-renderer.js';
import { sampleLayoutSet, serializeLayoutSet } from '../../src/layouts/layout-set.js';
import { getTask } from '../../src/tasks/registry.js';
import { yamRigModel } from '../../src/rig/yam.js';
import type { RgbImage } from '../../src/policy/contract.js';
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
  for (let i = 0; i < a.data.length; i += 3) if (a.data[i] !== b.data[i] || a.data[i + 1] !== b.data[i + 1] || a.data[i + 2] !== b.data[i + 2]) n++;
  return n;
}

test("the cell's cameras sit where its truth says: the calibrated mounting at gap none, moved by the drawn errors otherwise", () => {
  assert.deepEqual(cellCameraMounting(cellTruth({ kind: 'none' })).cameras, DEFAULT_CAMERA_CALIBRATION.cameras);
  const t = cellTruth({ kind: 'seed', seed: 6 });
  const m = cellCameraMounting(t);
  for (const name of ['cam_high', 'cam_left_wrist', 'cam_right_wrist'] as const) {
    const d = m.cameras[name].pose.position.map((v, i) => v - DEFAULT_CAMERA_CALIBRATION.cameras[name].pose.position[i]);
    d.forEach((v, i) => assert.ok(Math.abs(v - t.truth.cameraOffsets[name].positionM[i]) < 1e-12));
    assert.notDeepEqual(m.cameras[name].pose.quaternion, DEFAULT_CAMERA_CALIBRATION.cameras[name].pose.quaternion);
    assert.ok(Math.abs(Math.hypot(...m.cameras[name].pose.quaternion) - 1) < 1e-5, 'still a rotation');
  }
});

test("the cell renders its own world through its true mounting: real images, and the mounting error shows in the pixels", async () => {
  const truth = cellTruth({ kind: 'seed', seed: 6 });
  const world = await CellWorld.create({ rigModel: yamRigModel(), task: getTask(set.task), layout: set.layouts[0], truth, placementSeed: 0 });
  const cams = cellCameras(world);
  const calibrated = new ChromiumRenderer();
  try {
    const images = await cams.source.capture(['cam_high', 'cam_left_wrist']);
    assert.ok(images.cam_high && images.cam_left_wrist);
    assert.equal(images.cam_high.width, 224);
    assert.ok(spread(images.cam_high) > 60, 'cam_high sees the table, objects and arms, not a blank frame');
    assert.ok(Number.isFinite(cams.lastCaptureS()));
    // The same instant through the station's calibrated (default) mounting: a few mm and tenths of
    // a degree move many pixels' content.
    const asCalibrated = await calibrated.render(world.snapshot(), ['cam_high']);
    assert.ok(differingPixels(images.cam_high, asCalibrated.cam_high!) > 500, 'the mounting error is visible');
  } finally {
    await cams.close();
    await calibrated.close();
    world.free();
  }
});

test('a camera policy runs on the emulated cell with its own camera images, no --blank-cameras', async () => {
  const dir = mkdtempSync(join(tmpdir(), 'tandem-cell-cams-'));
  try {
    const layouts = join(dir, 'bottles.json');
    writeFileSync(layouts, serializeLayoutSet(set));
    const model = join(dir, 'policy.onnx');
    writeFileSync(model, buildLinearPolicyModel({ horizon: 10, seed: 3 }).bytes);
    const cfg = join(dir, 'cell.json');
    writeFileSync(cfg, JSON.stringify({ type: 'yam-cell', replyDeadlineMs: 350 }));
    const r = await runTandem(['rig', 'rollout', '--policy', `onnx:${model}`, '--layouts', layouts, '--layout', '0', '--seconds', '1', '--rig-config', cfg, '--data', join(dir, 'data'), '--json']);
    assert.equal(r.code, 0, r.stdout + r.stderr);
    const j = JSON.parse(r.stdout);
    assert.equal(j.status, 'valid', j.reason);
    assert.ok(j.observations >= 5, `images were drawn for ${j.observations} observations`);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});
