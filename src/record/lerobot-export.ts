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
import { mkdir, readdir, rename, rm, rmdir, stat } from 'node:fs/promises';
import { dirname, join } from 'node:path';
import {
  EpisodeExportError,
  readEpisodeStreams,
  streamCameraFrames,
  type EpisodeStreams,
  type JointStream,
} from './episode-streams.js';
import { ImageStatsAccumulator, imageSampleTicks, vectorStats, type FeatureStats } from './lerobot-stats.js';
import { medianPeriodS, resample, type Resampled } from './resample.js';
import { checkFfmpeg, jpegSize, VideoEncoder, VideoEncodeError, type VideoCodec } from './video-encoder.js';
import {
  videoKey,
  writeData,
  writeMeta,
  type EpisodeOutput,
  type EpisodePlan,
  type ExportedEpisode,
} from './lerobot-dataset-files.js';

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
