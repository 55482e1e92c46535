import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import {
  existsSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  rmSync,
  statSync,
  truncateSync,
  writeFileSync,
  copyFileSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { DuckDBInstance } from '@duckdb/node-api';
import { parquetMetadataAsync } from 'hyparquet';
import { exportLeRobot, ExportError } from '../../src/record/lerobot-export.js';
import {
  CAMERAS,
  greyOf,
  HEIGHT,
  newestAtOrBefore,
  WIDTH,
  writeSyntheticEpisode,
  type SyntheticEpisode,
} from './synthetic-episode.js';
import { jointNames } from '../../src/record/episode-format.js';
import { yamRigModel } from '../../src/rig/yam.js';

const FPS = 30;

async function query(sql: string): Promise<Record<string, unknown>[]> {
  const db = await DuckDBInstance.create(':memory:');
  const c = await db.connect();
  try {
    return (await c.runAndReadAll(sql)).getRowObjectsJson() as Record<string, unknown>[];
  } finally {
    c.closeSync();
  }
}

function ffprobe(file: string): {
  codec_name: string;
  width: number;
  height: number;
  nb_read_frames: string;
  r_frame_rate: string;
} {
  const r = spawnSync(
    'ffprobe',
    [
      '-v',
      'error',
      '-select_streams',
      'v:0',
      '-count_frames',
      '-show_entries',
      'stream=codec_name,width,height,nb_read_frames,r_frame_rate',
      '-of',
      'json',
      file,
    ],
    { encoding: 'utf8' },
  );
  assert.equal(r.status, 0, r.stderr);
  return JSON.parse(r.stdout).streams[0];
}

/** Mean grey level of every decoded frame of a video. */
function decodedGreys(file: string): number[] {
  const r = spawnSync('ffmpeg', ['-v', 'error', '-i', file, '-f', 'rawvideo', '-pix_fmt', 'gray', 'pipe:1'], {
    maxBuffer: 1 << 28,
  });
  assert.equal(r.status, 0, String(r.stderr));
  const size = WIDTH * HEIGHT;
  const out: number[] = [];
  for (let f = 0; f * size < r.stdout.length; f++) {
    let s = 0;
    for (let i = f * size; i < (f + 1) * size; i++) s += r.stdout[i];
    out.push(s / size);
  }
  return out;
}

/** The ticks the export promises: from the first instant every stream has a sample, every 1/fps. */
function expectedTicks(ep: SyntheticEpisode, fps: number): { startS: number; times: number[] } {
  const firsts = [ep.stateTimesS[0], ep.commandTimesS[0], ...Object.values(ep.frames).map((f) => f.timesS[0])];
  const lasts = [
    ep.stateTimesS.at(-1)!,
    ep.commandTimesS.at(-1)!,
    ...Object.values(ep.frames).map((f) => f.timesS.at(-1)!),
  ];
  const startS = Math.max(...firsts);
  const endS = Math.min(...lasts);
  const times: number[] = [];
  for (let k = 0; startS + k / fps <= endS + 1e-9; k++) times.push(startS + k / fps);
  return { startS, times };
}

test('two episodes with three cameras export to a LeRobot v3.0 dataset that DuckDB, hyparquet and ffprobe read back', async () => {
  const dir = mkdtempSync(join(tmpdir(), 'tandem-lerobot-'));
  try {
    const a = join(dir, 'a.mcap');
    const b = join(dir, 'b.mcap');
    const epA = await writeSyntheticEpisode({
      file: a,
      durationS: 2.5,
      cameraPhaseS: 0.011,
      metadata: { prompt: 'put the bottles in the bin', task: 'bottles-in-the-bin', robot_type: 'yam-bimanual' },
    });
    // In B the operator took over from 1 s to 2 s: those frames are the correction (HG-DAgger's intervention label).
    const epB = await writeSyntheticEpisode({
      file: b,
      durationS: 3.0,
      cameraPhaseS: 0.019,
      metadata: { task: 'flip the mug' },
      takeover: [1, 2],
    });
    const out = join(dir, 'dataset');
    const report = await exportLeRobot({ episodes: [a, b], out, fps: FPS });
    assert.ok(!existsSync(`${out}.partial`), 'the partial folder is renamed away');

    const ticksA = expectedTicks(epA, FPS);
    const ticksB = expectedTicks(epB, FPS);
    const lengths = [ticksA.times.length, ticksB.times.length];
    const total = lengths[0] + lengths[1];
    assert.deepEqual(
      report.episodes.map((e) => e.frames),
      lengths,
    );
    assert.ok(lengths[0] >= 70 && lengths[1] >= 85, `episodes of ~2.5 s and ~3 s at 30 fps, got ${lengths}`);

    // info.json
    const info = JSON.parse(readFileSync(join(out, 'meta', 'info.json'), 'utf8'));
    assert.equal(info.codebase_version, 'v3.0');
    assert.equal(info.fps, FPS);
    assert.equal(info.robot_type, 'yam-bimanual');
    assert.equal(info.total_episodes, 2);
    assert.equal(info.total_frames, total);
    assert.equal(info.total_tasks, 2);
    assert.deepEqual(info.splits, { train: '0:2' });
    assert.equal(info.data_path, 'data/chunk-{chunk_index:03d}/file-{file_index:03d}.parquet');
    assert.equal(info.video_path, 'videos/{video_key}/chunk-{chunk_index:03d}/file-{file_index:03d}.mp4');
    const names = jointNames(yamRigModel());
    assert.deepEqual(info.features['observation.state'], { dtype: 'float32', shape: [14], names });
    assert.deepEqual(info.features.action, { dtype: 'float32', shape: [14], names });
    for (const k of ['frame_index', 'episode_index', 'index', 'task_index', 'intervention'])
      assert.deepEqual(info.features[k], { dtype: 'int64', shape: [1], names: null });
    assert.equal(info.features.timestamp.dtype, 'float32');
    for (const cam of CAMERAS) {
      const f = info.features[`observation.images.${cam}`];
      assert.equal(f.dtype, 'video');
      assert.deepEqual(f.shape, [HEIGHT, WIDTH, 3]);
      assert.deepEqual(f.names, ['height', 'width', 'channels']);
      assert.equal(f.info['video.fps'], FPS);
      assert.equal(f.info['video.codec'], 'av1');
    }

    // tasks.parquet: task text → index, in order of first use; pandas restores `task` as the index.
    const tasks = await query(
      `select task, task_index from read_parquet('${join(out, 'meta', 'tasks.parquet')}') order by task_index`,
    );
    assert.deepEqual(tasks, [
      { task: 'put the bottles in the bin', task_index: '0' },
      { task: 'flip the mug', task_index: '1' },
    ]);

    // data parquet: one row per tick, episodes back to back, global index continuous.
    const data = join(out, 'data', 'chunk-000', 'file-000.parquet');
    const rows = await query(`select * from read_parquet('${data}') order by "index"`);
    assert.equal(rows.length, total);
    rows.forEach((r, i) => assert.equal(Number(r.index), i, 'index runs 0..N-1 without a hole'));
    const eps: [SyntheticEpisode, ReturnType<typeof expectedTicks>][] = [
      [epA, ticksA],
      [epB, ticksB],
    ];
    let row = 0;
    for (const [e, [ep, ticks]] of eps.entries()) {
      for (let k = 0; k < ticks.times.length; k++, row++) {
        const r = rows[row] as {
          episode_index: string;
          frame_index: string;
          task_index: string;
          intervention: string;
          timestamp: number;
          'observation.state': number[];
          action: number[];
        };
        assert.equal(
          Number(r.intervention),
          e === 1 && ticks.times[k] >= 1 && ticks.times[k] < 2 ? 1 : 0,
          `episode ${e} frame ${k} at ${ticks.times[k]} s`,
        );
        assert.equal(Number(r.episode_index), e);
        assert.equal(Number(r.frame_index), k);
        assert.equal(Number(r.task_index), e);
        assert.equal(r.timestamp, Math.fround(k / FPS));
        const s = newestAtOrBefore(ep.stateTimesS, ticks.times[k]);
        const c = newestAtOrBefore(ep.commandTimesS, ticks.times[k]);
        assert.deepEqual(
          r['observation.state'],
          ep.states[s].map(Math.fround),
          `episode ${e} frame ${k}: the newest joint state at or before the tick`,
        );
        assert.deepEqual(
          r.action,
          ep.commands[c].map(Math.fround),
          `episode ${e} frame ${k}: the newest applied command at or before the tick`,
        );
      }
    }

    // A second, independent reader agrees on the row count and the column types.
    const bytes = readFileSync(data);
    const md = await parquetMetadataAsync(bytes.buffer.slice(bytes.byteOffset, bytes.byteOffset + bytes.byteLength));
    assert.equal(Number(md.num_rows), total);
    const leaves = md.schema.filter((s) => s.type).map((s) => `${s.name}:${s.type}`);
    assert.deepEqual(leaves, [
      'element:FLOAT',
      'element:FLOAT',
      'timestamp:FLOAT',
      'frame_index:INT64',
      'episode_index:INT64',
      'index:INT64',
      'task_index:INT64',
      'intervention:INT64',
    ]);

    // episodes parquet: boundaries, tasks, video times.
    const episodes = await query(
      `select * from read_parquet('${join(out, 'meta', 'episodes', 'chunk-000', 'file-000.parquet')}') order by episode_index`,
    );
    assert.equal(episodes.length, 2);
    assert.deepEqual(
      episodes.map((e) => [e.episode_index, e.length, e.dataset_from_index, e.dataset_to_index]),
      [
        ['0', String(lengths[0]), '0', String(lengths[0])],
        ['1', String(lengths[1]), String(lengths[0]), String(total)],
      ],
    );
    assert.deepEqual(
      episodes.map((e) => e.tasks),
      [['put the bottles in the bin'], ['flip the mug']],
    );
    for (const cam of CAMERAS) {
      const key = `videos/observation.images.${cam}`;
      assert.deepEqual(
        episodes.map((e) => [e[`${key}/from_timestamp`], e[`${key}/to_timestamp`]]),
        [
          [0, lengths[0] / FPS],
          [lengths[0] / FPS, total / FPS],
        ],
      );
    }
    assert.deepEqual(
      episodes.map((e) => e['stats/observation.state/count']),
      [[String(lengths[0])], [String(lengths[1])]],
    );

    // Videos: one frame per tick, the frame the tick took (its grey level says which).
    for (const cam of CAMERAS) {
      const file = join(out, 'videos', `observation.images.${cam}`, 'chunk-000', 'file-000.mp4');
      const p = ffprobe(file);
      assert.equal(p.codec_name, 'av1');
      assert.equal(Number(p.nb_read_frames), total, `${cam}: one video frame per dataset frame`);
      assert.equal([p.width, p.height].join('x'), `${WIDTH}x${HEIGHT}`);
      assert.equal(p.r_frame_rate, `${FPS}/1`);
      const greys = decodedGreys(file);
      const expected = eps.flatMap(([ep, ticks]) =>
        ticks.times.map((t) => greyOf(ep.frames[cam].numbers[newestAtOrBefore(ep.frames[cam].timesS, t)])),
      );
      assert.equal(greys.length, expected.length);
      greys.forEach((g, i) =>
        assert.ok(
          Math.abs(g - expected[i]) < 4,
          `${cam} video frame ${i}: grey ${g.toFixed(1)}, the recorded frame it took is ${expected[i]}`,
        ),
      );
    }

    // stats.json: LeRobot's keys and shapes, and numbers that are the data's.
    const stats = JSON.parse(readFileSync(join(out, 'meta', 'stats.json'), 'utf8'));
    const allStates = rows.map((r) => r['observation.state'] as number[]);
    for (const j of [0, 7, 13]) {
      const col = allStates.map((s) => s[j]);
      const mean = col.reduce((x, y) => x + y, 0) / col.length;
      assert.ok(Math.abs(stats['observation.state'].mean[j] - mean) < 1e-9);
      assert.equal(stats['observation.state'].min[j], Math.min(...col));
      assert.equal(stats['observation.state'].max[j], Math.max(...col));
      const std = Math.sqrt(col.reduce((x, y) => x + (y - mean) ** 2, 0) / col.length);
      assert.ok(Math.abs(stats['observation.state'].std[j] - std) < 1e-9);
    }
    assert.deepEqual(stats['observation.state'].count, [total]);
    assert.deepEqual(stats.index, {
      min: [0],
      max: [total - 1],
      mean: [(total - 1) / 2],
      std: [stats.index.std[0]],
      count: [total],
    });
    const img = stats['observation.images.cam_high'];
    assert.equal(img.mean.length, 3);
    assert.deepEqual(img.mean[0].length, 1);
    assert.ok(
      img.min[0][0][0] >= 0 && img.max[0][0][0] <= 1 && img.min[0][0][0] < img.max[0][0][0],
      'image stats are per channel, scaled to [0, 1]',
    );
    assert.deepEqual(img.count, [total], 'LeRobot samples every frame of an episode shorter than 100 frames');
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});

test('a camera that stops for longer than the gap limit ends its episode there; a dropped frame is repeated and counted', async () => {
  const dir = mkdtempSync(join(tmpdir(), 'tandem-lerobot-gap-'));
  try {
    const a = join(dir, 'a.mcap');
    // cam_high misses frames 30..59 (a second, from ~1 s) and cam_left_wrist misses frame 10 only.
    const ep0 = await writeSyntheticEpisode({
      file: a,
      durationS: 3,
      metadata: { task: 'pick' },
      dropFrames: [
        ['cam_high', 30, 30],
        ['cam_left_wrist', 10, 2],
      ],
    });
    const out = join(dir, 'ds');
    const report = await exportLeRobot({ episodes: [a], out, fps: FPS });
    const [ep] = report.episodes;
    assert.match(ep.cut ?? '', /camera cam_high had nothing new for 1\.0\d s/);
    // The cut falls where the gap began: no frame after cam_high's last frame went stale.
    const lastFrameS = 0.011 + 29 / 30 + 0.003 * Math.sin(29 * 2.3);
    const endS = ep.startInFileS + (ep.frames - 1) / FPS;
    assert.ok(
      endS <= lastFrameS + 1.5 / 30 + 1e-9 && endS > lastFrameS,
      `the episode ends ${endS.toFixed(3)} s, just after the last frame before the gap at ${lastFrameS.toFixed(3)} s`,
    );
    // Late ticks: those whose newest cam_left_wrist frame is older than 1.5 of its median periods.
    const wrist = ep0.frames.cam_left_wrist.timesS;
    const gaps = wrist
      .slice(1)
      .map((t, i) => t - wrist[i])
      .sort((x, y) => x - y);
    const m = gaps.length >> 1;
    const period = gaps.length % 2 ? gaps[m] : (gaps[m - 1] + gaps[m]) / 2;
    let late = 0;
    for (let k = 0; k < ep.frames; k++) {
      const t = ep.startInFileS + k / FPS;
      if (t - wrist[newestAtOrBefore(wrist, t)] > 1.5 * period) late += 1;
    }
    assert.ok(late >= 1, 'two dropped frames leave at least one tick with a stale frame');
    assert.equal(ep.lateTicks['camera cam_left_wrist'], late, 'each tick that repeated a stale frame is counted');
    const info = JSON.parse(readFileSync(join(out, 'meta', 'info.json'), 'utf8'));
    assert.equal(info.total_frames, ep.frames);
    assert.equal(
      Number(ffprobe(join(out, 'videos', 'observation.images.cam_high', 'chunk-000', 'file-000.mp4')).nb_read_frames),
      ep.frames,
    );
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});

test('code-policy sim episodes without cameras export as a dataset without video features', async () => {
  const dir = mkdtempSync(join(tmpdir(), 'tandem-lerobot-sim-'));
  try {
    const a = join(dir, 'sim.mcap');
    const ep = await writeSyntheticEpisode({
      file: a,
      durationS: 1,
      cameras: [],
      metadata: { task: 'bottles-in-the-bin' },
    });
    const out = join(dir, 'ds');
    const report = await exportLeRobot({ episodes: [a], out, fps: 50, ffmpeg: '/nonexistent/ffmpeg' });
    const info = JSON.parse(readFileSync(join(out, 'meta', 'info.json'), 'utf8'));
    assert.equal(info.video_path, null);
    assert.deepEqual(Object.keys(info.features), [
      'observation.state',
      'action',
      'timestamp',
      'frame_index',
      'episode_index',
      'index',
      'task_index',
      'intervention',
    ]);
    assert.ok(!existsSync(join(out, 'videos')));
    const last = newestAtOrBefore(ep.stateTimesS, ep.stateTimesS.at(-1)!);
    assert.equal(report.totalFrames, Math.floor((ep.stateTimesS[last] - ep.commandTimesS[0]) * 50 + 1e-6) + 1);
    const rows = await query(
      `select count(*) as n from read_parquet('${join(out, 'data', 'chunk-000', 'file-000.parquet')}')`,
    );
    assert.equal(Number(rows[0].n), report.totalFrames);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});

test('bad input is refused with one sentence and leaves no dataset behind', async () => {
  const dir = mkdtempSync(join(tmpdir(), 'tandem-lerobot-bad-'));
  try {
    const good = join(dir, 'good.mcap');
    await writeSyntheticEpisode({ file: good, durationS: 1, metadata: { task: 'pick' } });
    const noCams = join(dir, 'nocams.mcap');
    await writeSyntheticEpisode({ file: noCams, durationS: 1, cameras: [], metadata: { task: 'pick' } });
    const cut = join(dir, 'cut.mcap');
    copyFileSync(good, cut);
    truncateSync(cut, Math.floor(statSync(good).size * 0.6));
    const bigger = join(dir, 'bigger.mcap');
    await writeSyntheticEpisode({
      file: bigger,
      durationS: 1,
      size: { width: 128, height: 96 },
      metadata: { task: 'pick' },
    });
    const noTask = join(dir, 'notask.mcap');
    await writeSyntheticEpisode({ file: noTask, durationS: 1, cameras: [] });

    const refuses = async (
      episodes: string[],
      out: string,
      pattern: RegExp,
      extra: Partial<Parameters<typeof exportLeRobot>[0]> = {},
    ): Promise<void> => {
      await assert.rejects(exportLeRobot({ episodes, out, fps: FPS, ...extra }), (e: unknown) => {
        assert.ok(e instanceof ExportError, String(e));
        assert.match(e.message, pattern);
        return true;
      });
      assert.ok(!existsSync(`${out}.partial`), 'no partial folder is left');
    };
    const out = join(dir, 'ds');
    await refuses([good, cut], out, /cut off .*tandem record recover .*cut\.mcap/);
    assert.ok(!existsSync(out));
    await refuses([good, noCams], out, /same cameras/);
    // Found while encoding (the second pass), after the partial folder was made: it goes too.
    await refuses([good, bigger], out, /camera cam_high has 128×96 frames where the dataset's are 96×64/);
    await refuses([noTask], out, /--task TEXT/);
    await refuses([good], out, /ffmpeg was not found/, { ffmpeg: '/nonexistent/ffmpeg' });
    await refuses([good], out, /below the dataset's 60 fps/, { fps: 60 });
    assert.ok(!existsSync(out));

    mkdirSync(out);
    writeFileSync(join(out, 'keep.txt'), 'mine');
    await refuses([good], out, /exists and is not empty/);
    assert.deepEqual(readdirSync(out), ['keep.txt'], 'a folder that was there is left as it was');

    // With --task the untitled episode exports.
    const ok = join(dir, 'ok');
    const r = await exportLeRobot({ episodes: [noTask], out: ok, task: 'stack the cups' });
    assert.deepEqual(r.tasks, ['stack the cups']);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});
