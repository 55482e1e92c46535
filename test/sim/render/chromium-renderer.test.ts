// The sim cameras in the real headless chromium (SwiftShader WebGL). One browser serves the file;
// the last test closes it and checks it is gone.
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { until } from '../../helpers/until.js';
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { ChromiumRenderer } from '../../../src/sim/render/chromium-renderer.js';
import { RendererUnavailableError } from '../../../src/sim/render/renderer.js';
import { sceneCameraSource } from '../../../src/sim/render/scene-camera-source.js';
import { DEFAULT_CAMERA_CALIBRATION } from '../../../src/sim/render/camera-calibration.js';
import { cameraPoseInTable, projectToPixel } from '../../../src/sim/render/camera-projection.js';
import { CAMERA_NAMES, type RgbImage } from '../../../src/policy/contract.js';
import { BIN, BOTTLE } from '../../../src/tasks/catalogue.js';
import { bottleAt, compose, differingPixels, looksBlue, pixel, reachingState, scene } from './scenes.js';

const renderer = new ChromiumRenderer();
const cams = DEFAULT_CAMERA_CALIBRATION.cameras;

before(() => {
  // Nothing may start before the first image is asked for.
  assert.equal(renderer.browserStarts, 0);
});
after(async () => {
  await renderer.close();
});

/** Command lines of running processes that mention `needle`. */
function processesMentioning(needle: string): string[] {
  const found: string[] = [];
  for (const pid of readdirSync('/proc').filter((p) => /^\d+$/.test(p))) {
    try {
      const cmd = readFileSync(`/proc/${pid}/cmdline`, 'utf8');
      if (cmd.includes(needle)) found.push(`${pid}: ${cmd.split('\0')[0]}`);
    } catch {
      // The process ended while we looked.
    }
  }
  return found;
}

test('asking for no cameras returns no images and starts no browser', async () => {
  const images = await renderer.render(scene(reachingState(), [bottleAt('bottle-1', 0, 0)]), []);
  assert.deepEqual(images, {});
  let snapshots = 0;
  const source = sceneCameraSource(renderer, () => {
    snapshots += 1;
    return scene(reachingState(), []);
  });
  assert.deepEqual(await source.capture([]), {});
  assert.equal(snapshots, 0, 'a camera-less capture does not even take a snapshot');
  assert.equal(renderer.browserStarts, 0);
  assert.equal(await renderer.runningProfileDir(), undefined);
});

test('one request draws all three cameras at 224×224 RGB, and the same snapshot gives the same bytes', async () => {
  const snap = scene(
    reachingState(),
    [bottleAt('bottle-1', 0.05, 0.15)],
    [{ id: 'bin', kind: BIN.id, pose: { position: [0.3, 0, 0], quaternion: [0, 0, 0, 1] } }],
  );
  const first = await sceneCameraSource(renderer, () => snap).capture(CAMERA_NAMES);
  assert.equal(renderer.browserStarts, 1);
  for (const name of CAMERA_NAMES) {
    const img = first[name] as RgbImage;
    assert.deepEqual([img.width, img.height, img.data.length], [224, 224, 224 * 224 * 3], name);
    const counts = new Map<number, number>();
    for (let i = 0; i < img.data.length; i += 3) {
      const c = (img.data[i] << 16) | (img.data[i + 1] << 8) | img.data[i + 2];
      counts.set(c, (counts.get(c) ?? 0) + 1);
    }
    const commonest = Math.max(...counts.values()) / (224 * 224);
    assert.ok(
      counts.size >= 5 && commonest < 0.8,
      `${name} shows a scene, not a flat fill (${counts.size} colours, commonest covers ${(commonest * 100).toFixed(0)}%)`,
    );
  }
  // Draw something else in between so the page's state differs, then the first scene again.
  await renderer.render(scene(reachingState(-0.4, 0.5, 0.3), [bottleAt('bottle-9', -0.1, -0.2)]), CAMERA_NAMES);
  const again = await renderer.render(snap, CAMERA_NAMES);
  for (const name of CAMERA_NAMES)
    assert.ok(Buffer.from(first[name]!.data).equals(Buffer.from(again[name]!.data)), `${name} bytes identical`);
  assert.equal(renderer.browserStarts, 1, 'one browser for every request');
});

test('cam_high sees a bottle exactly where the layout puts it', async () => {
  const state = reachingState(-0.3, 0.4, 0.3); // arms low and out of the way
  const empty = (await renderer.render(scene(state, []), ['cam_high'])).cam_high!;
  for (const [x, y] of [
    [0.1, -0.15],
    [-0.1, 0.25],
    [0.3, 0.35],
  ]) {
    const withBottle = (await renderer.render(scene(state, [bottleAt('bottle-1', x, y)]), ['cam_high'])).cam_high!;
    // The middle of the bottle's body, projected with the calibration record.
    const { u, v } = projectToPixel(cams.cam_high.intrinsics, cams.cam_high.pose, [x, y, 0.08]);
    assert.ok(
      looksBlue(pixel(withBottle, u, v)),
      `bottle colour at (${u.toFixed(1)}, ${v.toFixed(1)}) for (${x}, ${y}): got ${pixel(withBottle, u, v)}`,
    );
    assert.ok(!looksBlue(pixel(empty, u, v)), `table colour there without the bottle: got ${pixel(empty, u, v)}`);
    // 25 px away (≈ 0.2 m on the table) the image is untouched by the bottle.
    const far = pixel(withBottle, u + 25, v);
    assert.deepEqual(far, pixel(empty, u + 25, v));
  }
  assert.deepEqual(BOTTLE.color, [64, 150, 220], 'the test reads the catalogue blue');
});

test('moving an object or an arm changes the images that see it, and only those', async () => {
  const state = reachingState();
  const base = await renderer.render(scene(state, [bottleAt('bottle-1', 0.1, -0.1)]), CAMERA_NAMES);
  const moved = await renderer.render(scene(state, [bottleAt('bottle-1', 0.15, -0.1)]), CAMERA_NAMES);
  assert.ok(differingPixels(base.cam_high!, moved.cam_high!) > 30, 'cam_high shows the 5 cm move');
  const left = reachingState();
  left[1] += 0.15; // left shoulder only
  const armMoved = await renderer.render(scene(left, [bottleAt('bottle-1', 0.1, -0.1)]), CAMERA_NAMES);
  assert.ok(differingPixels(base.cam_high!, armMoved.cam_high!) > 100, 'cam_high sees the left arm move');
  assert.ok(
    differingPixels(base.cam_left_wrist!, armMoved.cam_left_wrist!) > 5000,
    'the left wrist view swings with its arm',
  );
  assert.equal(
    differingPixels(base.cam_right_wrist!, armMoved.cam_right_wrist!),
    0,
    'the right wrist camera does not move',
  );
});

test('a wrist camera follows its gripper: a bottle held ahead of the fingers stays at the same pixel', async () => {
  // Held 25 cm down the approach axis (−z), 5 cm towards the gripper's +x (image down) and 7 cm
  // towards +y (image right), so a flipped or mirrored image would put it elsewhere.
  const held: [number, number, number] = [0.05, 0.07, -0.25];
  for (const state of [reachingState(0.2, 1.2, 1.0), reachingState(-0.6, 0.8, 0.5)]) {
    state[6] = 1; // left gripper wide open: fingers out of the way
    const empty = scene(state, []);
    const gripper = empty.links.find((l) => l.name === 'left_gripper')!;
    const bottlePose = compose(gripper.pose, {
      position: [held[0], held[1], held[2] - 0.1025],
      quaternion: [0, 0, 0, 1],
    });
    const snap = scene(state, [{ id: 'bottle-1', kind: BOTTLE.id, pose: bottlePose }]);
    const centre = compose(gripper.pose, { position: held, quaternion: [0, 0, 0, 1] }).position;
    const camPose = cameraPoseInTable('cam_left_wrist', cams.cam_left_wrist, snap.links);
    const { u, v } = projectToPixel(cams.cam_left_wrist.intrinsics, camPose, centre);
    assert.ok(
      u > 140 && u < 170 && v > 115 && v < 145,
      `the held point projects right of and below the centre: (${u.toFixed(1)}, ${v.toFixed(1)})`,
    );
    const images = await renderer.render(snap, ['cam_left_wrist', 'cam_right_wrist']);
    const left = images.cam_left_wrist!;
    assert.ok(
      looksBlue(pixel(left, u, v)),
      `left wrist sees the bottle at (${u.toFixed(1)}, ${v.toFixed(1)}): ${pixel(left, u, v)}`,
    );
    assert.ok(!looksBlue(pixel(left, 223 - u, v)) && !looksBlue(pixel(left, u, 223 - v)), 'not at the mirrored pixels');
    assert.ok(!looksBlue(pixel(images.cam_right_wrist!, u, v)), 'the right wrist camera looks elsewhere');
  }
});

test('a bad snapshot is refused before drawing, and the renderer keeps working', async () => {
  const good = scene(reachingState(), [bottleAt('bottle-1', 0, 0)]);
  await assert.rejects(
    renderer.render({ ...good, objects: [{ id: 'duck-1', kind: 'rubber-duck', pose: good.objects[0].pose }] }, [
      'cam_high',
    ]),
    /object "duck-1" is of kind "rubber-duck"/,
  );
  const img = await renderer.render(good, ['cam_high']);
  assert.equal(img.cam_high!.data.length, 224 * 224 * 3);
});

test('without chromium the renderer says how to install it, and starts nothing', async () => {
  const missing = new ChromiumRenderer({ executablePath: '/nonexistent/chromium' });
  await assert.rejects(
    missing.render(scene(reachingState(), []), ['cam_high']),
    (e: Error) =>
      e instanceof RendererUnavailableError &&
      /apt-get install chromium/.test(e.message) &&
      /never downloads a browser/.test(e.message),
  );
  assert.equal(missing.browserStarts, 0);
  await missing.close();
});

test('if chromium dies, the renderer says so at most once and the next request starts a fresh browser', async () => {
  const snap = scene(reachingState(), [bottleAt('bottle-1', 0.05, 0.15)]);
  const before = await renderer.render(snap, ['cam_high']);
  const dir = (await renderer.runningProfileDir())!;
  const main = processesMentioning(dir).find((p) => !p.includes('--type='));
  assert.ok(main, 'found the browser process this renderer started');
  process.kill(Number(main.split(':')[0]), 'SIGKILL');
  const starts = renderer.browserStarts;
  let images: Awaited<ReturnType<typeof renderer.render>> | undefined;
  for (let attempt = 0; attempt < 2 && !images; attempt++) {
    try {
      images = await renderer.render(snap, ['cam_high']);
    } catch (e) {
      assert.ok(
        e instanceof RendererUnavailableError && /stopped while drawing cam_high/.test((e as Error).message),
        (e as Error).message,
      );
    }
  }
  assert.ok(images, 'a new browser drew the frame');
  assert.equal(renderer.browserStarts, starts + 1);
  assert.ok(
    Buffer.from(images.cam_high!.data).equals(Buffer.from(before.cam_high!.data)),
    'same bytes from the new browser',
  );
  // A killed browser's helpers may outlive it briefly; the renderer sweeps its profile again after 1 s.
  await until(() => !existsSync(dir), 5000).catch(() => {});
  assert.ok(!existsSync(dir), "the dead browser's profile directory is removed");
});

test('close ends the browser and removes its profile; the next request starts a fresh one with identical images', async () => {
  const snap = scene(reachingState(), [bottleAt('bottle-1', 0.05, 0.15)]);
  const before = await renderer.render(snap, CAMERA_NAMES);
  const dir = await renderer.runningProfileDir();
  assert.ok(dir && existsSync(dir));
  assert.ok(processesMentioning(dir).length > 0, 'chromium runs with this profile');
  await renderer.close();
  assert.equal(await renderer.runningProfileDir(), undefined);
  assert.ok(!existsSync(dir), 'profile directory removed');
  assert.deepEqual(processesMentioning(dir), [], 'no chromium process left');
  const starts = renderer.browserStarts;
  const after = await renderer.render(snap, CAMERA_NAMES);
  assert.equal(renderer.browserStarts, starts + 1);
  // A close asked for while a request is in flight waits for it, then leaves nothing running.
  const inFlight = [renderer.render(snap, ['cam_high']), renderer.render(snap, ['cam_high'])];
  const closing = renderer.close();
  for (const r of await Promise.all(inFlight)) assert.equal(r.cam_high!.data.length, 224 * 224 * 3);
  await closing;
  assert.equal(await renderer.runningProfileDir(), undefined);
  assert.equal(renderer.browserStarts, starts + 1, 'closing did not start another browser');
  for (const name of CAMERA_NAMES)
    assert.ok(
      Buffer.from(before[name]!.data).equals(Buffer.from(after[name]!.data)),
      `${name}: a fresh browser draws the same bytes`,
    );
});
