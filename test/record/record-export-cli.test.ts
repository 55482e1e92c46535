import { test } from 'node:test';
import assert from 'node:assert/strict';
import { copyFileSync, existsSync, mkdtempSync, readFileSync, rmSync, statSync, truncateSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { runTandem } from '../helpers/cli.js';
import { writeSyntheticEpisode } from './synthetic-episode.js';

test('tandem record export writes a dataset, and a cut-off episode file gets the recover hint in one sentence', async () => {
  const dir = mkdtempSync(join(tmpdir(), 'tandem-export-cli-'));
  try {
    const a = join(dir, 'a.mcap');
    await writeSyntheticEpisode({
      file: a,
      durationS: 1.5,
      cameras: ['cam_high'],
      metadata: { prompt: 'pick up the cup' },
    });
    const out = join(dir, 'ds');
    const ok = await runTandem(['record', 'export', '--format', 'lerobot', '--out', out, '--codec', 'h264', a]);
    assert.equal(ok.code, 0, ok.stderr);
    assert.match(ok.stdout, /episode 0: .*a\.mcap → \d+ frames/);
    assert.match(
      ok.stdout,
      /Wrote .*ds: LeRobot v3\.0, 1 episodes, \d+ frames at 30 fps, 1 tasks, 1 camera videos \(h264\)/,
    );
    const info = JSON.parse(readFileSync(join(out, 'meta', 'info.json'), 'utf8'));
    assert.equal(info.features['observation.images.cam_high'].info['video.codec'], 'h264');

    const cut = join(dir, 'cut.mcap');
    copyFileSync(a, cut);
    truncateSync(cut, Math.floor(statSync(a).size / 2));
    const out2 = join(dir, 'ds2');
    const bad = await runTandem(['record', 'export', '--format', 'lerobot', '--out', out2, cut]);
    assert.equal(bad.code, 2);
    assert.match(
      bad.stderr,
      /cut\.mcap is cut off .*; recover its readable part first with `tandem record recover .*cut\.mcap` and export the recovered file\./,
    );
    assert.equal(bad.stderr.trim().split('\n').length, 1, 'one sentence, no stack');
    assert.ok(!existsSync(out2) && !existsSync(`${out2}.partial`));

    const wrongFormat = await runTandem(['record', 'export', '--format', 'rlds', '--out', out2, a]);
    assert.equal(wrongFormat.code, 2);
    assert.match(wrongFormat.stderr, /--format rlds is not one tandem writes/);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});
