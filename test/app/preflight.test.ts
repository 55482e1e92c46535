import { test } from 'node:test';
import assert from 'node:assert/strict';
import { preflight, preflightProblems } from '../../src/app/preflight.js';
import { parseStationConfig } from '../../src/app/station-config.js';
import type { PolicyInfo } from '../../src/policy/contract.js';

const RIG = { type: 'yam-can', transport: 'slcan', ports: { left: '/dev/ttyACM0' } };
const policy = (name: string, cameras: PolicyInfo['cameras']): PolicyInfo =>
  ({ name, cameras }) as unknown as PolicyInfo;

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
  const problems = await preflightProblems({
    station,
    policies: [policy('policy A', ['cam_high', 'cam_left_wrist']), policy('policy B', ['cam_high', 'cam_right_wrist'])],
    blankCameras: false,
  });
  assert.deepEqual(problems.sort(), [
    'Camera cam_left_wrist: there is no video device /dev/video93; check that the camera is plugged in (ls /dev/video*, v4l2-ctl --list-devices) and that its config names the right device.',
    "Policy policy B reads camera cam_right_wrist, which the station config station.json does not have (it has cam_high, cam_left_wrist); add it to 'cameras', or rehearse with --blank-cameras (black frames).",
  ]);
  assert.deepEqual(
    await preflightProblems({ station, policies: [policy('policy A', ['cam_high'])], blankCameras: false }),
    [],
    'cam_high streams',
  );
  assert.deepEqual(
    await preflightProblems({ station, policies: [policy('policy B', ['cam_right_wrist'])], blankCameras: true }),
    [],
    'black frames need no camera',
  );
  await assert.rejects(
    preflight({ station, policies: [policy('policy B', ['cam_right_wrist', 'cam_left_wrist'])], blankCameras: false }),
    /^UserError: Pre-flight found 2 problems before anything is placed:\n- /,
  );
});

test('teleop with a station config: an emulated leader is refused on real arms in one sentence, before anything opens', async () => {
  const { mkdtempSync, rmSync } = await import('node:fs');
  const { tmpdir } = await import('node:os');
  const { join } = await import('node:path');
  const { openStore } = await import('../../src/store/store.js');
  const { recordTeleop } = await import('../../src/app/teleop-recording.js');
  const dir = mkdtempSync(join(tmpdir(), 'tandem-teleop-station-'));
  const store = openStore(join(dir, 'tandem.sqlite'));
  try {
    const station = parseStationConfig(
      { version: 1, rig: RIG, cameras: [{ name: 'cam_high', source: 'testsrc' }], leader: { kind: 'emulated-yam' } },
      'station.json',
      '/',
    );
    await assert.rejects(
      recordTeleop({
        store,
        outDir: join(dir, 'takes'),
        leader: 'emulated-yam',
        follower: station.source,
        station,
        cameras: 'cam_high=testsrc',
        task: 'bottles-in-the-bin',
        episodes: 1,
        seconds: 1,
        log: () => {},
      }),
      (e: Error) =>
        e.message ===
        "The emulated-yam leader moves by a script, and would drive the real arms of the yam-can rig with nobody at the leader; use a real leader (--leader yam:PORT,PORT or gello:PORT,PORT, or the station config's leader).",
    );
    assert.equal(
      store.listRecordings({ states: ['recording', 'failed', 'finished'] }).length,
      0,
      'nothing was recorded or opened',
    );
  } finally {
    store.close();
    rmSync(dir, { recursive: true, force: true });
  }
});
