import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { sampleLayoutSet } from '../../src/layouts/layout-set.js';
import type { SweepRollout } from '../../src/sim/sweep.js';
import { importAsBin } from '../helpers/cli.js';
import { buildLinearPolicyModel } from '../policy/onnx-model.js';
import { OnnxPolicy } from '../../src/policy/onnx/onnx-policy.js';
import { syntheticObservation } from '../../src/policy/observation.js';

// The sweep's worker threads start from build/ when it is fresh, as under bin/tandem.js: ≈ 1 CPU-s less each.
const { runSweep } = await importAsBin('src/sim/sweep.js', () => import('../../src/sim/sweep.js'));

/** Command lines of the running processes that mention `needle` (chromium carries its profile dir). */
function processesMentioning(needle: string): string[] {
  const found: string[] = [];
  for (const pid of readdirSync('/proc').filter((p) => /^\d+$/.test(p))) {
    try {
      const cmd = readFileSync(`/proc/${pid}/cmdline`, 'utf8').replaceAll('\0', ' ');
      if (cmd.includes(needle)) found.push(`${pid}: ${cmd.slice(0, 120)}`);
    } catch {
      // the process ended while we looked
    }
  }
  return found;
}

// A sweep of an ONNX policy that takes a camera image: its worker starts one headless chromium,
// draws the camera for every observation, feeds the pixels to the model, and closes the browser.
// Model A = state·W + mean(P ⊙ image)·V + b with integer pixel weights P summing to 0 (uint8
// input, so exactly 0 for any uniform frame); model B is the same W and b without the image input
// (the test models draw W and b first from the same seed). Same layouts and seeds, so A and B
// end in the same state exactly when the images carry nothing — never drawn, or blank of any
// colour (checked first) — and differ only when the frames show a scene.
// A worker that never closes its browser never exits, so the sweep would never return: the timeout turns that into a failure.
test('a sweep of a camera-taking ONNX policy renders in chromium, the pixels change the actions, and the worker closes the browser', {
  timeout: 180_000,
}, async () => {
  const dir = mkdtempSync(join(tmpdir(), 'tandem-sweep-cam-'));
  const profiles = join(dir, 'tmp');
  mkdirSync(profiles);
  const savedTmp = process.env.TMPDIR;
  // Worker threads copy the environment when they start: the renderer's profile goes under `profiles`.
  process.env.TMPDIR = profiles;
  try {
    const withCamera = join(dir, 'with-camera.onnx');
    const withoutCamera = join(dir, 'without-camera.onnx');
    writeFileSync(
      withCamera,
      buildLinearPolicyModel({
        seed: 3,
        horizon: 10,
        cameras: [{ name: 'cam_high', camera: 'cam_high', layout: 'chw', dtype: 'uint8', size: 32 }],
      }).bytes,
    );
    writeFileSync(withoutCamera, buildLinearPolicyModel({ seed: 3, horizon: 10, cameras: [] }).bytes);
    // The premise: on a blank frame (here a uniform grey, what a renderer that draws nothing gives)
    // the camera model answers exactly what the camera-less one does.
    const [a0, b0] = [await OnnxPolicy.load(withCamera), await OnnxPolicy.load(withoutCamera)];
    try {
      const obs = syntheticObservation({ size: 32, seed: 4 });
      const grey = { width: 32, height: 32, data: new Uint8Array(32 * 32 * 3).fill(181) };
      assert.deepEqual(
        Array.from((await a0.infer({ ...obs, images: { cam_high: grey } })).actions),
        Array.from((await b0.infer(obs)).actions),
      );
      assert.notDeepEqual(
        Array.from((await a0.infer(obs)).actions),
        Array.from((await b0.infer(obs)).actions),
        'a frame with something in it moves the answer',
      );
    } finally {
      await a0.close();
      await b0.close();
    }
    const layoutSet = sampleLayoutSet({ task: 'bottles-in-the-bin', tiers: [1, 2], perTier: 1, seed: 5 });
    const sweep = (model: string, onRollout?: (r: SweepRollout) => void) =>
      runSweep({ layoutSet, policySpec: `onnx:${model}`, repeats: 1, workers: 1, seconds: 0.5, cwd: dir, onRollout });

    const browserDuringSweep: string[][] = [];
    const a = await sweep(withCamera, () => browserDuringSweep.push(processesMentioning(profiles)));
    assert.equal(a.rollouts.length, 2);
    assert.equal(a.stopped, false);
    for (const r of a.rollouts) {
      assert.equal(r.status, 'valid', r.reason ?? r.error);
      assert.equal(r.error, undefined, 'the policy answered every observation');
      assert.ok(r.observations > 0);
      assert.equal(r.cameraFrames, r.observations, 'one cam_high image drawn per observation');
      assert.match(r.finalStateHash, /^[0-9a-f]{64}$/);
    }
    assert.ok(
      browserDuringSweep.every((procs) => procs.length > 0),
      'a chromium with its profile under the test temp dir ran while the worker worked',
    );
    assert.deepEqual(processesMentioning(profiles), [], 'no chromium left once the sweep returned');
    assert.deepEqual(
      readdirSync(profiles).filter((f) => f.startsWith('tandem-render-')),
      [],
      'and its profile directory was removed',
    );

    const b = await sweep(withoutCamera);
    assert.equal(b.rollouts.length, 2);
    for (const r of b.rollouts) assert.equal(r.cameraFrames, 0, 'no images for a policy without cameras');
    const byLayout = (rs: readonly SweepRollout[]) => new Map(rs.map((r) => [r.job.layoutIndex, r.finalStateHash]));
    const [ha, hb] = [byLayout(a.rollouts), byLayout(b.rollouts)];
    for (const i of [0, 1]) assert.notEqual(ha.get(i), hb.get(i), `layout ${i}: the rendered pixels moved the arms`);
  } finally {
    if (savedTmp === undefined) delete process.env.TMPDIR;
    else process.env.TMPDIR = savedTmp;
    rmSync(dir, { recursive: true, force: true });
  }
});
