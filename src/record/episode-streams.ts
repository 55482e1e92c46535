/**
 * What an export needs from one episode file, read in one streaming pass: the metadata, joint
 * states and applied commands (times and positions), and per camera the arrival time of every
 * frame — not the frames themselves, which a second pass streams to the video encoder, so an
 * hour-long episode never sits in memory. Times are seconds from the file's first message
 * (nanoseconds since 1970 do not fit a double).
 */
import type { TypedMcapRecord } from '@mcap/core';
import { cameraOfTopic, EPISODE_METADATA_NAME, TOPICS } from './episode-format.js';
import { decodeMessage, EpisodeFileError, scanEpisodeFile } from './episode-file-reader.js';
import type { CompressedImageMessage, EpisodeEventMessage, JointStateMessage } from './ros2-messages.js';

export interface JointStream {
  readonly timesS: Float64Array;
  /** Row-major, `names.length` values per sample. */
  readonly positions: Float64Array;
}

export interface CameraStream {
  /** Arrival times, ascending. */
  readonly timesS: Float64Array;
  /** For the n-th frame of this camera in file order, its index in timesS. */
  readonly sortedIndexOfFileOrder: Int32Array;
}

export interface EpisodeStreams {
  readonly file: string;
  readonly metadata: Readonly<Record<string, string>>;
  readonly jointNames: readonly string[];
  readonly states: JointStream;
  readonly commands: JointStream;
  readonly cameras: ReadonlyMap<string, CameraStream>;
  /** logTime (ns) of the file's first message: time 0 of the streams. */
  readonly originNs: bigint;
  /** The stretches the operator drove with the leader during a policy rollout ('takeover' events), in stream seconds. */
  readonly interventions: readonly { readonly startS: number; readonly endS: number }[];
}

interface Collected {
  times: number[];
  values: number[];
}

/** Sorts samples by time (they are written in call order, almost always already sorted). */
function sortedJoints(c: Collected, width: number): JointStream {
  const n = c.times.length;
  const order = Array.from({ length: n }, (_, i) => i);
  if (c.times.some((t, i) => i > 0 && t < c.times[i - 1])) order.sort((a, b) => c.times[a] - c.times[b]);
  const timesS = new Float64Array(n);
  const positions = new Float64Array(n * width);
  order.forEach((from, to) => {
    timesS[to] = c.times[from];
    for (let j = 0; j < width; j++) positions[to * width + j] = c.values[from * width + j];
  });
  return { timesS, positions };
}

function sortedCamera(times: number[]): CameraStream {
  const order = Array.from({ length: times.length }, (_, i) => i);
  order.sort((a, b) => times[a] - times[b] || a - b);
  const timesS = new Float64Array(times.length);
  const sortedIndexOfFileOrder = new Int32Array(times.length);
  order.forEach((from, to) => {
    timesS[to] = times[from];
    sortedIndexOfFileOrder[from] = to;
  });
  return { timesS, sortedIndexOfFileOrder };
}

export class EpisodeExportError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'EpisodeExportError';
  }
}

/** Reads a finished episode file's streams; a cut-off or unreadable file is refused with the recover hint. */
export async function readEpisodeStreams(file: string): Promise<EpisodeStreams> {
  const schemas = new Map<number, string>();
  const channels = new Map<number, { topic: string; schema: string }>();
  let metadata: Record<string, string> = {};
  const states: Collected = { times: [], values: [] };
  const commands: Collected = { times: [], values: [] };
  const cameraTimes = new Map<string, number[]>();
  let names: string[] | undefined;
  let originNs: bigint | undefined;
  const interventions: { startS: number; endS: number }[] = [];
  let interventionFrom: number | undefined;
  const joint = (into: Collected, topic: string, m: JointStateMessage, t: number): void => {
    if (names === undefined) names = [...m.name];
    if (m.position.length !== names.length) {
      throw new EpisodeExportError(
        `${file}: a ${topic} message has ${m.position.length} positions for ${names.length} joints; the file is not a tandem episode the export can read.`,
      );
    }
    into.times.push(t);
    for (const v of m.position) into.values.push(v);
  };
  let scan;
  try {
    scan = await scanEpisodeFile(file, (r: TypedMcapRecord) => {
      switch (r.type) {
        case 'Schema':
          if (!schemas.has(r.id)) schemas.set(r.id, r.name);
          break;
        case 'Channel':
          if (!channels.has(r.id)) channels.set(r.id, { topic: r.topic, schema: schemas.get(r.schemaId) ?? '' });
          break;
        case 'Metadata':
          if (r.name === EPISODE_METADATA_NAME) metadata = Object.fromEntries(r.metadata);
          break;
        case 'Message': {
          const ch = channels.get(r.channelId);
          if (!ch) break;
          originNs ??= r.logTime;
          const t = Number(r.logTime - originNs) / 1e9;
          if (ch.topic === TOPICS.jointStates || ch.topic === TOPICS.jointCommands) {
            const m = decodeMessage(ch.schema, r.data) as JointStateMessage | undefined;
            if (m) joint(ch.topic === TOPICS.jointStates ? states : commands, ch.topic, m, t);
            break;
          }
          if (ch.topic === TOPICS.events) {
            const m = decodeMessage(ch.schema, r.data) as EpisodeEventMessage | undefined;
            if (m?.kind === 'takeover') {
              const phase = takeoverPhase(m.detail_json);
              if (phase === 'start') interventionFrom ??= t;
              else if (phase === 'end' && interventionFrom !== undefined) {
                interventions.push({ startS: interventionFrom, endS: t });
                interventionFrom = undefined;
              }
            }
            break;
          }
          const camera = cameraOfTopic(ch.topic);
          if (camera !== undefined) {
            let list = cameraTimes.get(camera);
            if (!list) cameraTimes.set(camera, (list = []));
            list.push(t);
          }
          break;
        }
        default:
          break;
      }
    });
  } catch (e) {
    if (e instanceof EpisodeFileError) throw new EpisodeExportError(e.message);
    throw e;
  }
  if (!scan.complete) {
    throw new EpisodeExportError(
      `${file} is cut off (${scan.problem}); recover its readable part first with \`tandem record recover ${file}\` and export the recovered file.`,
    );
  }
  const jointNames = metadata.joint_names ? metadata.joint_names.split(',') : (names ?? []);
  if (names !== undefined && names.join(',') !== jointNames.join(',')) {
    throw new EpisodeExportError(
      `${file}: its joint states name the joints ${names.join(',')} but its metadata says ${jointNames.join(',')}; the file is inconsistent and cannot be exported.`,
    );
  }
  if (states.times.length === 0)
    throw new EpisodeExportError(`${file} holds no joint states (${TOPICS.jointStates}): there is nothing to export.`);
  if (commands.times.length === 0) {
    throw new EpisodeExportError(
      `${file} holds no applied commands (${TOPICS.jointCommands}), so it has no action to train on; it cannot be exported.`,
    );
  }
  // The operator still drove when the steps ended: the stretch runs to the last state.
  if (interventionFrom !== undefined)
    interventions.push({
      startS: interventionFrom,
      endS: states.times.reduce((a, b) => Math.max(a, b), interventionFrom) + 1e-9,
    });
  const cameras = new Map<string, CameraStream>();
  for (const [name, times] of [...cameraTimes.entries()].sort(([a], [b]) => a.localeCompare(b)))
    cameras.set(name, sortedCamera(times));
  return {
    file,
    metadata,
    jointNames,
    states: sortedJoints(states, jointNames.length),
    commands: sortedJoints(commands, jointNames.length),
    cameras,
    originNs: originNs ?? 0n,
    interventions,
  };
}

/**
 * Second pass: calls `frame` with every camera frame's JPEG bytes (valid during the call only),
 * its camera and its index in that camera's sorted times.
 */
export async function streamCameraFrames(
  file: string,
  streams: EpisodeStreams,
  frame: (camera: string, sortedIndex: number, jpeg: Uint8Array) => Promise<void> | void,
): Promise<void> {
  const schemas = new Map<number, string>();
  const channels = new Map<number, { camera: string; schema: string }>();
  const seen = new Map<string, number>();
  await scanEpisodeFile(file, async (r) => {
    if (r.type === 'Schema') {
      if (!schemas.has(r.id)) schemas.set(r.id, r.name);
    } else if (r.type === 'Channel') {
      const camera = cameraOfTopic(r.topic);
      if (camera !== undefined && !channels.has(r.id))
        channels.set(r.id, { camera, schema: schemas.get(r.schemaId) ?? '' });
    } else if (r.type === 'Message') {
      const ch = channels.get(r.channelId);
      const cam = ch && streams.cameras.get(ch.camera);
      if (!ch || !cam) return;
      const n = seen.get(ch.camera) ?? 0;
      seen.set(ch.camera, n + 1);
      const m = decodeMessage(ch.schema, r.data) as CompressedImageMessage | undefined;
      if (!m) return;
      if (!/jpe?g/i.test(m.format))
        throw new EpisodeExportError(
          `${file}: camera ${ch.camera} holds '${m.format}' images; the export encodes JPEG frames only.`,
        );
      await frame(ch.camera, cam.sortedIndexOfFileOrder[n], m.data);
    }
  });
}

/** A 'takeover' event's phase (start, end, or a note), or undefined when its detail is unreadable. */
function takeoverPhase(detailJson: string): string | undefined {
  try {
    const d = JSON.parse(detailJson || '{}') as { takeover?: unknown };
    return typeof d.takeover === 'string' ? d.takeover : undefined;
  } catch {
    return undefined;
  }
}
