import { test } from 'node:test';
import assert from 'node:assert/strict';
import {
  cameraCalibrationSha256,
  CameraCalibrationError,
  DEFAULT_CAMERA_CALIBRATION,
  hashCameraCalibration,
  validateCameraCalibration,
  type CameraCalibration,
} from '../../../src/sim/render/camera-calibration.js';
import {
  cameraPoseInTable,
  CameraPlacementError,
  glCameraPose,
  glProjectionMatrix,
  projectToPixel,
} from '../../../src/sim/render/camera-projection.js';
import { SceneSnapshotError, snapshotBodies } from '../../../src/sim/render/scene-frame.js';
import { FINGER_CENTRE_Z_M, fingerOffsetsM } from '../../../src/sim/render/rig-visual.js';
import { frameToPose, invertFrame, composeFrames, poseToFrame, newFrame } from '../../../src/rig/kinematics.js';
import { bottleAt, compose, reachingState, scene } from './scenes.js';

const clone = (c: CameraCalibration): CameraCalibration => JSON.parse(JSON.stringify(c)) as CameraCalibration;

test('the default camera calibration is valid, 224×224, and its hash names its content', () => {
  const hashed = hashCameraCalibration(DEFAULT_CAMERA_CALIBRATION);
  assert.match(hashed.sha256, /^[0-9a-f]{64}$/);
  assert.equal(cameraCalibrationSha256(clone(DEFAULT_CAMERA_CALIBRATION)), hashed.sha256, 'a copy hashes the same');
  for (const cam of Object.values(DEFAULT_CAMERA_CALIBRATION.cameras)) {
    assert.deepEqual([cam.intrinsics.widthPx, cam.intrinsics.heightPx], [224, 224]);
  }
  const edited = clone(DEFAULT_CAMERA_CALIBRATION);
  (edited.cameras.cam_high.intrinsics as { fxPx: number }).fxPx += 1;
  assert.notEqual(cameraCalibrationSha256(edited), hashed.sha256, 'one changed focal length changes the id');
  assert.throws(
    () => validateCameraCalibration(edited, hashed.sha256),
    (e: Error) => e instanceof CameraCalibrationError && /does not match its recorded hash/.test(e.message),
  );
  assert.doesNotThrow(() => validateCameraCalibration(clone(DEFAULT_CAMERA_CALIBRATION), hashed.sha256));
});

test('a camera calibration with a missing camera or a bad rotation is refused in words', () => {
  const missing = clone(DEFAULT_CAMERA_CALIBRATION) as unknown as { cameras: Record<string, unknown> };
  delete missing.cameras.cam_right_wrist;
  assert.throws(() => validateCameraCalibration(missing), /camera "cam_right_wrist" is missing/);
  const skewed = clone(DEFAULT_CAMERA_CALIBRATION);
  (skewed.cameras.cam_high.pose as unknown as { quaternion: number[] }).quaternion = [0, 0, 0, 2];
  assert.throws(() => validateCameraCalibration(skewed), /cam_high pose quaternion has length 2\.0000, not 1/);
  const tiny = clone(DEFAULT_CAMERA_CALIBRATION);
  (tiny.cameras.cam_left_wrist.intrinsics as { widthPx: number }).widthPx = 3.5;
  assert.throws(() => validateCameraCalibration(tiny), /cam_left_wrist widthPx must be a whole number/);
});

test('the GL projection lands every point on the pixel the pinhole model predicts', () => {
  const cam = DEFAULT_CAMERA_CALIBRATION.cameras.cam_high;
  const k = { ...cam.intrinsics, cxPx: 100.25, cyPx: 120.75, fyPx: 140 }; // off-centre, non-square on purpose
  const P = glProjectionMatrix(k, cam.nearM, cam.farM);
  const gl = poseToFrame(glCameraPose(cam.pose));
  const toGl = invertFrame(gl);
  const points: [number, number, number][] = [
    [0, 0, 0],
    [0.3, -0.4, 0.1],
    [-0.2, 0.5, 0.0],
    [0.45, 0.2, 0.3],
  ];
  for (const p of points) {
    const { u, v, depthM } = projectToPixel(k, cam.pose, p);
    assert.ok(depthM > 0);
    const R = toGl.rotation;
    const t = toGl.position;
    const c = [0, 1, 2].map((i) => R[i * 3] * p[0] + R[i * 3 + 1] * p[1] + R[i * 3 + 2] * p[2] + t[i]);
    const clip = [0, 1, 2, 3].map((row) => P[row] * c[0] + P[4 + row] * c[1] + P[8 + row] * c[2] + P[12 + row]);
    const windowX = ((clip[0] / clip[3] + 1) / 2) * k.widthPx;
    const windowYFromTop = ((1 - clip[1] / clip[3]) / 2) * k.heightPx;
    assert.ok(Math.abs(windowX - (u + 0.5)) < 1e-9, `x: ${windowX} vs ${u + 0.5}`);
    assert.ok(Math.abs(windowYFromTop - (v + 0.5)) < 1e-9, `y: ${windowYFromTop} vs ${v + 0.5}`);
    assert.ok(clip[2] / clip[3] > -1 && clip[2] / clip[3] < 1, 'inside the depth range');
  }
});

test('cam_high sees the whole table top', () => {
  const cam = DEFAULT_CAMERA_CALIBRATION.cameras.cam_high;
  for (const corner of [
    [-0.5, -0.6, 0],
    [-0.5, 0.6, 0],
    [0.5, -0.6, 0],
    [0.5, 0.6, 0],
  ] as [number, number, number][]) {
    const { u, v, depthM } = projectToPixel(cam.intrinsics, cam.pose, corner);
    assert.ok(
      depthM > 0 && u >= 0 && u <= 223 && v >= 0 && v <= 223,
      `corner ${corner} at (${u.toFixed(1)}, ${v.toFixed(1)})`,
    );
  }
  // The robot's left (+y) is on the image's left.
  const left = projectToPixel(cam.intrinsics, cam.pose, [0, 0.3, 0]);
  const right = projectToPixel(cam.intrinsics, cam.pose, [0, -0.3, 0]);
  assert.ok(left.u < right.u);
});

test('a wrist camera rides its gripper link and keeps both fingertips in the lower half of its image', () => {
  const cal = DEFAULT_CAMERA_CALIBRATION.cameras.cam_left_wrist;
  const a = scene(reachingState(0.2, 1.2, 1.0), []);
  const b = scene(reachingState(-0.5, 0.6, 0.4), []);
  const poses = [a, b].map((s) => {
    const gripper = s.links.find((l) => l.name === 'left_gripper');
    assert.ok(gripper);
    const cam = cameraPoseInTable('cam_left_wrist', cal, s.links);
    const inGripper = frameToPose(composeFrames(invertFrame(poseToFrame(gripper.pose)), poseToFrame(cam), newFrame()));
    inGripper.position.forEach((x, i) => assert.ok(Math.abs(x - cal.pose.position[i]) < 1e-9));
    for (const y of fingerOffsetsM(1, 0.096)) {
      const tip = compose(gripper.pose, { position: [0, y, FINGER_CENTRE_Z_M - 0.03], quaternion: [0, 0, 0, 1] });
      const px = projectToPixel(cal.intrinsics, cam, tip.position);
      assert.ok(
        px.depthM > 0 && px.u > 0 && px.u < 223 && px.v > 112 && px.v < 223,
        `fingertip at (${px.u.toFixed(1)}, ${px.v.toFixed(1)})`,
      );
    }
    return cam;
  });
  assert.ok(
    Math.hypot(...poses[0].position.map((x, i) => x - poses[1].position[i])) > 0.05,
    'the camera moved with the arm',
  );
  assert.throws(
    () =>
      cameraPoseInTable(
        'cam_left_wrist',
        cal,
        a.links.filter((l) => l.name !== 'left_gripper'),
      ),
    (e: Error) =>
      e instanceof CameraPlacementError && /mounted on "left_gripper", but the scene has no such link/.test(e.message),
  );
});

test('a snapshot naming an unknown kind or a broken pose is refused with the culprit named', () => {
  const bad = { ...scene(reachingState(), [bottleAt('bottle-1', 0, 0)]) };
  assert.throws(
    () => snapshotBodies({ ...bad, objects: [{ id: 'duck-1', kind: 'rubber-duck', pose: bad.objects[0].pose }] }),
    (e: Error) =>
      e instanceof SceneSnapshotError &&
      /object "duck-1" is of kind "rubber-duck", which task bottles-in-the-bin does not define/.test(e.message),
  );
  assert.throws(
    () =>
      snapshotBodies({
        ...bad,
        objects: [{ ...bad.objects[0], pose: { position: [NaN, 0, 0], quaternion: [0, 0, 0, 1] } }],
      }),
    /the pose of object bottle-1 is not a finite position/,
  );
  const bodies = snapshotBodies(bad);
  assert.equal(bodies.filter((b) => b.key.startsWith('finger:')).length, 4, 'two fingers per gripper');
  assert.equal(bodies.filter((b) => b.key.startsWith('link:')).length, 14, 'seven link frames per arm');
});
