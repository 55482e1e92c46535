import { test } from 'node:test';
import assert from 'node:assert/strict';
import { preflight, preflightProblems } from '../../src/app/preflight.js';
import { parseStationConfig } from '../../src/app/station-config.js';
import type { PolicyInfo } from '../../src/policy/contract.js';

const RIG = { type: 'yam-can', transport: 'slcan', ports: { left: '/dev/ttyACM0' } };
const policy = (name: string, cameras: PolicyInfo['cameras']): PolicyInfo => ({ name, cameras }) as unknown as PolicyInfo;

test('pre-flight names every problem at once, before anything is placed: a camera the config lacks, a camera that does not stream', async () => {
  const station = parseStationConfig(
    {
      version: 1,
      rig: RIG,
      cameras: [
        { name: 'cam_high', source: 'testsrc', width: 64, height: 48, fps: 10 },
        { name: 'cam_left_wrist', source: 'v4l2:/dev/video93' },
      ],
    },
    'station.json',
    '/',
  );
  const problems = await preflightProblems({ station, policies: [policy('policy A', ['cam_high', 'cam_left_wrist']), policy('policy B', ['cam_high', 'cam_right_wrist'])], blankCameras: false });
  assert.deepEqual(problems.sort(), [
    "Camera cam_left_wrist: there is no video device /dev/video93; check that the camera is plugged in (ls /dev/video*, v4l2-ctl --list-devices) and that its config names the right device.",
    "Policy policy B reads camera cam_right_wrist, which the station config station.json does not have (it has cam_high, cam_left_wrist); add it to 'cameras', or rehearse with --blank-cameras (black frames).",
  ]);
  assert.deepEqual(await preflightProblems({ station, policies: [policy('policy A', ['cam_high'])], blankCameras: false }), [], 'cam_high streams');
  assert.deepEqual(await preflightProblems({ station, policies: [policy('policy B', ['cam_right_wrist'])], blankCameras: true }), [], 'black frames need no camera');
  await assert.rejects(preflight({ station, policies: [policy('policy B', ['cam_right_wrist', 'cam_left_wrist'])], blankCameras: false }), /^UserError: Pre-flight found 2 problems before anything is placed:\n- /);
});
