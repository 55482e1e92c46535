import { test } from 'node:test';
import assert from 'node:assert/strict';
import { parseCameraConfig, parseCameraConfigs } from '../../../drivers/cameras/camera-config.js';

test('a V4L2 camera config needs only a name and a device: 640×480 at 30 fps by default', () => {
  assert.deepEqual(parseCameraConfig({ name: 'cam_high', kind: 'v4l2', device: '/dev/video0' }), { name: 'cam_high', kind: 'v4l2', device: '/dev/video0', width: 640, height: 480, fps: 30 });
  assert.deepEqual(parseCameraConfig({ name: 'cam_left_wrist', kind: 'testsrc', width: 224, height: 224, fps: 10 }), { name: 'cam_left_wrist', kind: 'testsrc', width: 224, height: 224, fps: 10 });
});

test('bad camera configs are refused in one sentence naming the camera and the field', () => {
  const bad: [unknown, RegExp][] = [
    [[], /must be a JSON object/],
    [{ kind: 'v4l2', device: '/dev/video0' }, /needs a 'name'/],
    [{ name: 'cam high', kind: 'v4l2', device: '/dev/video0' }, /needs a 'name' of letters, digits/],
    [{ name: 'cam_high', kind: 'usb', device: '/dev/video0' }, /^Camera cam_high: 'kind' must be "v4l2" or "testsrc", not "usb"\.$/],
    [{ name: 'cam_high', kind: 'v4l2' }, /^Camera cam_high: a v4l2 camera needs a 'device' under \/dev/],
    [{ name: 'cam_high', kind: 'v4l2', device: 'video0' }, /needs a 'device' under \/dev/],
    [{ name: 'cam_high', kind: 'testsrc', device: '/dev/video0' }, /a testsrc camera has no 'device'/],
    [{ name: 'cam_high', kind: 'v4l2', device: '/dev/video0', width: 641 }, /^Camera cam_high: 'width' must be an even whole number of pixels from 16 to 4096, not 641\.$/],
    [{ name: 'cam_high', kind: 'v4l2', device: '/dev/video0', height: '480' }, /'height' must be an even whole number/],
    [{ name: 'cam_high', kind: 'v4l2', device: '/dev/video0', width: 0 }, /'width' must be/],
    [{ name: 'cam_high', kind: 'v4l2', device: '/dev/video0', fps: 0 }, /^Camera cam_high: 'fps' must be a number from 1 to 240 frames per second, not 0\.$/],
    [{ name: 'cam_high', kind: 'v4l2', device: '/dev/video0', framerate: 30 }, /unknown field 'framerate'/],
  ];
  for (const [json, re] of bad) assert.throws(() => parseCameraConfig(json), (e: Error) => e.name === 'CameraConfigError' && re.test(e.message), JSON.stringify(json));
});

test('a camera list refuses a name or a device used twice', () => {
  assert.equal(parseCameraConfigs([{ name: 'a', kind: 'testsrc' }, { name: 'b', kind: 'testsrc' }]).length, 2);
  assert.throws(() => parseCameraConfigs([{ name: 'a', kind: 'testsrc' }, { name: 'a', kind: 'testsrc' }]), /names camera a twice/);
  assert.throws(
    () =>
      parseCameraConfigs([
        { name: 'a', kind: 'v4l2', device: '/dev/video0' },
        { name: 'b', kind: 'v4l2', device: '/dev/video0' },
      ]),
    /gives \/dev\/video0 to two cameras/,
  );
  assert.throws(() => parseCameraConfigs([{ name: 'a', kind: 'testsrc' }, { kind: 'v4l2' }], 'cameras.json'), /The cameras\.json entry 1 needs a 'name'/);
});
