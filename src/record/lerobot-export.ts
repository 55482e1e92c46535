/**
 * `tandem record export --format lerobot`: tandem episode files → one LeRobot v3.0 dataset, the
 * layout most VLA fine-tuning code reads (LeRobotDataset, openpi's data loaders):
 *
 *   meta/info.json                               features, fps, totals, path templates
 *   meta/stats.json                              per-feature stats (lerobot-stats.ts)
 *   meta/tasks.parquet                           task text → task_index
 *   meta/episodes/chunk-000/file-000.parquet     one row per episode: length, index range, video times
 *   data/chunk-000/file-000.parquet              one row per frame, every episode in one file
 *   videos/observation.images.<cam>/chunk-000/file-000.mp4   every episode's frames, concatenated
 *
 * Per frame: observation.state = the measured joint positions (14, policy order), action = the
 * command the rig applied after safety clamping, both the newest at or before the frame's tick
 * (resample.ts states the gap rule). Episodes are checked against each other before anything is
 * written (same joints, same cameras, rates at least the dataset's fps); the dataset is built in
 * DIR.partial and renamed to DIR only when complete, so an export that fails leaves nothing that
 * looks like a dataset.
 */
import { mkdir, readdir, rename, rm, rmdir, stat, writeFile } from 'node:fs/promises';
import { dirname, join } from 'node:path';
import {
  EpisodeExportError,
  readEpisodeStreams,
  streamCameraFrames,
  type EpisodeStreams,
  type JointStream,
} from './episode-streams.js';
import {
  aggregateStats,
  ImageStatsAccumulator,
  imageSampleTicks,
  statsJson,
  vectorStats,
  type FeatureStats,
} from './lerobot-stats.js';
import { writeParquetFile, type Column } from './parquet.js';
import { medianPeriodS, resample, type Resampled } from './resample.js';
import { checkFfmpeg, codecName, jpegSize, VideoEncoder, VideoEncodeError, type VideoCodec } from './video-encoder.js';

export const LEROBOT_CODEBASE_VERSION = 'v3.0';
const DATA_PATH = 'data/chunk-{chunk_index:03d}/file-{file_index:03d}.parquet';
const VIDEO_PATH = 'videos/{video_key}/chunk-{chunk_index:03d}/file-{file_index:03d}.mp4';
/** LeRobot's defaults; this export writes chunk 0, file 0 of each. */
const CHUNKS_SIZE = 1000;

export class ExportError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'ExportError';
  }
}

export interface LeRobotExportOptions {
  /** Episode files, exported in this order as episodes 0, 1, … */
  readonly episodes: readonly string[];
  /** The dataset folder; it must not exist or be empty. */
  readonly out: string;
  /** Dataset frames per second (default 30). */
  readonly fps?: number;
  /** The task text for episodes whose metadata has neither `prompt` nor `task`. */
  readonly task?: string;
  /** info.json robot_type; default from the metadata (robot_type, rig_model, rig), else null. */
  readonly robotType?: string;
  readonly codec?: VideoCodec;
  /** A stream silent for longer than this ends its episode there (default 0.25 s). */
  readonly maxGapS?: number;
  readonly ffmpeg?: string;
  readonly signal?: AbortSignal;
  readonly onProgress?: (line: string) => void;
}

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

export interface LeRobotExportReport {
  readonly out: string;
  readonly fps: number;
  readonly codec: VideoCodec | undefined;
  readonly cameras: readonly string[];
  readonly jointNames: readonly string[];
  readonly tasks: readonly string[];
  readonly episodes: readonly ExportedEpisode[];
  /** Files with nothing to export once the gap rule applied, and why. */
  readonly skipped: readonly { file: string; reason: string }[];
  readonly totalFrames: number;
}

const videoKey = (camera: string): string => `observation.images.${camera}`;

async function checkOut(out: string): Promise<string> {
  const partial = `${out}.partial`;
  const exists = async (p: string): Promise<boolean> =>
    stat(p).then(
      () => true,
      () => false,
    );
  if (await exists(out)) {
    const entries = await readdir(out).catch(() => null);
    if (entries === null) throw new ExportError(`${out} exists and is not a folder; choose another --out.`);
    if (entries.length > 0)
      throw new ExportError(
        `${out} exists and is not empty; the export never writes into an existing folder — choose a new --out or empty it.`,
      );
  }
  if (await exists(partial))
    throw new ExportError(
      `${partial} exists (left by an export that was interrupted); remove it and run the export again.`,
    );
  try {
    await mkdir(dirname(out), { recursive: true });
    await mkdir(partial);
  } catch (e) {
    throw new ExportError(`Cannot create ${partial}: ${(e as Error).message}; choose a writable --out.`);
  }
  return partial;
}

function taskOf(e: EpisodeStreams, fallback: string | undefined): string {
  const t = e.metadata.prompt || e.metadata.task || fallback;
  if (!t)
    throw new ExportError(
      `${e.file} has neither a prompt nor a task in its metadata; pass --task TEXT to name the task its frames are trained on.`,
    );
  return t;
}

/** Every episode must have the joints, cameras and rates of the first; one sentence says which does not. */
function checkCompatible(all: readonly EpisodeStreams[], fps: number): void {
  const first = all[0];
  const cams = [...first.cameras.keys()].join(', ') || 'no cameras';
  for (const e of all) {
    if (e.jointNames.join(',') !== first.jointNames.join(',')) {
      throw new ExportError(
        `${e.file} has the joints ${e.jointNames.join(',')} but ${first.file} has ${first.jointNames.join(',')}; one dataset holds one joint layout — export them separately.`,
      );
    }
    const mine = [...e.cameras.keys()].join(', ') || 'no cameras';
    if (mine !== cams)
      throw new ExportError(
        `${e.file} has ${mine} but ${first.file} has ${cams}; every episode of a dataset needs the same cameras — export them separately.`,
      );
    const controlHz = 1 / medianPeriodS(e.states.timesS);
    if (!(controlHz >= fps * 0.9)) {
      throw new ExportError(
        `${e.file} has joint states at ${controlHz.toFixed(1)} Hz, below the dataset's ${fps} fps; pass --fps ${Math.max(1, Math.floor(controlHz))} or lower.`,
      );
    }
    for (const [name, cam] of e.cameras) {
      const hz = 1 / medianPeriodS(cam.timesS);
      if (!(hz >= fps * 0.9))
        throw new ExportError(
          `${e.file}: camera ${name} delivered ${hz.toFixed(1)} frames per second, below the dataset's ${fps} fps; pass --fps ${Math.max(1, Math.floor(hz))} or lower.`,
        );
    }
  }
}

function resampleEpisode(e: EpisodeStreams, fps: number, maxGapS: number): Resampled {
  const controlPeriodS = medianPeriodS(e.states.timesS);
  return resample(
    [
      { name: '/joint_states', timesS: e.states.timesS, lateAfterS: 2 * controlPeriodS },
      {
        name: '/joint_commands',
        timesS: e.commands.timesS,
        lateAfterS: 2 * Math.max(controlPeriodS, medianPeriodS(e.commands.timesS)),
      },
      ...[...e.cameras].map(([name, cam]) => ({
        name: `camera ${name}`,
        timesS: cam.timesS,
        lateAfterS: 1.5 * medianPeriodS(cam.timesS),
      })),
    ],
    fps,
    maxGapS,
  );
}

/** float32 rows of the picked samples: what LeRobot stores for state and action. */
function pickRows(s: JointStream, index: Int32Array, width: number): Float32Array {
  const out = new Float32Array(index.length * width);
  for (let k = 0; k < index.length; k++)
    out.set(s.positions.subarray(index[k] * width, index[k] * width + width), k * width);
  return out;
}

interface EpisodePlan {
  readonly streams: EpisodeStreams;
  readonly task: string;
  readonly taskIndex: number;
  readonly ticks: Resampled;
}

interface EpisodeOutput {
  readonly state: Float32Array;
  readonly action: Float32Array;
  /** Per frame: 1 where the operator drove (a takeover), 0 where the policy did. */
  readonly intervention: Int32Array;
  readonly stats: Record<string, FeatureStats>;
}

/** Streams one episode's camera frames into the encoders, one per tick, and samples them for stats. */
async function encodeEpisodeVideos(
  plan: EpisodePlan,
  encoders: Map<string, VideoEncoder>,
  sizes: Map<string, { width: number; height: number }>,
): Promise<Record<string, FeatureStats>> {
  const e = plan.streams;
  const sampleTicks = imageSampleTicks(plan.ticks.ticks);
  const perCamera = new Map<
    string,
    {
      repeats: Int32Array;
      firstTick: Int32Array;
      needed: number[];
      next: number;
      pending: Map<number, Uint8Array>;
      stats: ImageStatsAccumulator;
      sampled: Promise<void>[];
    }
  >();
  for (const [name, cam] of e.cameras) {
    const picks = plan.ticks.streams.find((s) => s.name === `camera ${name}`)!.index;
    const repeats = new Int32Array(cam.timesS.length);
    const firstTick = new Int32Array(cam.timesS.length).fill(-1);
    picks.forEach((i, k) => {
      repeats[i] += 1;
      if (firstTick[i] < 0) firstTick[i] = k;
    });
    const needed = [...new Set(picks)];
    perCamera.set(name, {
      repeats,
      firstTick,
      needed,
      next: 0,
      pending: new Map(),
      stats: new ImageStatsAccumulator(),
      sampled: [],
    });
  }
  const emit = async (camera: string, jpeg: Uint8Array, sortedIndex: number): Promise<void> => {
    const c = perCamera.get(camera)!;
    const size = jpegSize(jpeg);
    const want = sizes.get(camera);
    if (!size)
      throw new ExportError(
        `${e.file}: a frame of camera ${camera} is not a readable JPEG image; the file is damaged.`,
      );
    if (!want) sizes.set(camera, size);
    else if (want.width !== size.width || want.height !== size.height) {
      throw new ExportError(
        `${e.file}: camera ${camera} has ${size.width}×${size.height} frames where the dataset's are ${want.width}×${want.height}; one video holds one frame size — export these episodes separately.`,
      );
    }
    const encoder = encoders.get(camera)!;
    const from = c.firstTick[sortedIndex];
    const n = c.repeats[sortedIndex];
    for (let r = 0; r < n; r++) await encoder.write(jpeg);
    const times = sampleTicks.filter((k) => k >= from && k < from + n).length;
    if (times > 0) c.sampled.push(c.stats.add(jpeg.slice(), times));
  };
  await streamCameraFrames(e.file, e, async (camera, sortedIndex, jpeg) => {
    const c = perCamera.get(camera)!;
    if (c.repeats[sortedIndex] === 0) return;
    if (sortedIndex !== c.needed[c.next]) {
      c.pending.set(sortedIndex, jpeg.slice()); // written out of time order: hold it until its turn
      return;
    }
    await emit(camera, jpeg, sortedIndex);
    c.next += 1;
    for (let p = c.pending.get(c.needed[c.next]); p !== undefined; p = c.pending.get(c.needed[c.next])) {
      c.pending.delete(c.needed[c.next]);
      await emit(camera, p, c.needed[c.next]);
      c.next += 1;
    }
  });
  const stats: Record<string, FeatureStats> = {};
  for (const [name, c] of perCamera) {
    if (c.next !== c.needed.length)
      throw new ExportError(
        `${e.file}: camera ${name} lost frames between two readings of the file; was it changed during the export?`,
      );
    await Promise.all(c.sampled);
    stats[videoKey(name)] = c.stats.stats();
  }
  return stats;
}

function scalarStats(values: number[]): FeatureStats {
  return vectorStats(values, values.length, 1);
}

export async function exportLeRobot(opts: LeRobotExportOptions): Promise<LeRobotExportReport> {
  const fps = opts.fps ?? 30;
  const maxGapS = opts.maxGapS ?? 0.25;
  const ffmpeg = opts.ffmpeg ?? 'ffmpeg';
  const progress = opts.onProgress ?? (() => undefined);
  if (opts.episodes.length === 0) throw new ExportError('No episode files given: name the .mcap files to export.');
  if (!Number.isInteger(fps) || fps < 1)
    throw new ExportError(`--fps must be a whole number of frames per second, not ${fps}.`);

  // Pass 1, everything read and checked before anything is written.
  const all: EpisodeStreams[] = [];
  for (const file of opts.episodes) {
    try {
      all.push(await readEpisodeStreams(file));
    } catch (e) {
      if (e instanceof EpisodeExportError) throw new ExportError(e.message);
      throw e;
    }
  }
  checkCompatible(all, fps);
  const cameras = [...all[0].cameras.keys()];
  const codec = cameras.length > 0 ? (opts.codec ?? 'av1') : undefined;
  if (codec) {
    try {
      checkFfmpeg(ffmpeg, codec);
    } catch (e) {
      if (e instanceof VideoEncodeError) throw new ExportError(e.message);
      throw e;
    }
  }
  const tasks: string[] = [];
  const plans: EpisodePlan[] = [];
  const skipped: { file: string; reason: string }[] = [];
  const cuts = new Map<EpisodePlan, string>();
  for (const streams of all) {
    const task = taskOf(streams, opts.task);
    const ticks = resampleEpisode(streams, fps, maxGapS);
    const cutText =
      ticks.cut &&
      `${ticks.cut.stream} had nothing new for ${ticks.cut.gapS.toFixed(2)} s from ${ticks.cut.lastSampleS.toFixed(2)} s (longer than ${maxGapS} s), so the episode ends there`;
    if (ticks.ticks === 0) {
      skipped.push({
        file: streams.file,
        reason:
          cutText ??
          'its streams never overlap (no instant has a joint state, a command and a frame from every camera)',
      });
      continue;
    }
    if (!tasks.includes(task)) tasks.push(task);
    const plan = { streams, task, taskIndex: tasks.indexOf(task), ticks };
    if (cutText) cuts.set(plan, cutText);
    plans.push(plan);
  }
  if (plans.length === 0)
    throw new ExportError(`Nothing to export: ${skipped.map((s) => `${s.file}: ${s.reason}`).join('; ')}.`);

  const partial = await checkOut(opts.out);
  const encoders = new Map<string, VideoEncoder>();
  try {
    for (const cam of cameras) {
      const dir = join(partial, 'videos', videoKey(cam), 'chunk-000');
      await mkdir(dir, { recursive: true });
      encoders.set(cam, new VideoEncoder(ffmpeg, join(dir, 'file-000.mp4'), fps, codec!));
    }
    const width = all[0].jointNames.length;
    const sizes = new Map<string, { width: number; height: number }>();
    const outputs: EpisodeOutput[] = [];
    const episodes: ExportedEpisode[] = [];
    let index = 0;
    for (const [episodeIndex, plan] of plans.entries()) {
      if (opts.signal?.aborted) throw new ExportError('The export was stopped; nothing was written.');
      const picks = plan.ticks.streams;
      const n = plan.ticks.ticks;
      const state = pickRows(plan.streams.states, picks[0].index, width);
      const action = pickRows(plan.streams.commands, picks[1].index, width);
      const frameIndex = Array.from({ length: n }, (_, k) => k);
      const intervention = interventionFrames(plan.streams.interventions, plan.ticks.startS, n, fps);
      const stats: Record<string, FeatureStats> = {
        'observation.state': vectorStats(state, n, width),
        action: vectorStats(action, n, width),
        ...(await encodeEpisodeVideos(plan, encoders, sizes)),
        timestamp: scalarStats(frameIndex.map((k) => Math.fround(k / fps))),
        frame_index: scalarStats(frameIndex),
        episode_index: scalarStats(frameIndex.map(() => episodeIndex)),
        index: scalarStats(frameIndex.map((k) => index + k)),
        task_index: scalarStats(frameIndex.map(() => plan.taskIndex)),
        intervention: scalarStats(Array.from(intervention)),
      };
      outputs.push({ state, action, intervention, stats });
      const lateTicks = Object.fromEntries(picks.filter((p) => p.lateTicks > 0).map((p) => [p.name, p.lateTicks]));
      episodes.push({
        episodeIndex,
        file: plan.streams.file,
        task: plan.task,
        frames: n,
        startInFileS: plan.ticks.startS,
        lateTicks,
        cut: cuts.get(plan),
        interventionFrames: intervention.reduce((a, b) => a + b, 0),
      });
      index += n;
      const late = Object.entries(lateTicks)
        .map(([s, c]) => `${s} ${c}`)
        .join(', ');
      progress(
        `episode ${episodeIndex}: ${plan.streams.file} → ${n} frames (${(n / fps).toFixed(2)} s)${late ? `, repeated samples: ${late}` : ''}${cuts.has(plan) ? `; ${cuts.get(plan)}` : ''}`,
      );
    }
    for (const enc of encoders.values()) await enc.finish();
    const totalFrames = index;
    await writeData(partial, plans, outputs, fps, width);
    await writeMeta(partial, {
      plans,
      outputs,
      episodes,
      tasks,
      cameras,
      sizes,
      fps,
      codec,
      totalFrames,
      robotType: robotTypeOf(opts.robotType, all[0]),
      jointNames: all[0].jointNames,
    });
    if (opts.signal?.aborted) throw new ExportError('The export was stopped; nothing was written.');
    await rmdir(opts.out).catch(() => undefined); // an empty folder given as --out
    await rename(partial, opts.out);
    return { out: opts.out, fps, codec, cameras, jointNames: all[0].jointNames, tasks, episodes, skipped, totalFrames };
  } catch (e) {
    for (const enc of encoders.values()) enc.kill();
    await rm(partial, { recursive: true, force: true });
    if (e instanceof VideoEncodeError || e instanceof EpisodeExportError) throw new ExportError(e.message);
    throw e;
  }
}

function robotTypeOf(given: string | undefined, first: EpisodeStreams): string | null {
  return given ?? (first.metadata.robot_type || first.metadata.rig_model || first.metadata.rig || null);
}

async function writeData(
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

/** 1 for each frame (tick k at startS + k / fps) inside a stretch the operator drove. */
function interventionFrames(
  spans: EpisodeStreams['interventions'],
  startS: number,
  n: number,
  fps: number,
): Int32Array {
  const out = new Int32Array(n);
  for (const s of spans) {
    const from = Math.max(0, Math.ceil((s.startS - startS) * fps - 1e-9));
    const to = Math.min(n, Math.ceil((s.endS - startS) * fps - 1e-9));
    out.fill(1, from, Math.max(from, to));
  }
  return out;
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

async function writeMeta(root: string, m: MetaInput): Promise<void> {
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

/** The data sources a dataset's episodes come from. */
export const EPISODE_SOURCES = ['sim-privileged', 'sim-policy', 'real-teleop', 'real-policy'] as const;
export type EpisodeSource = (typeof EPISODE_SOURCES)[number];

/**
 * An episode's source from its file's metadata: its own `source` when it names one, else a
 * teleop take is real-teleop, a sim rollout of a privileged code policy sim-privileged, any
 * other sim rollout sim-policy, a rollout on the rig real-policy.
 */
export function episodeSource(metadata: Readonly<Record<string, string>>): EpisodeSource {
  const own = metadata.source as EpisodeSource | undefined;
  if (own && EPISODE_SOURCES.includes(own)) return own;
  if (metadata.kind === 'teleop') return 'real-teleop';
  if (metadata.kind === 'sim')
    return (metadata.policy_spec ?? '').startsWith('code:') ? 'sim-privileged' : 'sim-policy';
  return 'real-policy';
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
