import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, readFileSync, rmSync, writeFileSync, existsSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import sharp from 'sharp';
import { PjlinkEmulator } from '../../drivers/projector/pjlink-emulator.js';
import { PROJECT_ROOT } from '../helpers/cli.js';
import { runInProcess as tandem } from '../helpers/cli.js';

const POINTS = join(PROJECT_ROOT, 'test/fixtures/projector/points.json');

function inTemp(fn: (dir: string) => Promise<void>): () => Promise<void> {
  return async () => {
    const dir = mkdtempSync(join(tmpdir(), 'tandem-projector-cli-'));
    try {
      await fn(dir);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  };
}

test(
  "calibrate prints each point's error in mm and the RMS, writes a hashed record and the crosshair image",
  inTemp(async (dir) => {
    const r = await tandem(
      ['projector', 'calibrate', '--points', POINTS, '-o', 'calib.json', '--crosshairs-png', 'cross.png'],
      dir,
    );
    assert.equal(r.code, 0, r.stderr);
    assert.match(r.stdout, /from 13 points:/);
    assert.match(r.stdout, /^ {3}1 {2}far-left corner .* error \d+\.\d\d mm {2}\d+\.\d\d px$/m);
    assert.match(r.stdout, /RMS \d+\.\d\d mm \(\d+\.\d\d px\), worst \d+\.\d\d mm/);
    const calib = JSON.parse(readFileSync(join(dir, 'calib.json'), 'utf8')) as {
      sha256: string;
      kind: string;
      resolution: { widthPx: number };
    };
    assert.equal(calib.kind, 'projector');
    assert.match(r.stdout, new RegExp(`sha256 ${calib.sha256}`));
    const meta = await sharp(join(dir, 'cross.png')).metadata();
    assert.deepEqual([meta.width, meta.height], [1920, 1080]);
    // Running again keeps what is there.
    const again = await tandem(['projector', 'calibrate', '--points', POINTS, '-o', 'calib.json'], dir);
    assert.equal(again.code, 2);
    assert.match(again.stderr, /^calib\.json already exists; choose another name or add --force/);
  }),
);

test(
  'calibrate refuses too few and collinear points in one sentence and writes no calibration',
  inTemp(async (dir) => {
    const pts = JSON.parse(readFileSync(POINTS, 'utf8')) as { points: unknown[] };
    writeFileSync(join(dir, 'three.json'), JSON.stringify({ points: pts.points.slice(0, 3) }));
    const r = await tandem(['projector', 'calibrate', '--points', 'three.json', '-o', 'calib.json'], dir);
    assert.equal(r.code, 2);
    assert.equal(r.stderr.trim().split('\n').length, 1);
    assert.match(r.stderr, /needs at least 4 point pairs and got 3/);
    assert.equal(existsSync(join(dir, 'calib.json')), false);
    const line = [0, 1, 2, 3, 4].map((i) => ({ tableMm: [-400 + 200 * i, 0], projectorPx: [400 + 200 * i, 500 + i] }));
    writeFileSync(join(dir, 'line.json'), JSON.stringify(line));
    const l = await tandem(['projector', 'calibrate', '--points', 'line.json', '-o', 'calib.json'], dir);
    assert.equal(l.code, 2);
    assert.match(l.stderr, /table points lie on \(or very near\) one line/);
  }),
);

test(
  'show writes the footprints frame at the projector resolution and unmutes a PJLink projector; --blank mutes it',
  inTemp(async (dir) => {
    assert.equal((await tandem(['projector', 'calibrate', '--points', POINTS, '-o', 'calib.json'], dir)).code, 0);
    assert.equal(
      (
        await tandem(
          ['layouts', 'sample', '--task', 'bottles-in-the-bin', '--per-tier', '1', '--seed', '3', '-o', 'set.json'],
          dir,
        )
      ).code,
      0,
    );
    const emu = new PjlinkEmulator({ poweredOn: true, password: 'pj' });
    const port = await emu.start();
    try {
      const env = { TANDEM_PJLINK_PASSWORD: 'pj' };
      const b = await tandem(
        ['projector', 'show', '--blank', '--calibration', 'calib.json', '--pjlink', `127.0.0.1:${port}`],
        dir,
        env,
      );
      assert.equal(b.code, 0, b.stderr);
      assert.equal(emu.state().avMuted, true);
      const r = await tandem(
        [
          'projector',
          'show',
          '--layouts',
          'set.json',
          '--layout',
          '2',
          '--calibration',
          'calib.json',
          '-o',
          'frame.png',
          '--pjlink',
          `127.0.0.1:${port}`,
        ],
        dir,
        env,
      );
      assert.equal(r.code, 0, r.stderr);
      assert.match(
        r.stdout,
        /^Layout 2 \(tier 3, \d objects\) through calibration [0-9a-f]{12}, projector unmuted: frame\.png\.$/m,
      );
      assert.equal(emu.state().avMuted, false);
      const meta = await sharp(join(dir, 'frame.png')).metadata();
      assert.deepEqual([meta.width, meta.height], [1920, 1080]);
      const s = await tandem(['projector', 'status', '--pjlink', `127.0.0.1:${port}`], dir, env);
      assert.match(s.stdout, /: on, AV mute off, input 31; no faults\./);
      const wrong = await tandem(['projector', 'status', '--pjlink', `127.0.0.1:${port}`], dir, {
        TANDEM_PJLINK_PASSWORD: 'nope',
      });
      assert.equal(wrong.code, 3);
      assert.match(wrong.stderr, /refused the PJLink password/);
    } finally {
      await emu.close();
    }
  }),
);

test(
  'show refuses an edited calibration and writes nothing',
  inTemp(async (dir) => {
    assert.equal((await tandem(['projector', 'calibrate', '--points', POINTS, '-o', 'calib.json'], dir)).code, 0);
    assert.equal(
      (
        await tandem(
          ['layouts', 'sample', '--task', 'bottles-in-the-bin', '--per-tier', '1', '--seed', '3', '-o', 'set.json'],
          dir,
        )
      ).code,
      0,
    );
    const text = readFileSync(join(dir, 'calib.json'), 'utf8');
    writeFileSync(join(dir, 'edited.json'), text.replace(/"widthPx": 1920/, '"widthPx": 1280'));
    const r = await tandem(
      [
        'projector',
        'show',
        '--layouts',
        'set.json',
        '--layout',
        '0',
        '--calibration',
        'edited.json',
        '-o',
        'frame.png',
      ],
      dir,
    );
    assert.equal(r.code, 2);
    assert.match(r.stderr, /^edited\.json does not match its hash .* calibrate again rather than editing the file\.$/m);
    assert.equal(existsSync(join(dir, 'frame.png')), false);
  }),
);
