import { test } from 'node:test';
import assert from 'node:assert/strict';
import { parseCameraConfig, parseCameraConfigs } from '../../../drivers/cameras/camera-config.js';

test('a V4L2 camera config needs only a name and a source: 640×480 at 30 fps by default; a cell camera takes its renderer size', () => {
  assert.deepEqual(parseCameraConfig({ name: 'cam_high', source: 'v4l2:/dev/video0' }), {
    name: 'cam_high',
    kind: 'v4l2',
    device: '/dev/video0',
    width: 640,
    height: 480,
    fps: 30,
  });
  assert.deepEqual(
    parseCameraConfig({ name: 'cam_left_wrist', source: 'testsrc', width: 224, height: 224, fps: 10, format: 'mjpeg' }),
    { name: 'cam_left_wrist', kind: 'testsrc', width: 224, height: 224, fps: 10 },
  );
  assert.deepEqual(parseCameraConfig({ name: 'cam_high', source: 'cell' }), {
    name: 'cam_high',
    kind: 'cell',
    fps: 10,
  });
});

test('bad camera configs are refused in one sentence naming the camera and the field', () => {
  const bad: [unknown, RegExp][] = [
    [[], /must be a JSON object/],
    [{ source: 'v4l2:/dev/video0' }, /needs a 'name'/],
    [{ name: 'cam high', source: 'v4l2:/dev/video0' }, /needs a 'name' of letters, digits/],
    [
      { name: 'cam_high', source: 'usb' },
      /^Camera cam_high: 'source' must be "v4l2:\/dev\/videoN", "testsrc" or "cell", not "usb"\.$/,
    ],
    [{ name: 'cam_high', source: 'v4l2:' }, /^Camera cam_high: a v4l2 'source' names a device under \/dev/],
    [{ name: 'cam_high', source: 'v4l2:video0' }, /names a device under \/dev/],
    [{ name: 'cam_high', source: 'cell', format: 'mjpeg' }, /a cell camera has no 'format'/],
    [
      { name: 'cam_high', source: 'v4l2:/dev/video0', width: 641 },
      /^Camera cam_high: 'width' must be an even whole number of pixels from 16 to 4096, not 641\.$/,
    ],
    [{ name: 'cam_high', source: 'v4l2:/dev/video0', height: '480' }, /'height' must be an even whole number/],
    [{ name: 'cam_high', source: 'v4l2:/dev/video0', width: 0 }, /'width' must be/],
    [
      { name: 'cam_high', source: 'v4l2:/dev/video0', fps: 0 },
      /^Camera cam_high: 'fps' must be a number from 1 to 240 frames per second, not 0\.$/,
    ],
    [{ name: 'cam_high', source: 'cell', fps: 90 }, /'fps' must be a number from 1 to 60/],
    [{ name: 'cam_high', source: 'v4l2:/dev/video0', framerate: 30 }, /unknown field 'framerate'; remove it/],
  ];
  for (const [json, re] of bad)
    assert.throws(
      () => parseCameraConfig(json),
      (e: Error) => e.name === 'CameraConfigError' && re.test(e.message),
      JSON.stringify(json),
    );
});

test('a camera list refuses a name or a device used twice', () => {
  assert.equal(
    parseCameraConfigs([
      { name: 'a', source: 'testsrc' },
      { name: 'b', source: 'testsrc' },
    ]).length,
    2,
  );
  assert.throws(
    () =>
      parseCameraConfigs([
        { name: 'a', source: 'testsrc' },
        { name: 'a', source: 'testsrc' },
      ]),
    /names camera a twice/,
  );
  assert.throws(
    () =>
      parseCameraConfigs([
        { name: 'a', source: 'v4l2:/dev/video0' },
        { name: 'b', source: 'v4l2:/dev/video0' },
      ]),
    /gives \/dev\/video0 to two cameras/,
  );
  assert.throws(
    () => parseCameraConfigs([{ name: 'a', source: 'testsrc' }, { source: 'v4l2:/dev/video0' }]),
    /The cameras\[1\] needs a 'name'/,
  );
});
