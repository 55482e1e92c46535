import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import sharp from 'sharp';
import { FfmpegCamera } from '../../drivers/cameras/ffmpeg-camera.js';
import { EpisodeRecorder } from '../../src/record/episode-recorder.js';
import { inspectEpisodeFile } from '../../src/record/inspect.js';
import { cameraTopic } from '../../src/record/episode-format.js';
import { yamRigModel } from '../../src/rig/yam.js';
import { until } from '../helpers/until.js';
import { readIndexed } from '../helpers/mcap.js';

test('two ffmpeg cameras recorded as they stream; one vanishes mid-episode: the episode goes on, the file says when and why, the other camera keeps recording', async () => {
  const dir = mkdtempSync(join(tmpdir(), 'tandem-cam-record-'));
  const nowS = (): number => performance.now() / 1000;
  const a = new FfmpegCamera({ name: 'cam_high', kind: 'testsrc', width: 320, height: 240, fps: 15 }, { nowS });
  const b = new FfmpegCamera({ name: 'cam_left_wrist', kind: 'testsrc', width: 320, height: 240, fps: 15 }, { nowS });
  try {
    await Promise.all([a.open(), b.open()]);
    const file = join(dir, 'cams.mcap');
    const rec = await EpisodeRecorder.open({
      file,
      rigModel: yamRigModel(),
      cameras: [a.info, b.info],
      metadata: { task: 'camera-test' },
      unixOffsetS: Date.now() / 1000 - nowS(),
    });
    rec.attachCamera(a, nowS);
    rec.attachCamera(b, nowS);
    await until(() => b.counters().received >= 8, 20_000);
    process.kill(b.pid!, 'SIGKILL'); // the wrist camera's cable is pulled
    await until(() => b.status === 'lost', 20_000);
    const atLoss = a.counters().received;
    await until(() => a.counters().received >= atLoss + 8, 20_000);
    const summary = await rec.close({ outcome: 'completed' });
    assert.equal(summary.status, 'finished');

    const report = await inspectEpisodeFile(file);
    const high = report.cameras.find((c) => c.camera === 'cam_high')!;
    const wrist = report.cameras.find((c) => c.camera === 'cam_left_wrist')!;
    assert.equal(high.lost, undefined);
    assert.ok(wrist.lost, 'the lost camera is marked in the file');
    assert.match(wrist.lost.reason, /cam_left_wrist .*stopped.*the episode goes on without it/);
    assert.equal(report.eventsByKind['camera-lost'], 1);
    assert.ok(
      high.frames > wrist.frames,
      `the other camera kept recording after the loss (${high.frames} vs ${wrist.frames} frames)`,
    );
    assert.equal(high.dropped, 0, "the end record carries the camera's counters");

    // Frames are the camera's own JPEG bytes, stamped on arrival, in order.
    const ep = await readIndexed(file);
    const frames = ep.byTopic.get(cameraTopic('cam_high'))!;
    const meta = await sharp((frames[0].message as { data: Uint8Array }).data).metadata();
    assert.equal(meta.format, 'jpeg');
    assert.equal(meta.width, 320);
    for (let i = 1; i < frames.length; i++) assert.ok(frames[i].logTime > frames[i - 1].logTime);
  } finally {
    await a.close();
    await b.close();
    rmSync(dir, { recursive: true, force: true });
  }
});
