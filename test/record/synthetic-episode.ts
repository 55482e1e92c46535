/**
 * Episode files written by the real EpisodeRecorder from synthetic streams whose every value the
 * test knows: joint states at 250 Hz, applied commands beside them, and camera frames that are
 * flat grey JPEGs whose grey level encodes the frame number (so a decoded video frame says which
 * recorded frame it came from).
 */
import sharp from 'sharp';
import { EpisodeRecorder } from '../../src/record/episode-recorder.js';
import { yamRigModel } from '../../src/rig/yam.js';
import type { CameraInfo } from '../../src/rig/camera.js';

export const CAMERAS = ['cam_high', 'cam_left_wrist', 'cam_right_wrist'] as const;
export const WIDTH = 96;
export const HEIGHT = 64;

export interface SyntheticEpisodeSpec {
  readonly file: string;
  readonly durationS: number;
  readonly controlHz?: number;
  readonly cameraFps?: number;
  readonly cameras?: readonly string[];
  /** Seconds of offset of the camera frame grid (different per episode). */
  readonly cameraPhaseS?: number;
  /** Frames of a camera left out: [camera, first frame, count]. */
  readonly dropFrames?: readonly [string, number, number][];
  readonly metadata?: Record<string, string>;
  /** The operator took over from the policy at the first time and gave back at the second ('takeover' events). */
  readonly takeover?: readonly [number, number];
  /** Frame size (default WIDTH × HEIGHT). */
  readonly size?: { width: number; height: number };
}

export interface SyntheticEpisode {
  /** Times in seconds from the file's first message (the first joint state, at 0). */
  readonly stateTimesS: number[];
  readonly states: number[][];
  readonly commandTimesS: number[];
  readonly commands: number[][];
  /** Per camera, arrival times and the frame numbers recorded. */
  readonly frames: Record<string, { timesS: number[]; numbers: number[] }>;
}

/** The grey level of recorded frame `n`: steps of 9 stay apart through the video codec. */
export function greyOf(n: number): number {
  return 20 + ((n * 9) % 216);
}

const jpegCache = new Map<string, Buffer>();
async function greyJpeg(level: number, width: number, height: number): Promise<Buffer> {
  const key = `${level} ${width}x${height}`;
  let b = jpegCache.get(key);
  if (!b) {
    b = await sharp({ create: { width, height, channels: 3, background: { r: level, g: level, b: level } } })
      .jpeg({ quality: 90 })
      .toBuffer();
    jpegCache.set(key, b);
  }
  return b;
}

export const stateValue = (t: number, j: number): number => 0.3 * Math.sin(1.7 * t + j) + 0.01 * j;
export const commandValue = (t: number, j: number): number => stateValue(t, j) + 0.02 + 0.001 * j;

export async function writeSyntheticEpisode(spec: SyntheticEpisodeSpec): Promise<SyntheticEpisode> {
  const controlHz = spec.controlHz ?? 250;
  const fps = spec.cameraFps ?? 30;
  const cameras = spec.cameras ?? CAMERAS;
  const { width: w, height: h } = spec.size ?? { width: WIDTH, height: HEIGHT };
  const infos: CameraInfo[] = cameras.map((name) => ({
    name,
    source: 'synthetic grey frames',
    width: w,
    height: h,
    fps,
    format: 'jpeg',
  }));
  // The recorder stamps messages on the rig clock plus this offset; times below are rig-clock times.
  const rec = await EpisodeRecorder.open({
    file: spec.file,
    rigModel: yamRigModel(),
    cameras: infos,
    metadata: spec.metadata ?? {},
    unixOffsetS: 1_764_590_000,
  });
  type Item = { t: number; kind: 'state' | 'command' | 'frame'; camera?: string; n?: number };
  const items: Item[] = [];
  const steps = Math.floor(spec.durationS * controlHz);
  for (let i = 0; i < steps; i++) {
    items.push({ t: i / controlHz, kind: 'state' });
    items.push({ t: i / controlHz + 0.0007, kind: 'command' });
  }
  const frames: SyntheticEpisode['frames'] = {};
  cameras.forEach((camera, c) => {
    frames[camera] = { timesS: [], numbers: [] };
    for (let n = 0; (n + 1) / fps < spec.durationS; n++) {
      const dropped = spec.dropFrames?.some(([cam, first, count]) => cam === camera && n >= first && n < first + count);
      if (dropped) continue;
      // Arrival jitter of up to ±3 ms keeps frames off the tick grid, as a real camera's are.
      const t = (spec.cameraPhaseS ?? 0.011) + 0.002 * c + n / fps + 0.003 * Math.sin(n * 2.3 + c);
      items.push({ t, kind: 'frame', camera, n });
    }
  });
  items.sort((a, b) => a.t - b.t);
  const out: SyntheticEpisode = { stateTimesS: [], states: [], commandTimesS: [], commands: [], frames };
  const t0 = items[0].t;
  const fileTime = (t: number): number => Math.round((t - t0) * 1e9) / 1e9;
  const width = 14;
  for (const it of items) {
    if (it.kind === 'state') {
      const position = Float64Array.from({ length: width }, (_, j) => stateValue(it.t, j));
      rec.jointState({
        timeS: it.t,
        mode: 'active',
        position,
        velocity: new Float64Array(width),
        effort: new Float64Array(width),
        faults: [],
      });
      out.stateTimesS.push(fileTime(it.t));
      out.states.push([...position]);
    } else if (it.kind === 'command') {
      const position = Float64Array.from({ length: width }, (_, j) => commandValue(it.t, j));
      rec.command(it.t, { position });
      out.commandTimesS.push(fileTime(it.t));
      out.commands.push([...position]);
    } else {
      const data = await greyJpeg(greyOf(it.n!), w, h);
      rec.image({ camera: it.camera!, seq: it.n!, arrivalS: it.t, format: 'jpeg', width: w, height: h, data });
      frames[it.camera!].timesS.push(fileTime(it.t));
      frames[it.camera!].numbers.push(it.n!);
    }
  }
  if (spec.takeover) {
    const [from, to] = spec.takeover;
    rec.event(from, 'takeover', 'operator', 'The operator took over.', { takeover: 'start' });
    rec.event(to, 'takeover', 'operator', 'The operator gave back.', { takeover: 'end' });
  }
  const summary = await rec.close({ outcome: 'completed' });
  if (summary.status !== 'finished') throw new Error(`synthetic episode not finished: ${summary.failure}`);
  return out;
}

/** Index of the newest time at or before t (the rule the export promises), or -1. */
export function newestAtOrBefore(times: readonly number[], t: number): number {
  let best = -1;
  for (let i = 0; i < times.length; i++) if (times[i] <= t + 1e-9) best = i;
  return best;
}
