import { test } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync, readFileSync } from 'node:fs';
import sharp from 'sharp';
import { FfmpegCamera, ffmpegArgs } from '../../../drivers/cameras/ffmpeg-camera.js';
import type { FfmpegCameraConfig } from '../../../drivers/cameras/camera-config.js';
import type { CameraFrame } from '../../../src/rig/camera.js';
import { until } from '../../helpers/until.js';

const testsrc = (over: Partial<FfmpegCameraConfig> = {}): FfmpegCameraConfig => ({
  name: 'cam_high',
  kind: 'testsrc',
  width: 224,
  height: 224,
  fps: 10,
  ...over,
});
const sleep = (ms: number): Promise<void> => new Promise((r) => setTimeout(r, ms));

/** True while a process with this id exists at all — a zombie (exited, never reaped) counts. */
function processExists(pid: number): boolean {
  return existsSync(`/proc/${pid}`);
}

function processState(pid: number): string | undefined {
  try {
    return readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1]?.[0];
  } catch {
    return undefined;
  }
}

test('a testsrc camera streams JPEG frames at about its rate, numbered without gaps, stamped on the clock it was given, that decode to its size', async () => {
  const t0 = performance.now();
  const clockS = (): number => 1000 + (performance.now() - t0) / 1000; // a clock with its own epoch
  const cam = new FfmpegCamera(testsrc({ width: 320, height: 240 }), { nowS: clockS });
  const seen: CameraFrame[] = [];
  cam.onFrame((f) => seen.push(f));
  assert.equal(cam.status, 'closed');
  await cam.open();
  assert.equal(cam.status, 'streaming');
  assert.equal(cam.info.format, 'jpeg');
  await sleep(2000);
  const c = cam.counters();
  const delivered = seen.length;
  await cam.close();
  // Real time at 10 fps for ≈2 s: about 20 frames; loose bounds, since the machine may be busy.
  assert.ok(seen.length >= 8 && seen.length <= 35, `${seen.length} frames in ≈2 s at 10 fps`);
  assert.equal(c.received, delivered, 'received counts what the listeners got');
  assert.deepEqual(
    seen.map((f) => f.seq),
    seen.map((_, i) => i),
  );
  for (let i = 1; i < seen.length; i++) assert.ok(seen[i].arrivalS >= seen[i - 1].arrivalS);
  assert.ok(seen[0].arrivalS > 1000 && seen[0].arrivalS < 1100, 'stamped on the given clock');
  assert.equal(c.dropped, 0, `a pattern generated in real time loses nothing (${JSON.stringify(c)})`);
  assert.ok(c.longestGapS > 0 && c.longestGapS < 1.5);
  for (const f of [seen[0], seen[seen.length - 1]]) {
    assert.equal(f.format, 'jpeg');
    assert.equal(f.camera, 'cam_high');
    assert.deepEqual(
      [f.data[0], f.data[1], f.data[f.data.length - 2], f.data[f.data.length - 1]],
      [0xff, 0xd8, 0xff, 0xd9],
    );
    const { data, info } = await sharp(f.data).raw().toBuffer({ resolveWithObject: true });
    assert.deepEqual([info.width, info.height, info.channels], [320, 240, 3]);
    assert.equal(data.length, 320 * 240 * 3);
  }
  // testsrc2 moves: the first and last frames differ.
  assert.ok(!Buffer.from(seen[0].data).equals(Buffer.from(seen[seen.length - 1].data)));
});

test('frames the source loses show up as dropped, and the gap they leave as late and as the longest gap', async () => {
  // Frames 8–15 never leave ffmpeg, but their timestamps do not close up: what a camera's full kernel buffer looks like.
  const cam = new FfmpegCamera(testsrc({ fps: 10 }), {
    sourceFilter: "select='not(between(n\\,8\\,15))'",
    stallTimeoutS: 5,
  });
  await cam.open();
  await until(() => cam.counters().received >= 14, 10_000);
  await sleep(1200); // ffmpeg reports progress every 0.5 s
  const c = cam.counters();
  await cam.close();
  assert.ok(c.dropped >= 6 && c.dropped <= 8, `dropped ${c.dropped} of the 8 frames the source lost`);
  assert.ok(c.late >= 1, 'the frame after the gap was late');
  assert.ok(c.longestGapS > 0.6, `longest gap ${c.longestGapS} s spans the 0.9 s hole`);
});

test('killing the ffmpeg process marks the camera lost, and onLost fires once with the reason in words', async () => {
  const cam = new FfmpegCamera(testsrc());
  const lost: { reason: string; atS: number }[] = [];
  cam.onLost((reason, atS) => lost.push({ reason, atS }));
  await cam.open();
  const pid = cam.pid!;
  assert.ok(pid > 0);
  process.kill(pid, 'SIGKILL');
  await until(() => cam.status === 'lost', 5000);
  await sleep(300);
  assert.equal(lost.length, 1);
  assert.match(
    lost[0].reason,
    /camera cam_high \(ffmpeg testsrc2\) stopped: its ffmpeg process ended \(killed by SIGKILL\); the episode goes on without it/,
  );
  assert.equal(cam.lostReason, lost[0].reason);
  assert.ok(Number.isFinite(lost[0].atS));
  const before = cam.counters().received;
  await sleep(300);
  assert.equal(cam.counters().received, before, 'no frames after the loss');
  await cam.close();
  assert.equal(cam.status, 'closed');
  assert.equal(lost.length, 1, 'closing a lost camera is no second loss');
  assert.ok(!processExists(pid), 'the killed ffmpeg was reaped, not left a zombie');
});

test('a camera that stops sending (its ffmpeg frozen) is lost after its stall timeout, and closing still ends the process', async () => {
  const cam = new FfmpegCamera(testsrc(), { stallTimeoutS: 0.6 });
  let reason = '';
  cam.onLost((r) => (reason = r));
  await cam.open();
  const pid = cam.pid!;
  process.kill(pid, 'SIGSTOP');
  await until(() => cam.status === 'lost', 5000);
  assert.match(
    reason,
    /^camera cam_high \(ffmpeg testsrc2\) stopped sending frames \d+\.\d s ago; the episode goes on without it$/,
  );
  await cam.close();
  await until(() => !processExists(pid), 5000);
});

test('close ends ffmpeg and leaves no process behind; closing twice is fine, and the camera opens again afresh', async () => {
  const cam = new FfmpegCamera(testsrc());
  await cam.open();
  const pid = cam.pid!;
  assert.ok(processExists(pid));
  assert.notEqual(processState(pid), 'Z');
  await cam.close();
  assert.ok(!processExists(pid), 'no ffmpeg and no zombie after close');
  await cam.close();
  assert.equal(cam.status, 'closed');
  await cam.open();
  assert.equal(cam.status, 'streaming');
  assert.ok(cam.latest()!.seq <= 2, 'a reopened camera counts from zero');
  const pid2 = cam.pid!;
  assert.notEqual(pid2, pid);
  await cam.close();
  assert.ok(!processExists(pid2));
});

test('closing before the first frame rejects open() with a sentence and leaves no process', async () => {
  const cam = new FfmpegCamera(testsrc({ width: 1920, height: 1080, fps: 1 }));
  const opening = cam.open().then(
    () => undefined,
    (e: Error) => e,
  );
  await until(() => cam.pid !== undefined, 5000);
  const pid = cam.pid!;
  await cam.close();
  assert.match(
    String((await opening)?.message),
    /^Camera cam_high \(ffmpeg testsrc2\) was closed before its first frame\.$/,
  );
  assert.ok(!processExists(pid));
});

test('a missing V4L2 device is refused with a clear sentence before any ffmpeg starts', async () => {
  const cam = new FfmpegCamera({
    name: 'cam_high',
    kind: 'v4l2',
    device: '/dev/video99',
    width: 640,
    height: 480,
    fps: 30,
  });
  await assert.rejects(cam.open(), (e: Error) => {
    assert.equal(
      e.message,
      'Camera cam_high: there is no video device /dev/video99; check that the camera is plugged in (ls /dev/video*, v4l2-ctl --list-devices) and that its config names the right device.',
    );
    return true;
  });
  assert.equal(cam.status, 'closed');
  assert.equal(cam.pid, undefined);
});

test("a device that is not a camera goes through ffmpeg's real V4L2 input and is refused with a sentence", async () => {
  const cam = new FfmpegCamera({
    name: 'cam_high',
    kind: 'v4l2',
    device: '/dev/null',
    width: 640,
    height: 480,
    fps: 30,
  });
  await assert.rejects(
    cam.open(),
    /^CameraOpenError: Camera cam_high: \/dev\/null is not a video capture device; point the config at the camera's capture node/,
  );
  assert.equal(cam.status, 'closed');
});

test('no ffmpeg installed: the error says to install it', async () => {
  const cam = new FfmpegCamera(testsrc(), { ffmpegPath: '/nonexistent/ffmpeg' });
  await assert.rejects(
    cam.open(),
    /needs ffmpeg at \/nonexistent\/ffmpeg, which is not there: install it with "apt-get install ffmpeg"/,
  );
});

test('frames of another size than configured fail open() with both sizes named', async () => {
  // The source scales its pattern down: what a V4L2 driver does when it silently picks another size.
  const cam = new FfmpegCamera(testsrc({ width: 640, height: 480 }), { sourceFilter: 'scale=320:240' });
  await assert.rejects(
    cam.open(),
    /sends 320×240 frames, not the configured 640×480: set width and height to a size it supports/,
  );
  assert.equal(cam.status, 'closed');
  assert.equal(cam.pid, undefined);
});

test('the V4L2 command copies the camera’s MJPEG as it comes (no re-encoding)', () => {
  const args = ffmpegArgs({ name: 'cam_high', kind: 'v4l2', device: '/dev/video2', width: 1280, height: 720, fps: 30 });
  const joined = args.join(' ');
  assert.match(
    joined,
    /-f v4l2 -input_format mjpeg -video_size 1280x720 -framerate 30 -i \/dev\/video2 -c:v copy -f mjpeg pipe:1$/,
  );
  assert.ok(!args.includes('-re'));
});
