import { test } from 'node:test';
import assert from 'node:assert/strict';
import { FfmpegCamera } from '../../drivers/cameras/ffmpeg-camera.js';
import { streamCameraSource } from '../../src/rollout/stream-camera-source.js';
import { until } from '../helpers/until.js';

const camera = (fps = 10) => new FfmpegCamera({ name: 'cam_high', kind: 'testsrc', width: 320, height: 240, fps });

test("an observation gets each camera's newest frame decoded to RGB, and waits only for a camera's very first frame", async () => {
  const cam = camera();
  const source = streamCameraSource({ cam_high: cam });
  try {
    const opening = cam.open();
    // Asked before the first frame: waits for it rather than failing or inventing one.
    const first = await source.capture(['cam_high']);
    await opening;
    const img = first.cam_high!;
    assert.deepEqual([img.width, img.height, img.data.length], [320, 240, 320 * 240 * 3]);
    // Two observations of the same newest frame share one decode (the first observation's frame
    // may already be older than the newest: it was decoded while the camera went on).
    const seq = cam.latest()!.seq;
    const again = await source.capture(['cam_high']);
    const twice = await source.capture(['cam_high']);
    if (cam.latest()!.seq === seq) assert.equal(twice.cam_high, again.cam_high, 'the same frame is decoded once');
    await until(() => cam.latest()!.seq >= seq + 3, 5000);
    const later = (await source.capture(['cam_high'])).cam_high!;
    assert.ok(!Buffer.from(later.data).equals(Buffer.from(img.data)), 'a newer frame shows the moving pattern later');
  } finally {
    await cam.close();
  }
});

test("decoding to a policy's size letterboxes as the policies' own resize does", async () => {
  const cam = camera();
  try {
    await cam.open();
    const img = (
      await streamCameraSource({ cam_high: cam }, { size: { width: 224, height: 224 } }).capture(['cam_high'])
    ).cam_high!;
    assert.deepEqual([img.width, img.height], [224, 224]);
    // 320×240 into 224×224 keeps 4:3: 168 rows of picture, 28 black rows above and below.
    const row = (y: number): number => img.data.subarray(y * 224 * 3, (y + 1) * 224 * 3).reduce((a, b) => a + b, 0);
    assert.equal(row(0), 0);
    assert.equal(row(223), 0);
    assert.ok(row(112) > 0);
  } finally {
    await cam.close();
  }
});

test("a lost camera fails the observation with the camera's own reason; a camera the rig lacks is named", async () => {
  const cam = camera();
  const source = streamCameraSource({ cam_high: cam });
  try {
    await cam.open();
    await source.capture(['cam_high']);
    process.kill(cam.pid!, 'SIGKILL');
    await until(() => cam.status === 'lost', 5000);
    await assert.rejects(
      source.capture(['cam_high']),
      /^Error: camera cam_high \(ffmpeg testsrc2\) stopped: its ffmpeg process ended \(killed by SIGKILL\)/,
    );
    await assert.rejects(
      source.capture(['cam_left_wrist']),
      /reads camera cam_left_wrist, which this rig does not have \(it has cam_high\)/,
    );
  } finally {
    await cam.close();
  }
});
