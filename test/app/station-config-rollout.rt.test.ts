// `tandem rig rollout --station-config FILE` on the hardware stand-in: two YAM arms on socat ptys
// configured as `yam-can`, three ffmpeg testsrc cameras, an ONNX image policy reading one of them.
// Every configured camera is recorded; each step's timing goes into the episode file; a camera
// that stalls ends the rollout invalid with the camera named, the file kept.
import { test, after } from 'node:test';
import assert from 'node:assert/strict';
import { spawn, execFileSync } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { PtyEmulator } from '../../drivers/emulators/pty.js';
import { PROJECT_ROOT, runTandem } from '../helpers/cli.js';
import { until } from '../helpers/until.js';
import { readIndexed } from '../helpers/mcap.js';
import { buildLinearPolicyModel } from '../policy/onnx-model.js';
import { sampleLayoutSet, serializeLayoutSet } from '../../src/layouts/layout-set.js';
import { openStore } from '../../src/store/store.js';

const dir = mkdtempSync(join(tmpdir(), 'tandem-station-config-'));
after(() => rmSync(dir, { recursive: true, force: true }));

const layouts = join(dir, 'bottles.json');
writeFileSync(
  layouts,
  serializeLayoutSet(sampleLayoutSet({ task: 'bottles-in-the-bin', tiers: [1], perTier: 1, seed: 11 })),
);
const model = join(dir, 'image-policy.onnx');
writeFileSync(
  model,
  buildLinearPolicyModel({
    horizon: 10,
    seed: 3,
    cameras: [{ name: 'cam_high', camera: 'cam_high', layout: 'chw', dtype: 'float32', size: 32 }],
  }).bytes,
);

const CAMERAS = [
  { name: 'cam_high', source: 'testsrc', width: 160, height: 120, fps: 15 },
  { name: 'cam_left_wrist', source: 'testsrc', width: 160, height: 120, fps: 15 },
  { name: 'cam_right_wrist', source: 'testsrc', width: 160, height: 120, fps: 15 },
];

let n = 0;
function stationConfig(emus: { left: PtyEmulator; right: PtyEmulator }, cameras: unknown[] = CAMERAS): string {
  const file = join(dir, `station${n++}.json`);
  // The emulators share this test process: a starved process should not read as a silent motor.
  writeFileSync(
    file,
    JSON.stringify({
      version: 1,
      rig: {
        type: 'yam-can',
        transport: 'slcan',
        ports: { left: emus.left.link, right: emus.right.link },
        replyDeadlineMs: 350,
      },
      cameras,
    }),
  );
  return file;
}

async function withArms(fn: (emus: { left: PtyEmulator; right: PtyEmulator }) => Promise<void>): Promise<void> {
  const left = await PtyEmulator.start({ transport: 'slcan', link: join(dir, `left${n}`) });
  const right = await PtyEmulator.start({ transport: 'slcan', link: join(dir, `right${n}`) });
  try {
    await fn({ left, right });
  } finally {
    await left.stop();
    await right.stop();
  }
}

const rolloutArgs = (config: string, data: string, extra: string[] = []) => [
  'rig',
  'rollout',
  '--policy',
  `onnx:${model}`,
  '--layouts',
  layouts,
  '--layout',
  '0',
  '--station-config',
  config,
  '--data',
  data,
  '--json',
  ...extra,
];

const enabled = (emus: { left: PtyEmulator; right: PtyEmulator }): boolean =>
  [emus.left, emus.right].some((e) => [1, 2, 3, 4, 5, 6, 7].some((id) => e.bus.motor(id).status === 1));

test('an ONNX image policy runs on yam-can with the configured cameras; the episode file holds all three camera streams and per-step timing', async () => {
  await withArms(async (emus) => {
    const data = join(dir, 'data-ok');
    const r = await runTandem(rolloutArgs(stationConfig(emus), data, ['--seconds', '1.5']));
    assert.equal(r.code, 0, r.stdout + r.stderr);
    const j = JSON.parse(r.stdout);
    assert.equal(j.status, 'valid');
    assert.equal(j.rig, 'yam-can');
    assert.equal(j.steps, 75);
    assert.equal(j.finalMode, 'damped');
    const ep = await readIndexed(j.episodeFile);
    for (const c of CAMERAS) {
      const frames = ep.byTopic.get(`/cameras/${c.name}/image/compressed`) ?? [];
      // 1.5 s at 15 fps, plus the start-up and settle: every camera is recorded, not only the one the policy reads.
      assert.ok(frames.length >= 15, `${c.name}: ${frames.length} frames`);
      assert.equal(frames[0].message.format, 'jpeg');
    }
    const timing = ep.byTopic.get('/tandem/step_timing') ?? [];
    assert.equal(timing.length, 75, 'one timing record per control step');
    for (const t of timing) {
      const m = t.message as {
        camera: string[];
        frame_age_s: Float64Array;
        dropped: Uint32Array;
        observation_to_action_s: number;
        step: number;
      };
      assert.deepEqual([...m.camera], ['cam_high'], 'the frames of the cameras the policy reads');
      assert.ok(m.frame_age_s[0] >= 0 && m.frame_age_s[0] < 0.5, `frame age ${m.frame_age_s[0]} s`);
      assert.ok(
        m.observation_to_action_s >= 0 && m.observation_to_action_s < 1.5,
        `observation→action ${m.observation_to_action_s} s`,
      );
    }
    assert.ok(
      (timing.at(-1)!.message as { observation_to_action_s: number }).observation_to_action_s > 0,
      'later rows of a chunk act on an older observation',
    );
    const meta = ep.metadata.get('tandem.episode')!;
    assert.equal(meta.get('rehearsal'), 'false', 'real cameras on a real rig: a result');
    assert.match(meta.get('cameras')!, /cam_high=ffmpeg testsrc2 160x120@15 jpeg; cam_left_wrist=.*; cam_right_wrist=/);
  });
});

test('bad camera setups are refused in one sentence before any motor is enabled', async () => {
  await withArms(async (emus) => {
    const data = join(dir, 'data-bad');
    const noHigh = await runTandem(rolloutArgs(stationConfig(emus, CAMERAS.slice(1)), data));
    assert.equal(noHigh.code, 2);
    assert.match(
      noHigh.stderr,
      /^Policy onnx:image-policy\.onnx reads camera cam_high, which the station config .*station\d+\.json does not have \(it has cam_left_wrist, cam_right_wrist\); add it to 'cameras', or rehearse with --blank-cameras \(black frames\)\.\n$/,
    );
    const missing = await runTandem(
      rolloutArgs(stationConfig(emus, [{ name: 'cam_high', source: 'v4l2:/dev/video97' }]), data),
    );
    assert.equal(missing.code, 2);
    assert.match(
      missing.stderr,
      /^Camera cam_high: there is no video device \/dev\/video97; check that the camera is plugged in .*\n$/,
    );
    const twice = await runTandem(rolloutArgs(stationConfig(emus, [CAMERAS[0], CAMERAS[0]]), data));
    assert.equal(twice.code, 2);
    assert.match(
      twice.stderr,
      /^The station config .* is wrong: 'cameras' names camera cam_high twice; give each camera its own name\.\n$/,
    );
    const unknown = join(dir, 'unknown.json');
    writeFileSync(unknown, JSON.stringify({ version: 1, rig: { type: 'yam-can' }, camera: [] }));
    const u = await runTandem(rolloutArgs(unknown, data));
    assert.equal(u.code, 2);
    assert.match(
      u.stderr,
      /^The station config .*unknown\.json has unknown field 'camera'; remove it \(known: version, rig, cameras, leader, projector, cellIo, gripperCalibrations, simDrift, placementCheck\)\.\n$/,
    );
    for (const x of [noHigh, missing, twice, u]) assert.doesNotMatch(x.stderr, /\n\s+at /, 'no stack trace');
    assert.equal(enabled(emus), false, 'no motor was enabled');
    assert.equal(emus.left.bus.motor(1).status, 0);

    // Black frames instead of cam_high: it runs, its wrist cameras are recorded, and it is a rehearsal everywhere.
    const blank = await runTandem(
      rolloutArgs(stationConfig(emus, CAMERAS.slice(1)), data, ['--blank-cameras', '--seconds', '0.5']),
    );
    assert.equal(blank.code, 0, blank.stderr);
    const b = JSON.parse(blank.stdout);
    assert.equal(b.rehearsal, 'a rehearsal, not a result: the policy saw black frames (--blank-cameras)');
    const ep = await readIndexed(b.episodeFile);
    assert.equal(ep.metadata.get('tandem.episode')!.get('rehearsal'), 'true');
    assert.ok((ep.byTopic.get('/cameras/cam_left_wrist/image/compressed') ?? []).length > 0);
    const store = openStore(join(data, 'tandem.sqlite'));
    try {
      assert.deepEqual(
        store.listRollouts({ kind: 'real' }).map((r) => r.rehearsal),
        [true],
      );
      assert.equal(store.listRollouts({ rehearsal: false }).length, 0);
    } finally {
      store.close();
    }
    const report = (extra: string[]) =>
      runTandem([
        'report',
        '--policies',
        `onnx:${model}`,
        '--layouts',
        layouts,
        '-o',
        join(dir, 'r.html'),
        '--json',
        '--data',
        data,
        ...extra,
      ]);
    const left = await report([]);
    assert.equal(left.code, 0, left.stderr);
    assert.equal(JSON.parse(left.stdout).rehearsalsLeftOut, 1, 'a rehearsal is not a result');
    const counted = await report(['--include-rehearsals']);
    assert.equal(counted.code, 0, counted.stderr);
    assert.equal(JSON.parse(counted.stdout).rehearsalsLeftOut, 0);
  });
});

test('a camera that stalls mid-rollout ends it invalid with the camera and the time; the episode file is kept', async () => {
  await withArms(async (emus) => {
    const data = join(dir, 'data-stall');
    const child = spawn(
      process.execPath,
      [join(PROJECT_ROOT, 'bin/tandem.js'), ...rolloutArgs(stationConfig(emus), data, ['--seconds', '6'])],
      { stdio: ['ignore', 'pipe', 'pipe'] },
    );
    let out = '';
    let err = '';
    child.stdout.setEncoding('utf8').on('data', (d: string) => (out += d));
    child.stderr.setEncoding('utf8').on('data', (d: string) => (err += d));
    const code = new Promise<number | null>((res) => child.on('close', res));
    await until(() => /Running onnx:image-policy\.onnx on yam-can/.test(err), 60_000);
    await new Promise((r) => setTimeout(r, 800));
    // The ffmpeg of cam_high (the first camera started): frozen, as a USB camera that hangs.
    const ffmpegs = execFileSync('pgrep', ['-P', String(child.pid), 'ffmpeg'], { encoding: 'utf8' })
      .trim()
      .split('\n')
      .map(Number);
    assert.equal(ffmpegs.length, 3, 'one ffmpeg per configured camera');
    // Cameras start in config order: the oldest ffmpeg feeds cam_high.
    process.kill(Math.min(...ffmpegs), 'SIGSTOP');
    assert.equal(await code, 1, out + err);
    const j = JSON.parse(out);
    assert.equal(j.status, 'invalid');
    assert.equal(j.outcome, 'cameras-failed');
    assert.match(
      j.reason,
      /^The cameras failed at \d+\.\d\d s into the episode \(step \d+ of 300\), so the policy got no images: camera cam_high \(ffmpeg testsrc2\) sent no frame for \d+ ms, longer than the \d+ ms an observation may wait/,
    );
    assert.equal(j.recording.status, 'finished');
    const ep = await readIndexed(j.episodeFile);
    assert.ok(
      (ep.byTopic.get('/cameras/cam_high/image/compressed') ?? []).length > 5,
      'the frames before the stall are kept',
    );
    assert.ok((ep.byTopic.get('/joint_states') ?? []).length > 20);
    const store = openStore(join(data, 'tandem.sqlite'));
    try {
      const [row] = store.listRollouts({ kind: 'real' });
      assert.equal(row.outcome, 'cameras-failed');
    } finally {
      store.close();
    }
  });
});

test('station --check --station-config says each configured camera streams, or why not', async () => {
  const data = join(dir, 'data-check');
  const cfg = join(dir, 'check.json');
  writeFileSync(cfg, JSON.stringify({ version: 1, rig: { type: 'mirror' }, cameras: [CAMERAS[0]] }));
  const ok = await runTandem(['station', '--check', '--station-config', cfg, '--data', data, '--hold-seconds', '0.2']);
  assert.equal(ok.code, 0, ok.stderr);
  assert.match(ok.stdout, /\n {2}cameras {3}cam_high 160×120 @ 15 fps streaming\n/);
  writeFileSync(
    cfg,
    JSON.stringify({
      version: 1,
      rig: { type: 'mirror' },
      cameras: [{ name: 'cam_high', source: 'v4l2:/dev/video95' }],
    }),
  );
  const bad = await runTandem(['station', '--check', '--station-config', cfg, '--data', data, '--hold-seconds', '0.2']);
  assert.equal(bad.code, 1);
  assert.match(bad.stderr, /^Camera cam_high: there is no video device \/dev\/video95; /);
});
