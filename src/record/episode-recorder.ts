/**
 * One episode file, written as the episode happens: ROS 2 profile MCAP, CDR messages, chunks with
 * message indexes and statistics (what `ros2 bag info` and Foxglove need to read it in time order).
 *
 * - The control loop never waits for the disk: every message is encoded and queued synchronously,
 *   and one pump feeds the MCAP writer (which needs each call to finish before the next) through
 *   an async file handle.
 * - Crash safety: at least once a second the open chunk is closed and the file fdatasync'd, so a
 *   SIGKILL or a power cut loses at most the last second; `recoverEpisodeFile` rewrites the
 *   readable prefix of a cut-off file into a finished one.
 * - A write that fails (a full disk, an I/O error) stops the recording, never the episode: the
 *   recorder says so in one sentence and every byte already written stays in the file.
 */
import { McapWriter } from '@mcap/core';
import type { RigCommand, RigModel, RigState, SafetyEvent } from '../rig/contract.js';
import type { Camera, CameraCounters, CameraFrame, CameraInfo } from '../rig/camera.js';
import { FileWritable } from './file-writable.js';
import { CDR, SCHEMAS, offeredQosYaml, rosTime, type SchemaKey } from './ros2-messages.js';
import { EPISODE_METADATA_NAME, EPISODE_END_METADATA_NAME, TOPICS, cameraTopic, jointNames, type EventKind } from './episode-format.js';

export const RECORDER_LIBRARY = 'tandem episode recorder (@mcap/core)';

export class RecordingError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'RecordingError';
  }
}

export interface EpisodeRecorderOptions {
  /** The episode file to create; it must not exist. */
  readonly file: string;
  readonly rigModel: RigModel;
  /** The cameras whose frames this episode records (one topic each). */
  readonly cameras?: readonly CameraInfo[];
  /** The episode's metadata record (task, layout set and index, policy, rig, calibrations, operator, tandem version …). */
  readonly metadata: Readonly<Record<string, string>>;
  /** Seconds to add to the rig clock's time to get Unix time (stamps and log times are Unix time). */
  readonly unixOffsetS: number;
  /** Longest time between fdatasyncs while messages arrive. Default 1 s. */
  readonly flushIntervalS?: number;
  /** A chunk is closed early once it holds this many bytes. Default 4 MiB. */
  readonly chunkBytes?: number;
  /** Queued bytes the disk may fall behind by before the recording stops (the disk is too slow). Default 512 MiB. */
  readonly maxQueuedBytes?: number;
}

export type RecorderStatus = 'recording' | 'failed' | 'finished';

export interface RecordingSummary {
  readonly file: string;
  readonly status: RecorderStatus;
  /** Why the recording stopped early, in an operator's words. */
  readonly failure?: string;
  readonly messages: number;
  /** Messages that could not be written after a failure. */
  readonly lostMessages: number;
  readonly bytes: number;
  readonly durationS: number;
  readonly syncs: number;
  /** How long close() took, from the call to the file's last byte on the disk. */
  readonly closeMs: number;
  readonly messagesByTopic: Readonly<Record<string, number>>;
  readonly cameraCounters: Readonly<Record<string, CameraCounters>>;
}

interface Queued {
  readonly channelId: number;
  readonly logTime: bigint;
  readonly data: Uint8Array;
}

function ioReason(e: unknown): string {
  const code = (e as NodeJS.ErrnoException).code;
  if (code === 'ENOSPC') return 'the disk is full';
  if (code === 'EDQUOT') return 'the disk quota is used up';
  if (code === 'EACCES' || code === 'EPERM') return 'the folder is not writable';
  if (code === 'EROFS') return 'the disk is read-only';
  if (code === 'ENOENT') return 'the folder does not exist';
  if (code === 'EEXIST') return 'a file of that name exists already (episode files are never overwritten)';
  return e instanceof Error ? e.message : String(e);
}

export class EpisodeRecorder {
  private readonly writer: McapWriter;
  private readonly queue: Queued[] = [];
  private queuedBytes = 0;
  private pumping: Promise<void> | undefined;
  private readonly channels = new Map<string, number>();
  private readonly sequences = new Map<number, number>();
  private readonly byTopic: Record<string, number> = {};
  private readonly cameraSubscriptions: (() => void)[] = [];
  private readonly attachedCameras: Camera[] = [];
  private readonly names: string[];
  private readonly offsetNs: bigint;
  private readonly flushIntervalMs: number;
  private readonly maxQueuedBytes: number;
  private flushDue = false;
  private flushTimer: NodeJS.Timeout | undefined;
  private firstLogTime: bigint | undefined;
  private lastLogTime: bigint | undefined;
  private written = 0;
  private lost = 0;
  private syncCount = 0;
  private state: RecorderStatus = 'recording';
  private failureText: string | undefined;
  private cameraCounters: Record<string, CameraCounters> = {};

  /**
   * The writer closes its open chunk once the chunk is larger than this; @mcap/core 2.2 has no
   * flush call, and compares with `>`, so a threshold that reads 0 while a flush is due closes the
   * chunk at the next message. (Checked by the crash test: a killed recording keeps chunks.)
   */
  private readonly chunkThreshold: { valueOf(): number };

  private constructor(
    private readonly out: FileWritable,
    private readonly opts: EpisodeRecorderOptions,
  ) {
    const chunkBytes = opts.chunkBytes ?? 4 * 1024 * 1024;
    this.chunkThreshold = { valueOf: () => (this.flushDue ? 0 : chunkBytes) };
    this.writer = new McapWriter({ writable: out, chunkSize: this.chunkThreshold as unknown as number });
    this.names = jointNames(opts.rigModel);
    this.offsetNs = BigInt(Math.round(opts.unixOffsetS * 1e9));
    this.flushIntervalMs = (opts.flushIntervalS ?? 1) * 1000;
    this.maxQueuedBytes = opts.maxQueuedBytes ?? 512 * 1024 * 1024;
  }

  /**
   * Creates the file and writes its header, schemas, channels and metadata (synced), so even a
   * recording killed in its first second names what it was. Throws RecordingError when the file
   * cannot be created — before anything moves.
   */
  static async open(opts: EpisodeRecorderOptions): Promise<EpisodeRecorder> {
    let out: FileWritable;
    try {
      out = await FileWritable.create(opts.file);
    } catch (e) {
      throw new RecordingError(`Cannot create the episode file ${opts.file}: ${ioReason(e)}.`);
    }
    const rec = new EpisodeRecorder(out, opts);
    try {
      await rec.start();
    } catch (e) {
      await out.close().catch(() => undefined);
      throw new RecordingError(`Cannot write the episode file ${opts.file}: ${ioReason(e)}.`);
    }
    return rec;
  }

  private async start(): Promise<void> {
    await this.writer.start({ profile: 'ros2', library: RECORDER_LIBRARY });
    const schemaIds = new Map<SchemaKey, number>();
    const schema = async (key: SchemaKey): Promise<number> => {
      let id = schemaIds.get(key);
      if (id === undefined) {
        id = await this.writer.registerSchema({ name: SCHEMAS[key].name, encoding: 'ros2msg', data: new TextEncoder().encode(SCHEMAS[key].text) });
        schemaIds.set(key, id);
      }
      return id;
    };
    const channel = async (topic: string, key: SchemaKey, depth: number): Promise<void> => {
      const id = await this.writer.registerChannel({ topic, schemaId: await schema(key), messageEncoding: 'cdr', metadata: new Map([['offered_qos_profiles', offeredQosYaml(depth)]]) });
      this.channels.set(topic, id);
      this.sequences.set(id, 0);
    };
    await channel(TOPICS.jointStates, 'jointState', 10);
    await channel(TOPICS.jointCommands, 'jointState', 10);
    await channel(TOPICS.events, 'event', 100);
    for (const cam of this.opts.cameras ?? []) await channel(cameraTopic(cam.name), 'compressedImage', 5);
    const cameras = (this.opts.cameras ?? []).map((c) => `${c.name}=${c.source} ${c.width}x${c.height}@${c.fps} ${c.format}`).join('; ');
    await this.writer.addMetadata({
      name: EPISODE_METADATA_NAME,
      metadata: new Map(Object.entries({ ...this.opts.metadata, joint_names: this.names.join(','), cameras, unix_offset_s: String(this.opts.unixOffsetS) })),
    });
    await this.out.sync();
    this.syncCount += 1;
    this.flushTimer = setInterval(() => {
      this.flushDue = true;
    }, this.flushIntervalMs);
    this.flushTimer.unref();
  }

  get status(): RecorderStatus {
    return this.state;
  }

  /** Why the recording stopped early (undefined while it records or after a clean close). */
  get failure(): string | undefined {
    return this.failureText;
  }

  get file(): string {
    return this.opts.file;
  }

  private logTime(timeS: number): bigint {
    return this.offsetNs + BigInt(Math.round(timeS * 1e9));
  }

  /** True while messages are taken; after a failure each refused message is counted as lost. */
  private accepting(): boolean {
    if (this.state === 'recording') return true;
    if (this.state === 'failed') this.lost += 1;
    return false;
  }

  private enqueue(topic: string, timeS: number, data: Uint8Array): void {
    const channelId = this.channels.get(topic);
    if (channelId === undefined) return;
    const logTime = this.logTime(timeS);
    this.queue.push({ channelId, logTime, data });
    this.queuedBytes += data.byteLength;
    this.byTopic[topic] = (this.byTopic[topic] ?? 0) + 1;
    if (this.queuedBytes > this.maxQueuedBytes) {
      this.fail(`the disk fell ${Math.round(this.queuedBytes / 1048576)} MiB behind the recording (too slow for this data rate)`);
      return;
    }
    this.pumping ??= this.pump();
  }

  private header(timeS: number, frameId: string) {
    return { stamp: rosTime(this.logTime(timeS)), frame_id: frameId };
  }

  /** The measured state of both arms (14 joints, policy order, names from the rig model). */
  jointState(state: RigState): void {
    if (!this.accepting()) return;
    const data = CDR.writer.jointState.writeMessage({ header: this.header(state.timeS, ''), name: this.names, position: state.position, velocity: state.velocity, effort: state.effort });
    this.enqueue(TOPICS.jointStates, state.timeS, data);
  }

  /** A command as the rig applied it, after safety clamping. */
  command(timeS: number, applied: RigCommand): void {
    if (!this.accepting()) return;
    const data = CDR.writer.jointState.writeMessage({
      header: this.header(timeS, ''),
      name: this.names,
      position: applied.position,
      velocity: applied.velocity ?? [],
      effort: applied.torqueNm ?? [],
    });
    this.enqueue(TOPICS.jointCommands, timeS, data);
  }

  /** One camera frame as the camera gave it (JPEG bytes go in unchanged). */
  image(frame: CameraFrame): void {
    if (!this.accepting()) return;
    if (frame.format !== 'jpeg') throw new RecordingError(`Camera ${frame.camera} gives ${frame.format} frames; the recorder stores the camera's JPEG frames as they come and does not encode.`);
    const data = CDR.writer.compressedImage.writeMessage({ header: this.header(frame.arrivalS, frame.camera), format: 'jpeg', data: frame.data });
    this.enqueue(cameraTopic(frame.camera), frame.arrivalS, data);
  }

  /** Something that happened, on the events topic (see docs/recording.md for the kinds). */
  event(timeS: number, kind: EventKind, source: string, message: string, detail: Record<string, unknown> = {}): void {
    if (!this.accepting()) return;
    const data = CDR.writer.event.writeMessage({ header: this.header(timeS, ''), kind, source, message, detail_json: JSON.stringify(detail) });
    this.enqueue(TOPICS.events, timeS, data);
  }

  /** A safety supervisor's intervention, as an event. */
  safetyEvent(e: SafetyEvent): void {
    const source = e.arm === undefined ? 'rig' : e.joint === undefined ? e.arm : `${e.arm}/${e.joint}`;
    this.event(e.timeS, 'safety', source, e.message, { safety_kind: e.kind, arm: e.arm, joint: e.joint });
  }

  /**
   * Records every frame of `camera` until close, and an event if it is lost (the episode goes on
   * without it). Its counters are written in the end metadata.
   */
  attachCamera(camera: Camera, clockNowS: () => number): void {
    this.attachedCameras.push(camera);
    this.cameraSubscriptions.push(camera.onFrame((f) => this.image(f)));
    this.cameraSubscriptions.push(
      camera.onLost((reason, atS) => {
        this.event(Number.isFinite(atS) ? atS : clockNowS(), 'camera-lost', camera.info.name, reason, { counters: camera.counters() });
      }),
    );
  }

  private fail(reason: string): void {
    if (this.state !== 'recording') return;
    this.state = 'failed';
    const lastS = this.lastLogTime === undefined || this.firstLogTime === undefined ? 0 : Number(this.lastLogTime - this.firstLogTime) / 1e9;
    this.failureText = `Recording stopped after ${lastS.toFixed(1)} s because ${reason}; every byte written before is kept in ${this.opts.file} (recover it with \`tandem record recover ${this.opts.file}\`).`;
    this.lost += this.queue.length;
    this.queue.length = 0;
    this.queuedBytes = 0;
  }

  private async pump(): Promise<void> {
    try {
      while (this.queue.length > 0 && this.state === 'recording') {
        const m = this.queue.shift()!;
        this.queuedBytes -= m.data.byteLength;
        const sequence = this.sequences.get(m.channelId)!;
        this.sequences.set(m.channelId, sequence + 1);
        const before = this.out.position();
        await this.writer.addMessage({ channelId: m.channelId, sequence, logTime: m.logTime, publishTime: m.logTime, data: m.data });
        this.written += 1;
        this.firstLogTime ??= m.logTime;
        if (this.lastLogTime === undefined || m.logTime > this.lastLogTime) this.lastLogTime = m.logTime;
        // The flush closed the chunk (the file grew): put it on the disk.
        if (this.flushDue && this.out.position() !== before) {
          this.flushDue = false;
          await this.out.sync();
          this.syncCount += 1;
        }
      }
    } catch (e) {
      this.fail(ioReason(e));
    } finally {
      this.pumping = undefined;
    }
    if (this.queue.length > 0 && this.state === 'recording') this.pumping = this.pump();
  }

  /** Waits until everything queued so far is written (not synced). */
  async drain(): Promise<void> {
    while (this.pumping) await this.pumping;
  }

  summary(closeMs = 0): RecordingSummary {
    const durationS = this.firstLogTime === undefined || this.lastLogTime === undefined ? 0 : Number(this.lastLogTime - this.firstLogTime) / 1e9;
    return {
      file: this.opts.file,
      status: this.state,
      failure: this.failureText,
      messages: this.written,
      lostMessages: this.lost,
      bytes: Number(this.out.position()),
      durationS,
      syncs: this.syncCount,
      closeMs,
      messagesByTopic: { ...this.byTopic },
      cameraCounters: { ...this.cameraCounters },
    };
  }

  /**
   * Finishes the file: writes what is queued, the end metadata (outcome, camera counters), the
   * summary and footer, and syncs. A failed recording is left as it is on the disk (a cut-off
   * file to recover) and close() reports why.
   */
  async close(end: Readonly<Record<string, string>> = {}): Promise<RecordingSummary> {
    const t0 = performance.now();
    if (this.flushTimer) clearInterval(this.flushTimer);
    for (const unsubscribe of this.cameraSubscriptions.splice(0)) unsubscribe();
    for (const cam of this.attachedCameras) this.cameraCounters[cam.info.name] = cam.counters();
    await this.drain();
    if (this.state === 'recording') {
      try {
        const counters = Object.fromEntries(Object.entries(this.cameraCounters).map(([k, v]) => [`camera.${k}`, JSON.stringify(v)]));
        await this.writer.addMetadata({ name: EPISODE_END_METADATA_NAME, metadata: new Map(Object.entries({ ...end, ...counters })) });
        await this.writer.end();
        await this.out.sync();
        this.syncCount += 1;
        this.state = 'finished';
      } catch (e) {
        this.fail(ioReason(e));
      }
    }
    await this.out.close().catch(() => undefined);
    return this.summary(performance.now() - t0);
  }
}
