// Cheaper cameras (issue 17 item 5) keep the images byte for byte, in the real headless chromium:
// - against the bytes the renderer made before the change (SHA-256 recorded from it), and
// - in the same run, the deflated transfer (the default) against the raw per-camera transfer kept
//   as `transfer: 'raw'`, for every task's scene, camera subsets, mixed sizes and a randomized look.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import { ChromiumRenderer, DEFAULT_CHROMIUM_PATH } from '../../../src/sim/render/chromium-renderer.js';
import { CAMERA_NAMES } from '../../../src/policy/contract.js';
import type { SceneLook } from '../../../src/sim/render/scene-look.js';
import { assertSameImages, bottleAt, comparisonRequests, drawAll, MIXED_SIZES_CALIBRATION, reachingState, scene } from './scenes.js';

// Produced by the renderer at commit 5584fb0 (before this change: per-camera raw base64, the frame
// passed as an object) with Debian's chromium 156.0.8078.114, drawing the two snapshots below:
// sha256 of each image's RGB bytes. Another chromium/SwiftShader build may round a few pixels
// differently, so the check only runs on that build; the same-run comparison below runs anywhere.
const RECORDED_CHROMIUM = 'Chromium 156.0.8078.114';
const RECORDED = [
  {
    cam_high: '1e52c84f649f4e18489cb580e6b58e6527b131a0eb62a6f11a5b3d1937c80f1a',
    cam_left_wrist: '10a63938a420ec497685b999e3edff2211762dbae2a6b56a9e44b842daea3200',
    cam_right_wrist: '5312a9bff2bd784d4b8edf3a6ed9aabb65819a7346f2bc5851808ab145aacc23',
  },
  {
    cam_high: '96928f9d10d809d3a5cfc4ffeb2fc68a20f690351dbe4de6517666c481a82307',
    cam_left_wrist: '81dc1238806f5eb12b309ef326ec912dc5ac5aef87b6cc0dcfb038981b944842',
    cam_right_wrist: '9e168fc6b4edeb4d11efa6496ff1ef7c719a7a8e4a8e0789159a89eb79c55f2c',
  },
];

function chromiumVersion(): string {
  try {
    return execFileSync(process.env.TANDEM_CHROMIUM ?? DEFAULT_CHROMIUM_PATH, ['--version'], { encoding: 'utf8', stdio: ['ignore', 'pipe', 'ignore'] }).trim();
  } catch {
    return 'unknown';
  }
}

test('the default renderer draws the bytes the renderer drew before issue 17 item 5 (recorded SHA-256)', async (t) => {
  const version = chromiumVersion();
  if (!version.startsWith(RECORDED_CHROMIUM)) {
    t.skip(`recorded with ${RECORDED_CHROMIUM}, this is ${version}`);
    return;
  }
  const snaps = [scene(reachingState(), [bottleAt('bottle-1', 0.05, 0.15), bottleAt('bottle-2', -0.1, -0.2)]), scene(reachingState(0.5, 1.0, 0.8), [bottleAt('bottle-1', 0.2, -0.1)])];
  const r = new ChromiumRenderer();
  try {
    for (const [i, snap] of snaps.entries()) {
      const images = await r.render(snap, CAMERA_NAMES);
      for (const name of CAMERA_NAMES) {
        assert.equal(createHash('sha256').update(images[name]!.data).digest('hex'), RECORDED[i][name], `snapshot ${i} ${name}: the bytes drawn before`);
      }
    }
  } finally {
    await r.close();
  }
});

const LOOK: SceneLook = {
  cameras: { cam_high: { positionM: [0.01, -0.02, 0.005], rotationRad: [0.01, 0.02, -0.01] }, cam_left_wrist: { positionM: [0, 0.003, 0], rotationRad: [0.02, 0, 0] } },
  light: { intensityScale: 0.8, sunAzimuthRad: 0.3, sunElevationRad: -0.1 },
  objectColorScale: [1.1, 0.9, 1],
  tableColorScale: [0.95, 1, 1.05],
};

test("the deflated transfer gives the raw transfer's bytes: every task's scene, subsets, a randomized look", async () => {
  const requests = await comparisonRequests();
  requests.push({ snap: scene(reachingState(0.2), [bottleAt('bottle-1', 0.1, 0.05)]), cams: CAMERA_NAMES, look: LOOK });
  const before = await drawAll({ transfer: 'raw' }, requests);
  const now = await drawAll({}, requests);
  assertSameImages(now, before, 'default cameras', 'the raw transfer');
});

test('the deflated transfer gives the raw transfer\'s bytes for cameras of different sizes in one request', async () => {
  const requests = [0, 0.4].map((j1) => ({ snap: scene(reachingState(j1), [bottleAt('bottle-1', 0.05, 0.1)]), cams: CAMERA_NAMES }));
  const before = await drawAll({ transfer: 'raw', calibration: MIXED_SIZES_CALIBRATION }, requests);
  const now = await drawAll({ calibration: MIXED_SIZES_CALIBRATION }, requests);
  assert.equal(now[0].cam_high!.width, 320);
  assert.equal(now[0].cam_left_wrist!.width, 160);
  assertSameImages(now, before, 'mixed sizes', 'the raw transfer');
});
