// The renderer's canvas outside the page (never composited: cheaper) against the canvas in the page
// (how the renderer drew before), in the real headless chromium: a policy must see the same bytes
// either way. Each browser runs on its own so only one is up at a time.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { ChromiumRenderer, type ChromiumRendererOptions } from '../../../src/sim/render/chromium-renderer.js';
import { DEFAULT_CAMERA_CALIBRATION, type CameraCalibration } from '../../../src/sim/render/camera-calibration.js';
import type { SceneSnapshot } from '../../../src/sim/render/scene-snapshot.js';
import { createScene } from '../../../src/sim/scene.js';
import { DEFAULT_SIM_CALIBRATION } from '../../../src/sim/calibration.js';
import { yamRigModel } from '../../../src/rig/yam.js';
import { allTasks } from '../../../src/tasks/registry.js';
import { sampleLayout } from '../../../src/layouts/sample.js';
import { createRng } from '../../../src/layouts/random.js';
import { CAMERA_NAMES, type CameraName, type RgbImage } from '../../../src/policy/contract.js';
import { bottleAt, differingPixels, reachingState, scene } from './scenes.js';

type Images = Partial<Record<CameraName, RgbImage>>;

async function drawAll(options: ChromiumRendererOptions, requests: readonly { snap: SceneSnapshot; cams: readonly CameraName[] }[]): Promise<Images[]> {
  const r = new ChromiumRenderer(options);
  try {
    const out: Images[] = [];
    for (const q of requests) out.push(await r.render(q.snap, q.cams));
    return out;
  } finally {
    await r.close();
  }
}

function assertSame(now: Images[], reference: Images[], what: string): void {
  assert.equal(now.length, reference.length);
  now.forEach((images, i) => {
    assert.deepEqual(Object.keys(images).sort(), Object.keys(reference[i]).sort(), `${what} request ${i}: the same cameras`);
    for (const name of Object.keys(reference[i]) as CameraName[]) {
      const a = images[name]!;
      const b = reference[i][name]!;
      assert.equal(a.width, b.width);
      assert.equal(a.height, b.height);
      assert.equal(differingPixels(a, b), 0, `${what} request ${i} ${name}: ${differingPixels(a, b)} pixels differ from the canvas-in-page drawing`);
      assert.ok(Buffer.from(a.data).equals(Buffer.from(b.data)), `${what} request ${i} ${name}: byte-identical`);
    }
  });
}

test("the detached canvas gives the canvas-in-page bytes: every task's sim scene, a moving arm, a single camera and a camera subset", async () => {
  const requests: { snap: SceneSnapshot; cams: readonly CameraName[] }[] = [];
  for (const task of allTasks()) {
    const s = await createScene({ rigModel: yamRigModel(), task, layout: sampleLayout(task, 4, 0, createRng(11)), calibration: DEFAULT_SIM_CALIBRATION, startPosition: reachingState() });
    try {
      requests.push({ snap: s.snapshot(), cams: CAMERA_NAMES });
    } finally {
      s.free();
    }
  }
  for (const j1 of [0, 0.3, 0.6]) requests.push({ snap: scene(reachingState(j1), [bottleAt('bottle-1', 0.05, 0.15), bottleAt('bottle-2', -0.1, -0.2)]), cams: CAMERA_NAMES });
  requests.push({ snap: scene(reachingState(), [bottleAt('bottle-1', 0, 0)]), cams: ['cam_high'] });
  requests.push({ snap: scene(reachingState(0.1), [bottleAt('bottle-1', 0, 0)]), cams: ['cam_right_wrist', 'cam_left_wrist'] });
  const reference = await drawAll({ attachCanvas: true }, requests);
  const now = await drawAll({}, requests);
  assertSame(now, reference, 'default cameras');
  // The images show something (a blank canvas would also be "identical").
  assert.ok(differingPixels(reference[3].cam_high!, reference[5].cam_high!) > 50, 'a moving arm changes cam_high');
});

test('cameras of different sizes in one request give the same bytes with the canvas in or out of the page', async () => {
  const cams = DEFAULT_CAMERA_CALIBRATION.cameras;
  const calibration: CameraCalibration = {
    name: 'mixed sizes',
    version: 1,
    cameras: {
      ...cams,
      cam_high: { ...cams.cam_high, intrinsics: { widthPx: 320, heightPx: 240, fxPx: 190, fyPx: 190, cxPx: 159.5, cyPx: 119.5 } },
      cam_left_wrist: { ...cams.cam_left_wrist, intrinsics: { widthPx: 160, heightPx: 120, fxPx: 82, fyPx: 82, cxPx: 79.5, cyPx: 59.5 } },
    },
  };
  const requests = [0, 0.4].map((j1) => ({ snap: scene(reachingState(j1), [bottleAt('bottle-1', 0.05, 0.1)]), cams: CAMERA_NAMES }));
  const reference = await drawAll({ attachCanvas: true, calibration }, requests);
  const now = await drawAll({ calibration }, requests);
  assert.equal(now[0].cam_high!.width, 320);
  assert.equal(now[0].cam_left_wrist!.height, 120);
  assertSame(now, reference, 'mixed sizes');
});
