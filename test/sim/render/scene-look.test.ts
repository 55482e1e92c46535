// A randomized look in the real headless chromium: the drawn camera offsets, light and colours
// change what each sim camera sees of one unchanged scene; the same look draws the same bytes,
// and a frame without a look after one is the default picture again, byte for byte (a sweep's
// worker reuses one page for rollouts with and without looks).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { ChromiumRenderer } from '../../../src/sim/render/chromium-renderer.js';
import type { SceneLook } from '../../../src/sim/render/scene-look.js';
import { createScene } from '../../../src/sim/scene.js';
import { DEFAULT_SIM_CALIBRATION } from '../../../src/sim/calibration.js';
import { yamRigModel } from '../../../src/rig/yam.js';
import { getTask } from '../../../src/tasks/registry.js';
import { sampleLayout } from '../../../src/layouts/sample.js';
import { createRng } from '../../../src/layouts/random.js';
import { CAMERA_NAMES, type CameraName, type RgbImage } from '../../../src/policy/contract.js';
import { drawLook, parseRandomizationSpec } from '../../../src/sim/randomization.js';
import { differingPixels, reachingState } from './scenes.js';

type Images = Partial<Record<CameraName, RgbImage>>;
const same = (a: Images, b: Images): boolean =>
  CAMERA_NAMES.every((n) => Buffer.from(a[n]!.data).equals(Buffer.from(b[n]!.data)));

test('a drawn look changes every sim camera image of the same scene, reproduces byte for byte, and leaves the scene as it was', {
  timeout: 120_000,
}, async () => {
  const task = getTask('bottles-in-the-bin');
  const s = await createScene({
    rigModel: yamRigModel(),
    task,
    layout: sampleLayout(task, 3, 0, createRng(5)),
    calibration: DEFAULT_SIM_CALIBRATION,
    startPosition: reachingState(),
  });
  const spec = parseRandomizationSpec(
    JSON.stringify({
      format: 'tandem.randomization/1',
      seed: 9,
      visual: {
        cameraPositionM: [-0.02, 0.02],
        cameraAngleRad: [-0.05, 0.05],
        lightIntensityScale: [0.6, 1.4],
        lightAzimuthRad: [-0.8, 0.8],
        objectColorScale: [0.6, 1.4],
        tableColorScale: [0.7, 1.3],
      },
    }),
    'spec.json',
  );
  const look = drawLook(spec, 0, 0)!;
  const other = drawLook(spec, 0, 1)!;
  const r = new ChromiumRenderer();
  try {
    const snap = s.snapshot();
    const fingerprint = Float64Array.from(s.fingerprint());
    const plain = await r.render(snap, CAMERA_NAMES);
    const looked = await r.render(snap, CAMERA_NAMES, look);
    const again = await r.render(snap, CAMERA_NAMES, look);
    const repeat1 = await r.render(snap, CAMERA_NAMES, other);
    const plainAfter = await r.render(snap, CAMERA_NAMES);
    const total = plain.cam_high!.width * plain.cam_high!.height;
    for (const name of CAMERA_NAMES) {
      const d = differingPixels(looked[name]!, plain[name]!);
      assert.ok(d > total / 10, `${name}: the look changes the picture (${d} of ${total} pixels differ)`);
      assert.ok(
        differingPixels(repeat1[name]!, looked[name]!) > total / 10,
        `${name}: another repeat's look is another picture`,
      );
    }
    assert.ok(same(again, looked), 'the same look draws the same bytes');
    assert.ok(same(plainAfter, plain), 'no look after a look: the default picture again, byte for byte');
    // One field at a time, each on its own changes cam_high.
    const parts: [string, SceneLook][] = [
      ['camera pose', { cameras: { cam_high: look.cameras!.cam_high! } }],
      ['light', { light: look.light! }],
      ['object colours', { objectColorScale: look.objectColorScale! }],
      ['table colour', { tableColorScale: look.tableColorScale! }],
    ];
    for (const [what, part] of parts) {
      const img = await r.render(snap, ['cam_high'], part);
      assert.ok(differingPixels(img.cam_high!, plain.cam_high!) > 0, `${what} alone changes cam_high`);
    }
    // The physics: rendering with a look moved nothing in the scene.
    assert.deepEqual(s.snapshot(), snap);
    assert.deepEqual(s.fingerprint(), fingerprint);
  } finally {
    await r.close();
    s.free();
  }
});
