/**
 * The LeRobot v3.0 dataset's files once its episodes are resampled and their videos encoded: the
 * frame table (data/) and meta/ (info.json, stats.json, tasks and episodes parquet).
 */
import { mkdir, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import type { EpisodeStreams } from './episode-streams.js';
import { aggregateStats, statsJson, type FeatureStats } from './lerobot-stats.js';
import { writeParquetFile, type Column } from './parquet.js';
import type { Resampled } from './resample.js';
import { codecName, type VideoCodec } from './video-encoder.js';
import { episodeSource } from './episode-source.js';

export const LEROBOT_CODEBASE_VERSION = 'v3.0';
const DATA_PATH = 'data/chunk-{chunk_index:03d}/file-{file_index:03d}.parquet';
const VIDEO_PATH = 'videos/{video_key}/chunk-{chunk_index:03d}/file-{file_index:03d}.mp4';
/** LeRobot's defaults; this export writes chunk 0, file 0 of each. */
const CHUNKS_SIZE = 1000;

export interface ExportedEpisode {
  readonly episodeIndex: number;
  readonly file: string;
  readonly task: string;
  readonly frames: number;
  /** Seconds from the file's first message to the episode's first frame. */
  readonly startInFileS: number;
  /** Ticks that repeated an old sample, per stream (only streams with any). */
  readonly lateTicks: Readonly<Record<string, number>>;
  /** Why the episode ends before its file does, in words. */
  readonly cut: string | undefined;
  /** Frames the operator drove (an HG-DAgger correction); 0 where nobody took over. */
  readonly interventionFrames: number;
}

export const videoKey = (camera: string): string => `observation.images.${camera}`;

export interface EpisodePlan {
  readonly streams: EpisodeStreams;
  readonly task: string;
  readonly taskIndex: number;
  readonly ticks: Resampled;
}

export interface EpisodeOutput {
  readonly state: Float32Array;
  readonly action: Float32Array;
  /** Per frame: 1 where the operator drove (a takeover), 0 where the policy did. */
  readonly intervention: Int32Array;
  readonly stats: Record<string, FeatureStats>;
}

export async function writeData(
  root: string,
  plans: readonly EpisodePlan[],
  outputs: readonly EpisodeOutput[],
  fps: number,
  width: number,
): Promise<void> {
  const state: number[][] = [];
  const action: number[][] = [];
  const timestamp: number[] = [];
  const frameIndex: number[] = [];
  const episodeIndex: number[] = [];
  const index: number[] = [];
  const taskIndex: number[] = [];
  const intervention: number[] = [];
  plans.forEach((plan, ep) => {
    const o = outputs[ep];
    for (let k = 0; k < plan.ticks.ticks; k++) {
      state.push(Array.from(o.state.subarray(k * width, (k + 1) * width)));
      action.push(Array.from(o.action.subarray(k * width, (k + 1) * width)));
      timestamp.push(Math.fround(k / fps));
      frameIndex.push(k);
      episodeIndex.push(ep);
      index.push(index.length);
      taskIndex.push(plan.taskIndex);
      intervention.push(o.intervention[k]);
    }
  });
  await mkdir(join(root, 'data', 'chunk-000'), { recursive: true });
  await writeParquetFile(join(root, 'data', 'chunk-000', 'file-000.parquet'), {
    columns: [
      { name: 'observation.state', type: 'float32', listDepth: 1, data: state },
      { name: 'action', type: 'float32', listDepth: 1, data: action },
      { name: 'timestamp', type: 'float32', data: timestamp },
      { name: 'frame_index', type: 'int64', data: frameIndex },
      { name: 'episode_index', type: 'int64', data: episodeIndex },
      { name: 'index', type: 'int64', data: index },
      { name: 'task_index', type: 'int64', data: taskIndex },
      { name: 'intervention', type: 'int64', data: intervention },
    ],
  });
}

interface MetaInput {
  readonly plans: readonly EpisodePlan[];
  readonly outputs: readonly EpisodeOutput[];
  readonly episodes: readonly ExportedEpisode[];
  readonly tasks: readonly string[];
  readonly cameras: readonly string[];
  readonly sizes: ReadonlyMap<string, { width: number; height: number }>;
  readonly fps: number;
  readonly codec: VideoCodec | undefined;
  readonly totalFrames: number;
  readonly robotType: string | null;
  readonly jointNames: readonly string[];
}

const SCALAR = (dtype: string): Record<string, unknown> => ({ dtype, shape: [1], names: null });

export async function writeMeta(root: string, m: MetaInput): Promise<void> {
  const meta = join(root, 'meta');
  await mkdir(join(meta, 'episodes', 'chunk-000'), { recursive: true });
  const even = (n: number): number => n - (n % 2); // the encoder crops odd sizes to even
  const videoFeatures = Object.fromEntries(
    m.cameras.map((cam) => {
      const size = m.sizes.get(cam)!;
      const [h, w] = [even(size.height), even(size.width)];
      const info = {
        'video.height': h,
        'video.width': w,
        'video.codec': codecName(m.codec!),
        'video.pix_fmt': 'yuv420p',
        'video.is_depth_map': false,
        'video.fps': m.fps,
        'video.channels': 3,
        has_audio: false,
      };
      return [videoKey(cam), { dtype: 'video', shape: [h, w, 3], names: ['height', 'width', 'channels'], info }];
    }),
  );
  const features = {
    'observation.state': { dtype: 'float32', shape: [m.jointNames.length], names: [...m.jointNames] },
    action: { dtype: 'float32', shape: [m.jointNames.length], names: [...m.jointNames] },
    ...videoFeatures,
    timestamp: SCALAR('float32'),
    frame_index: SCALAR('int64'),
    episode_index: SCALAR('int64'),
    index: SCALAR('int64'),
    task_index: SCALAR('int64'),
    // HG-DAgger's label: the frames a person drove are the corrections to fine-tune on.
    intervention: SCALAR('int64'),
  };
  const info = {
    codebase_version: LEROBOT_CODEBASE_VERSION,
    robot_type: m.robotType,
    total_episodes: m.plans.length,
    total_frames: m.totalFrames,
    total_tasks: m.tasks.length,
    chunks_size: CHUNKS_SIZE,
    data_files_size_in_mb: 100,
    video_files_size_in_mb: 500,
    fps: m.fps,
    splits: { train: `0:${m.plans.length}` },
    data_path: DATA_PATH,
    video_path: m.cameras.length > 0 ? VIDEO_PATH : null,
    features,
  };

  // Episodes table: one row per episode, with its own stats (LeRobot's `stats/<feature>/<stat>`).
  const keys = Object.keys(m.outputs[0].stats);
  const isImage = (k: string): boolean => k.startsWith('observation.images.');
  const columns: Column[] = [
    { name: 'episode_index', type: 'int64', data: m.episodes.map((e) => e.episodeIndex) },
    { name: 'tasks', type: 'string', listDepth: 1, data: m.episodes.map((e) => [e.task]) },
    { name: 'length', type: 'int64', data: m.episodes.map((e) => e.frames) },
    { name: 'data/chunk_index', type: 'int64', data: m.episodes.map(() => 0) },
    { name: 'data/file_index', type: 'int64', data: m.episodes.map(() => 0) },
  ];
  const from: number[] = [];
  let at = 0;
  for (const e of m.episodes) {
    from.push(at);
    at += e.frames;
  }
  columns.push({ name: 'dataset_from_index', type: 'int64', data: from });
  columns.push({ name: 'dataset_to_index', type: 'int64', data: m.episodes.map((e, i) => from[i] + e.frames) });
  for (const cam of m.cameras) {
    const key = videoKey(cam);
    columns.push({ name: `videos/${key}/chunk_index`, type: 'int64', data: m.episodes.map(() => 0) });
    columns.push({ name: `videos/${key}/file_index`, type: 'int64', data: m.episodes.map(() => 0) });
    // Frame n of the concatenated video is at n / fps: an episode starts where the ones before it end.
    columns.push({ name: `videos/${key}/from_timestamp`, type: 'float64', data: from.map((f) => f / m.fps) });
    columns.push({
      name: `videos/${key}/to_timestamp`,
      type: 'float64',
      data: m.episodes.map((e, i) => (from[i] + e.frames) / m.fps),
    });
  }
  for (const k of keys) {
    const depth = isImage(k) ? 3 : 1;
    for (const stat of ['min', 'max', 'mean', 'std'] as const) {
      const shaped = (v: number[]): unknown => (isImage(k) ? v.map((x) => [[x]]) : v);
      columns.push({
        name: `stats/${k}/${stat}`,
        type: 'float64',
        listDepth: depth,
        data: m.outputs.map((o) => shaped(o.stats[k][stat])),
      });
    }
    columns.push({
      name: `stats/${k}/count`,
      type: 'int64',
      listDepth: 1,
      data: m.outputs.map((o) => [o.stats[k].count]),
    });
  }
  columns.push({ name: 'meta/episodes/chunk_index', type: 'int64', data: m.episodes.map(() => 0) });
  columns.push({ name: 'meta/episodes/file_index', type: 'int64', data: m.episodes.map(() => 0) });
  // Where each episode came from, for anyone tracing a training sample back to its recording.
  columns.push({ name: 'tandem/source_file', type: 'string', data: m.episodes.map((e) => e.file) });
  columns.push({ name: 'tandem/start_in_file_s', type: 'float64', data: m.episodes.map((e) => e.startInFileS) });
  columns.push({
    name: 'tandem/repeated_samples',
    type: 'int64',
    data: m.episodes.map((e) => Object.values(e.lateTicks).reduce((a, b) => a + b, 0)),
  });
  // Where each episode's actions came from, so a co-training mix of sim and real can be weighed or filtered.
  columns.push({ name: 'tandem/source', type: 'string', data: m.plans.map((p) => episodeSource(p.streams.metadata)) });
  await writeParquetFile(join(meta, 'episodes', 'chunk-000', 'file-000.parquet'), { columns });

  // Tasks: pandas reads the `task` column back as the frame's index (LeRobot looks tasks up by it).
  await writeParquetFile(join(meta, 'tasks.parquet'), {
    columns: [
      { name: 'task_index', type: 'int64', data: m.tasks.map((_, i) => i) },
      { name: 'task', type: 'string', data: [...m.tasks] },
    ],
    kvMetadata: [{ key: 'pandas', value: JSON.stringify(pandasIndexMetadata()) }],
  });

  const stats = Object.fromEntries(
    keys.map((k) => [k, statsJson(aggregateStats(m.outputs.map((o) => o.stats[k])), isImage(k))]),
  );
  await writeFile(join(meta, 'stats.json'), `${JSON.stringify(stats, null, 4)}\n`, { flag: 'wx' });
  // info.json last: a dataset folder with an info.json is a finished one.
  await writeFile(join(meta, 'info.json'), `${JSON.stringify(info, null, 4)}\n`, { flag: 'wx' });
}

/** The 'pandas' schema metadata pyarrow writes for a frame indexed by `task` with one int64 column. */
function pandasIndexMetadata(): Record<string, unknown> {
  return {
    index_columns: ['task'],
    column_indexes: [
      { name: null, field_name: null, pandas_type: 'unicode', numpy_type: 'object', metadata: { encoding: 'UTF-8' } },
    ],
    columns: [
      { name: 'task_index', field_name: 'task_index', pandas_type: 'int64', numpy_type: 'int64', metadata: null },
      { name: 'task', field_name: 'task', pandas_type: 'unicode', numpy_type: 'object', metadata: null },
    ],
    creator: { library: 'pyarrow', version: '17.0.0' },
    pandas_version: '2.2.3',
  };
}
