/**
 * Observation-to-action latency and camera frame age on the hardware stand-in: two YAM arms from
 * `tandem rig emulate` on socat ptys as `yam-can`, three ffmpeg testsrc cameras at 640×480 and
 * 30 fps from one station config, an ONNX image policy reading cam_high, and one reading all three
 * cameras (as a pi0.5-class policy does) — read back from the episode file's /tandem/step_timing. The same-run baseline is the same rollout of the same model
 * shape without a camera input (no frames decoded, three cameras still recorded): the ratio says
 * what reading a camera costs the loop.
 *
 *   npm run bench -- station-cameras        (STATION_BENCH_SECONDS=5 by default)
 */
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { buildLinearPolicyModel } from '../test/policy/onnx-model.js';
import { readIndexed } from '../test/helpers/mcap.js';
import type { CameraName } from '../src/policy/contract.js';
import { sampleLayoutSet, serializeLayoutSet } from '../src/layouts/layout-set.js';

const SECONDS = Number(process.env.STATION_BENCH_SECONDS ?? 5);
const root = fileURLToPath(new URL('..', import.meta.url));
const bin = join(root, 'bin/tandem.js');
const dir = mkdtempSync(join(tmpdir(), 'station-cameras-bench-'));
const children: ChildProcess[] = [];

async function startEmulator(link: string): Promise<void> {
  const child = spawn(process.execPath, [bin, 'rig', 'emulate', '--transport', 'slcan', '--link', link], {
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  children.push(child);
  let out = '';
  child.stdout!.setEncoding('utf8').on('data', (d: string) => (out += d));
  const start = Date.now();
  while (!/Press Ctrl-C/.test(out)) {
    if (child.exitCode !== null || Date.now() - start > 30_000)
      throw new Error(`emulator for ${link} did not start: ${out}`);
    await new Promise((r) => setTimeout(r, 20));
  }
}

const q = (sorted: number[], p: number): number =>
  sorted[Math.min(sorted.length - 1, Math.floor(p * sorted.length))] ?? NaN;
const ms = (s: number): string => (s * 1000).toFixed(1);

async function rollout(
  model: string,
  config: string,
  layouts: string,
): Promise<{
  obsToAction: number[];
  frameAge: number[];
  frameAgeByCamera: Record<string, number[]>;
  dropped: number;
  frames: Record<string, number>;
}> {
  const r = spawnSync(
    process.execPath,
    [
      bin,
      'rig',
      'rollout',
      '--policy',
      `onnx:${model}`,
      '--layouts',
      layouts,
      '--layout',
      '0',
      '--seconds',
      String(SECONDS),
      '--station-config',
      config,
      '--data',
      join(dir, 'data'),
      '--json',
    ],
    { encoding: 'utf8' },
  );
  if (r.status !== 0) throw new Error(`rig rollout exited ${r.status}: ${r.stderr}`);
  const j = JSON.parse(r.stdout) as { episodeFile: string; status: string };
  if (j.status !== 'valid') throw new Error(`the rollout is ${j.status}: ${r.stdout}`);
  const ep = await readIndexed(j.episodeFile);
  const rows = (ep.byTopic.get('/tandem/step_timing') ?? []).map(
    (m) =>
      m.message as {
        observation_to_action_s: number;
        camera: string[];
        frame_age_s: Float64Array;
        dropped: Uint32Array;
      },
  );
  const frameAgeByCamera: Record<string, number[]> = {};
  for (const x of rows) x.camera.forEach((c, i) => (frameAgeByCamera[c] ??= []).push(x.frame_age_s[i]));
  for (const list of Object.values(frameAgeByCamera)) list.sort((a, b) => a - b);
  const frames: Record<string, number> = {};
  for (const [topic, list] of ep.byTopic) if (topic.startsWith('/cameras/')) frames[topic.split('/')[2]] = list.length;
  return {
    obsToAction: rows.map((x) => x.observation_to_action_s).sort((a, b) => a - b),
    frameAge: rows.flatMap((x) => [...x.frame_age_s]).sort((a, b) => a - b),
    frameAgeByCamera,
    dropped: rows.length ? Math.max(0, ...rows.flatMap((x) => [...x.dropped])) : 0,
    frames,
  };
}

try {
  const links = { left: join(dir, 'left'), right: join(dir, 'right') };
  await startEmulator(links.left);
  await startEmulator(links.right);
  const layouts = join(dir, 'set.json');
  writeFileSync(
    layouts,
    serializeLayoutSet(sampleLayoutSet({ task: 'bottles-in-the-bin', tiers: [1], perTier: 1, seed: 1 })),
  );
  const cameraModel = join(dir, 'image.onnx');
  writeFileSync(
    cameraModel,
    buildLinearPolicyModel({
      horizon: 10,
      seed: 3,
      cameras: [{ name: 'cam_high', camera: 'cam_high', layout: 'chw', dtype: 'float32', size: 224 }],
    }).bytes,
  );
  const threeModel = join(dir, 'three.onnx');
  const input = (camera: CameraName) => ({
    name: camera,
    camera,
    layout: 'chw' as const,
    dtype: 'float32' as const,
    size: 224,
  });
  writeFileSync(
    threeModel,
    buildLinearPolicyModel({
      horizon: 10,
      seed: 3,
      cameras: [input('cam_high'), input('cam_left_wrist'), input('cam_right_wrist')],
    }).bytes,
  );
  const stateModel = join(dir, 'state.onnx');
  writeFileSync(stateModel, buildLinearPolicyModel({ horizon: 10, seed: 3, cameras: [] }).bytes);
  const config = join(dir, 'station.json');
  const cam = (name: string) => ({ name, source: 'testsrc', width: 640, height: 480, fps: 30 });
  writeFileSync(
    config,
    JSON.stringify({
      version: 1,
      rig: { type: 'yam-can', transport: 'slcan', ports: links },
      cameras: [cam('cam_high'), cam('cam_left_wrist'), cam('cam_right_wrist')],
    }),
  );
  const base = await rollout(stateModel, config, layouts);
  const withCam = await rollout(cameraModel, config, layouts);
  const withThree = await rollout(threeModel, config, layouts);
  console.log(
    `stand-in: yam-can on two rig-emulate ptys, three testsrc cameras 640×480 @ 30 fps, ${SECONDS} s at 50 Hz; load average ${loadavg()[0].toFixed(2)} on this machine`,
  );
  console.log(
    `baseline (state-only ONNX):   observation→action p50 ${ms(q(base.obsToAction, 0.5))} ms, p99 ${ms(q(base.obsToAction, 0.99))} ms; frames recorded ${JSON.stringify(base.frames)}`,
  );
  console.log(
    `image policy (reads cam_high): observation→action p50 ${ms(q(withCam.obsToAction, 0.5))} ms, p99 ${ms(q(withCam.obsToAction, 0.99))} ms; cam_high frame age at inference p50 ${ms(q(withCam.frameAge, 0.5))} ms, p99 ${ms(q(withCam.frameAge, 0.99))} ms; drops ${withCam.dropped}; frames recorded ${JSON.stringify(withCam.frames)}`,
  );
  const ages = Object.entries(withThree.frameAgeByCamera)
    .map(([c, a]) => `${c} p50 ${ms(q(a, 0.5))} / p99 ${ms(q(a, 0.99))} ms`)
    .join('; ');
  console.log(
    `image policy (reads all three): observation→action p50 ${ms(q(withThree.obsToAction, 0.5))} ms, p99 ${ms(q(withThree.obsToAction, 0.99))} ms; frame age at inference ${ages}; drops ${withThree.dropped}; frames recorded ${JSON.stringify(withThree.frames)}`,
  );
  console.log(
    `ratio three cameras/baseline: observation→action p50 ×${(q(withThree.obsToAction, 0.5) / q(base.obsToAction, 0.5)).toFixed(2)}, p99 ×${(q(withThree.obsToAction, 0.99) / q(base.obsToAction, 0.99)).toFixed(2)}`,
  );
  console.log(
    `ratio image/baseline: observation→action p50 ×${(q(withCam.obsToAction, 0.5) / q(base.obsToAction, 0.5)).toFixed(2)}, p99 ×${(q(withCam.obsToAction, 0.99) / q(base.obsToAction, 0.99)).toFixed(2)}`,
  );
} finally {
  for (const c of children) c.kill('SIGINT');
  await Promise.all(children.map((c) => new Promise((r) => (c.exitCode !== null ? r(null) : c.on('close', r)))));
  rmSync(dir, { recursive: true, force: true });
}
