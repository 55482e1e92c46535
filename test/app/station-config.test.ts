import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import {
  cellPreset,
  missingPolicyCameras,
  parseStationConfig,
  readStationConfig,
  rigConfigWithGrippers,
  stationConfigFromArgs,
} from '../../src/app/station-config.js';
import { UserError } from '../../src/app/command.js';

const RIG = { type: 'yam-can', transport: 'slcan', ports: { left: '/dev/ttyACM0', right: '/dev/ttyACM1' } };
const parse = (raw: unknown) => parseStationConfig(raw, 'station.json', '/lab');

test('a station config holds the rig unchanged, its cameras, leader, projector and cell I/O', () => {
  const c = parse({
    version: 1,
    rig: RIG,
    cameras: [
      {
        name: 'cam_high',
        source: 'v4l2:/dev/v4l/by-id/usb-cam-high-video-index0',
        width: 1280,
        height: 720,
        fps: 30,
        format: 'mjpeg',
      },
      { name: 'cam_left_wrist', source: 'testsrc' },
    ],
    leader: { kind: 'yam', ports: ['/dev/ttyACM2', '/dev/ttyACM3'] },
    projector: { calibration: 'projector.json', pjlink: '192.168.0.20:4352', display: 1 },
    cellIo: {
      endpointUrl: 'opc.tcp://127.0.0.1:4840',
      nodes: {
        estopOk: 'ns=1;s=EstopOk',
        doorClosed: 'ns=1;s=Door',
        lightCurtainClear: 'ns=1;s=Curtain',
        towerRed: 'ns=1;s=R',
        towerAmber: 'ns=1;s=A',
        towerGreen: 'ns=1;s=G',
      },
    },
  });
  assert.deepEqual(c.rig, RIG);
  assert.deepEqual(c.cameras, [
    {
      name: 'cam_high',
      kind: 'v4l2',
      device: '/dev/v4l/by-id/usb-cam-high-video-index0',
      width: 1280,
      height: 720,
      fps: 30,
    },
    { name: 'cam_left_wrist', kind: 'testsrc', width: 640, height: 480, fps: 30 },
  ]);
  assert.deepEqual(c.leader, { kind: 'yam', ports: ['/dev/ttyACM2', '/dev/ttyACM3'] });
  assert.deepEqual(c.projector, { calibration: '/lab/projector.json', pjlink: '192.168.0.20:4352', display: 1 });
  assert.equal(c.cellIo?.endpointUrl, 'opc.tcp://127.0.0.1:4840');
  assert.deepEqual(
    cellPreset().cameras.map((x) => `${x.name}:${x.kind}`),
    ['cam_high:cell', 'cam_left_wrist:cell', 'cam_right_wrist:cell'],
  );
  assert.equal(cellPreset().rig.type, 'yam-cell');
});

test('every bad field is one sentence naming the field and what to do', () => {
  const bad: [unknown, RegExp][] = [
    [[], /^The station config station\.json must be a JSON object like \{"version": 1/],
    [{ version: 2, rig: RIG }, /^The station config station\.json has version 2; this station reads "version": 1\.$/],
    [{ version: 1 }, /needs 'rig': an object with a 'type'/],
    [
      { version: 1, rig: RIG, camera: [] },
      /^The station config station\.json has unknown field 'camera'; remove it \(known: version, rig, cameras, leader, projector, cellIo, gripperCalibrations, simDrift, placementCheck\)\.$/,
    ],
    [{ version: 1, rig: RIG, cameras: {} }, /is wrong: 'cameras' must be a JSON array of cameras/],
    [
      { version: 1, rig: RIG, cameras: [{ name: 'a', source: 'usb0' }] },
      /is wrong: Camera a: 'source' must be "v4l2:\/dev\/videoN", "testsrc" or "cell", not "usb0"\.$/,
    ],
    [
      { version: 1, rig: RIG, cameras: [{ name: 'a', source: 'v4l2:video0' }] },
      /Camera a: a v4l2 'source' names a device under \/dev/,
    ],
    [
      { version: 1, rig: RIG, cameras: [{ name: 'a', source: 'testsrc', format: 'yuyv422' }] },
      /Camera a: 'format' must be "mjpeg" .* not "yuyv422"; set the camera to MJPEG or leave 'format' out\.$/,
    ],
    [
      { version: 1, rig: RIG, cameras: [{ name: 'a', source: 'testsrc', fps: 0 }] },
      /Camera a: 'fps' must be a number from 1 to 240/,
    ],
    [
      { version: 1, rig: RIG, cameras: [{ name: 'a', source: 'testsrc', device: '/dev/video0' }] },
      /Camera a: unknown field 'device'; remove it/,
    ],
    [
      {
        version: 1,
        rig: RIG,
        cameras: [
          { name: 'a', source: 'testsrc' },
          { name: 'a', source: 'testsrc' },
        ],
      },
      /'cameras' names camera a twice; give each camera its own name\.$/,
    ],
    [
      {
        version: 1,
        rig: RIG,
        cameras: [
          { name: 'a', source: 'v4l2:/dev/video0' },
          { name: 'b', source: 'v4l2:/dev/video0' },
        ],
      },
      /gives \/dev\/video0 to two cameras/,
    ],
    [
      { version: 1, rig: RIG, placementCheck: { maxErrorMm: -1 } },
      /^The station config station\.json has placementCheck\.maxErrorMm -1; give a number above 0 and at most 1000\.$/,
    ],
    [
      { version: 1, rig: RIG, placementCheck: { maxErrorCm: 1 } },
      /has unknown field placementCheck\.maxErrorCm; remove it \(a placement check has 'maxErrorMm' and 'maxErrorDeg'\)\.$/,
    ],
    [
      { version: 1, rig: RIG, leader: { kind: 'spacemouse' } },
      /has leader\.kind "spacemouse"; use one of yam, gello, emulated-yam, emulated-gello\.$/,
    ],
    [
      { version: 1, rig: RIG, leader: { kind: 'yam' } },
      /needs leader\.ports: one serial device path per arm, left first/,
    ],
    [
      { version: 1, rig: RIG, leader: { kind: 'emulated-yam', ports: ['/dev/x'] } },
      /gives ports to the emulated-yam leader/,
    ],
    [{ version: 1, rig: RIG, projector: { pjlink: 'p' } }, /needs projector\.calibration/],
    [{ version: 1, rig: RIG, projector: { calibration: 'p.json', screen: 1 } }, /has unknown field projector\.screen/],
    [
      { version: 1, rig: RIG, cellIo: { endpointUrl: 'http://plc' } },
      /^The cell I\/O config station\.json cellIo needs "endpointUrl": "opc\.tcp:\/\/host:port"/,
    ],
    [
      { version: 1, rig: RIG, gripperCalibrations: { middle: 'a'.repeat(64) } },
      /has gripperCalibrations\.middle; the arms are left and right\.$/,
    ],
    [
      { version: 1, rig: RIG, gripperCalibrations: { left: 'abc' } },
      /gripperCalibrations\.left "abc"; give the calibration's 64-hex sha256/,
    ],
  ];
  for (const [raw, re] of bad) {
    assert.throws(
      () => parse(raw),
      (e: Error) => e instanceof UserError && re.test(e.message) && !e.message.includes('\n'),
      JSON.stringify(raw),
    );
  }
});

test('a policy needing a camera the config lacks is one sentence; --station-config and --rig-config are one or the other', async () => {
  const c = parse({ version: 1, rig: RIG, cameras: [{ name: 'cam_left_wrist', source: 'testsrc' }] });
  assert.equal(missingPolicyCameras(c, { name: 'pi05', cameras: ['cam_left_wrist'] }), undefined);
  assert.equal(
    missingPolicyCameras(c, { name: 'pi05', cameras: ['cam_high', 'cam_left_wrist', 'cam_right_wrist'] }),
    "Policy pi05 reads cameras cam_high, cam_right_wrist, which the station config station.json does not have (it has cam_left_wrist); add them to 'cameras', or rehearse with --blank-cameras (black frames).",
  );
  await assert.rejects(
    stationConfigFromArgs({ 'station-config': 'a.json', 'rig-config': 'b.json' }, '/'),
    /^UserError: Give --station-config or --rig-config, not both/,
  );
  const dir = mkdtempSync(join(tmpdir(), 'tandem-station-config-'));
  try {
    writeFileSync(join(dir, 'rig.json'), JSON.stringify(RIG));
    const fromRig = await stationConfigFromArgs({ 'rig-config': 'rig.json' }, dir);
    assert.deepEqual(fromRig.rig, RIG);
    assert.deepEqual(fromRig.cameras, []);
    writeFileSync(join(dir, 'broken.json'), '{"version": 1,');
    assert.throws(
      () => readStationConfig(join(dir, 'broken.json')),
      /^UserError: The station config .*broken\.json is not valid JSON; check it with/,
    );
    assert.equal((await stationConfigFromArgs({ 'station-config': 'cell' }, dir)).source, 'the cell preset');
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});

test('gripper calibrations are applied from the store to the yam-can rig config, refused when missing or for the other arm', () => {
  const json = (arm: string) => JSON.stringify({ arm, closedRad: 0.01, openRad: 6.5, kind: 'yam-gripper-limits' });
  const left = 'a'.repeat(64);
  const right = 'b'.repeat(64);
  const store = {
    getCalibration: (sha: string) =>
      sha === left
        ? { kind: 'yam-gripper-limits', canonicalJson: json('left') }
        : sha === right
          ? { kind: 'yam-gripper-limits', canonicalJson: json('left') }
          : undefined,
  };
  const c = parse({ version: 1, rig: RIG, gripperCalibrations: { left } });
  assert.deepEqual(rigConfigWithGrippers(c, store).gripperLimits, { left: { closedRad: 0.01, openRad: 6.5 } });
  assert.throws(
    () => rigConfigWithGrippers(parse({ version: 1, rig: RIG, gripperCalibrations: { right } }), store),
    /gives the left arm's gripper calibration bbbbbbbbbbbb… to the right arm; swap them\.$/,
  );
  assert.throws(
    () => rigConfigWithGrippers(parse({ version: 1, rig: RIG, gripperCalibrations: { left: 'c'.repeat(64) } }), store),
    /which this store does not hold as a yam-gripper-limits calibration; run 'tandem rig calibrate-gripper --arm left'/,
  );
  assert.throws(
    () => rigConfigWithGrippers(parse({ version: 1, rig: { type: 'mirror' }, gripperCalibrations: { left } }), store),
    /apply to yam-can rigs only/,
  );
});
