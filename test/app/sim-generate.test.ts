import { test } from 'node:test';
import assert from 'node:assert/strict';
import { appendFileSync, existsSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { asyncBufferFromFile, parquetReadObjects } from 'hyparquet';
import { sampleLayoutSet, serializeLayoutSet } from '../../src/layouts/layout-set.js';
import { runInProcess as tandem } from '../helpers/cli.js';

const set = sampleLayoutSet({ task: 'bottles-in-the-bin', tiers: [1], perTier: 2, seed: 3 });
const readParquet = async (file: string): Promise<Record<string, unknown>[]> =>
  parquetReadObjects({ file: await asyncBufferFromFile(file) });
const attempts = (dir: string): { attempt: number; kept: boolean; file?: string; reason?: string }[] =>
  readFileSync(join(dir, 'attempts.jsonl'), 'utf8')
    .trim()
    .split('\n')
    .map((l) => JSON.parse(l));

test('sim generate keeps episodes into MCAPs and a LeRobot dataset with their source, and resumes after a kill with no duplicate or missing episode', async () => {
  const dir = mkdtempSync(join(tmpdir(), 'tandem-generate-'));
  try {
    writeFileSync(join(dir, 'set.json'), serializeLayoutSet(set));
    const base = [
      'sim',
      'generate',
      '--policy',
      'code:bottles-in-the-bin',
      '--layouts',
      'set.json',
      '--seconds',
      '3',
      '--out',
      'gen',
    ];
    const first = await tandem([...base, '--episodes', '2', '--json'], dir);
    assert.equal(first.code, 0, first.stderr);
    assert.deepEqual(
      attempts(join(dir, 'gen')).map((a) => [a.attempt, a.kept]),
      [
        [0, true],
        [1, true],
      ],
    );

    // A kill leaves a half-written file, a finished file whose line was never written, or half a line: each attempt is made again.
    const episodes = join(dir, 'gen', 'episodes');
    writeFileSync(join(episodes, 'attempt-000002-L0.mcap.partial'), 'half');
    writeFileSync(join(episodes, 'attempt-000002-L0.mcap'), 'unlisted');
    appendFileSync(join(dir, 'gen', 'attempts.jsonl'), '{"attempt": 2, "layoutIn');
    const resumed = await tandem([...base, '--episodes', '3'], dir);
    assert.equal(resumed.code, 0, resumed.stderr);
    assert.match(resumed.stderr, /^Resuming .*gen: 2 kept of 2 attempts, 2 unfinished files dropped\.\n/);
    const lines = attempts(join(dir, 'gen'));
    assert.deepEqual(
      lines.map((a) => a.attempt),
      [0, 1, 2],
    );
    assert.deepEqual(readdirSync(episodes).sort(), lines.map((a) => a.file).sort());
    assert.match(
      resumed.stdout,
      /^3 episodes kept of 3 attempts; LeRobot v3\.0 dataset .*lerobot: \d+ frames at 30 fps\.\n$/,
    );

    // The dataset, read back by an independent Parquet reader.
    const ds = join(dir, 'gen', 'lerobot');
    const info = JSON.parse(readFileSync(join(ds, 'meta', 'info.json'), 'utf8'));
    assert.equal(info.codebase_version, 'v3.0');
    assert.equal(info.fps, 30);
    assert.equal(info.total_episodes, 3);
    const eps = await readParquet(join(ds, 'meta', 'episodes', 'chunk-000', 'file-000.parquet'));
    assert.deepEqual(
      eps.map((e) => e['tandem/source']),
      ['sim-privileged', 'sim-privileged', 'sim-privileged'],
    );
    assert.deepEqual(
      eps.map((e) => String(e['tandem/source_file']).split('/').at(-1)),
      lines.map((a) => a.file),
    );
    const frames = await readParquet(join(ds, 'data', 'chunk-000', 'file-000.parquet'));
    assert.equal(frames.length, info.total_frames);
    assert.deepEqual([...new Set(frames.map((f) => Number(f.episode_index)))], [0, 1, 2]);
    // 3 s at 30 fps per episode (the resampler may drop the last tick).
    assert.ok(
      eps.every((e) => Number(e.length) >= 85 && Number(e.length) <= 90),
      eps.map((e) => Number(e.length)).join(', '),
    );
    assert.equal((frames[0]['observation.state'] as number[]).length, 14);

    const other = await tandem(
      [
        'sim',
        'generate',
        '--policy',
        'code:hold',
        '--layouts',
        'set.json',
        '--seconds',
        '3',
        '--out',
        'gen',
        '--episodes',
        '4',
      ],
      dir,
    );
    assert.equal(other.code, 2);
    assert.match(
      other.stderr,
      /gen holds a generation with another policy; resume it with its own arguments, or generate into a new --out\.\n$/,
    );
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});

test('--success-only with a policy that never succeeds stops after a bound and says so; --cameras is refused', async () => {
  const dir = mkdtempSync(join(tmpdir(), 'tandem-generate-'));
  try {
    writeFileSync(join(dir, 'set.json'), serializeLayoutSet(set));
    const r = await tandem(
      [
        'sim',
        'generate',
        '--policy',
        'code:hold',
        '--layouts',
        'set.json',
        '--seconds',
        '1',
        '--episodes',
        '2',
        '--success-only',
        '--max-attempts',
        '3',
        '--out',
        'gen',
      ],
      dir,
    );
    assert.equal(r.code, 1);
    assert.match(
      r.stderr,
      /Stopped after 3 attempts: only 0 of 2 episodes passed \(3 × not a success \(progress P\)\), so code:hold rarely passes here; lower --episodes, relax --success-only\/--min-progress, or raise --max-attempts\.\n$/,
    );
    assert.equal(existsSync(join(dir, 'gen', 'lerobot')), false, 'no dataset from no episodes');
    const cams = await tandem(
      [
        'sim',
        'generate',
        '--policy',
        'code:hold',
        '--layouts',
        'set.json',
        '--episodes',
        '1',
        '--out',
        'g2',
        '--cameras',
        'cam_high',
      ],
      dir,
    );
    assert.equal(cams.code, 2);
    assert.match(cams.stderr, /^--cameras: this version does not render the sim cameras into generated episodes yet/);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});
