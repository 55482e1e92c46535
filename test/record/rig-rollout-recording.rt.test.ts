/**
 * A camera policy's rig rollout on the wall-clock emulated cell (its rendered cameras run on the
 * wall clock) records each camera's JPEG stream. The episode files of rollouts that need no wall
 * clock are tested in the clocked tier (rollout-recording.test.ts).
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { runTandem } from '../helpers/cli.js';
import { readIndexed } from '../helpers/mcap.js';
import { sampleLayoutSet, serializeLayoutSet } from '../../src/layouts/layout-set.js';
import sharp from 'sharp';
import { cameraTopic } from '../../src/record/episode-format.js';
import { buildLinearPolicyModel } from '../policy/onnx-model.js';

test('a camera policy on the emulated cell: the episode file holds a JPEG stream per camera it reads, as the cameras gave them', async () => {
  const dir = mkdtempSync(join(tmpdir(), 'tandem-rig-record-cams-'));
  try {
    const layouts = join(dir, 'bottles.json');
    writeFileSync(
      layouts,
      serializeLayoutSet(sampleLayoutSet({ task: 'bottles-in-the-bin', tiers: [1], perTier: 1, seed: 11 })),
    );
    const model = join(dir, 'policy.onnx');
    const cameras = (['cam_high', 'cam_left_wrist', 'cam_right_wrist'] as const).map(
      (c) => ({ name: c, camera: c, layout: 'chw', dtype: 'float32', size: 32 }) as const,
    );
    writeFileSync(model, buildLinearPolicyModel({ horizon: 10, seed: 3, cameras, steadyGrippers: 1 }).bytes);
    const cfg = join(dir, 'cell.json');
    writeFileSync(cfg, JSON.stringify({ type: 'yam-cell', replyDeadlineMs: 350 }));
    const r = await runTandem([
      'rig',
      'rollout',
      '--policy',
      `onnx:${model}`,
      '--layouts',
      layouts,
      '--layout',
      '0',
      '--seconds',
      '1',
      '--camera-fps',
      '5',
      '--rig-config',
      cfg,
      '--data',
      join(dir, 'data'),
      '--json',
    ]);
    assert.equal(r.code, 0, r.stdout + r.stderr);
    const j = JSON.parse(r.stdout);
    const ep = await readIndexed(j.episodeFile);
    for (const cam of ['cam_high', 'cam_left_wrist', 'cam_right_wrist']) {
      const frames = ep.byTopic.get(cameraTopic(cam));
      assert.ok(frames && frames.length >= 2, `${cam}: ${frames?.length ?? 0} frames recorded`);
      const img = frames[0].message as { format: string; data: Uint8Array; header: { frame_id: string } };
      assert.equal(img.format, 'jpeg');
      assert.equal(img.header.frame_id, cam);
      const meta = await sharp(img.data).metadata();
      assert.equal(meta.format, 'jpeg');
      assert.equal(meta.width, 224);
    }
    const counters = ep.metadata.get('tandem.episode.end')!.get('camera.cam_high');
    assert.ok(counters && JSON.parse(counters).received >= 2, 'the camera counters are in the end record');
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});
