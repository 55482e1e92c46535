// The renderer's canvas outside the page (never composited: cheaper) against the canvas in the page
// (how the renderer drew before), in the real headless chromium: a policy must see the same bytes
// either way. Each browser runs on its own so only one is up at a time.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { CAMERA_NAMES } from '../../../src/policy/contract.js';
import {
  assertSameImages,
  bottleAt,
  comparisonRequests,
  differingPixels,
  drawAll,
  MIXED_SIZES_CALIBRATION,
  reachingState,
  scene,
} from './scenes.js';
test("the detached canvas gives the canvas-in-page bytes: every task's sim scene, a moving arm, a single camera and a camera subset", async () => {
  const requests = await comparisonRequests();
  const reference = await drawAll({ attachCanvas: true }, requests);
  const now = await drawAll({}, requests);
  assertSameImages(now, reference, 'default cameras', 'the canvas-in-page drawing');
  // The images show something (a blank canvas would also be "identical").
  assert.ok(differingPixels(reference[3].cam_high!, reference[5].cam_high!) > 50, 'a moving arm changes cam_high');
});

test('cameras of different sizes in one request give the same bytes with the canvas in or out of the page', async () => {
  const requests = [0, 0.4].map((j1) => ({
    snap: scene(reachingState(j1), [bottleAt('bottle-1', 0.05, 0.1)]),
    cams: CAMERA_NAMES,
  }));
  const reference = await drawAll({ attachCanvas: true, calibration: MIXED_SIZES_CALIBRATION }, requests);
  const now = await drawAll({ calibration: MIXED_SIZES_CALIBRATION }, requests);
  assert.equal(now[0].cam_high!.width, 320);
  assert.equal(now[0].cam_left_wrist!.height, 120);
  assertSameImages(now, reference, 'mixed sizes', 'the canvas-in-page drawing');
});
