/**
 * One episode file, written as the episode happens: ROS 2 profile MCAP, CDR messages, chunks with
 * message indexes and statistics (what `ros2 bag info` and Foxglove need to read it in time order).
 *
 * - The control loop never waits for the disk, nor for the MCAP work: every message is encoded
 *   here synchronously (a copy), batched, and handed to the process's writer thread
 *   (writer-thread.ts), which builds the chunks, computes their CRCs and writes the file.
 * - Crash safety: at least once a second the open chunk is closed and the file fdatasync'd, so a
 *   SIGKILL or a power cut loses at most the last second; `recoverEpisodeFile` rewrites the
 *   readable prefix of a cut-off file into a finished one.
 * - A write that fails (a full disk, an I/O error) stops the recording, never the episode: the
 *   recorder says so in one sentence and every byte already written stays in the file.
 */
import { Worker } from 'node:worker_threads';
import type { RigCommand, RigModel, RigState, SafetyEvent } from '../rig/contract.js';
import type { Camera, CameraCounters, CameraFrame, CameraInfo } from '../rig/camera.js';
import type { RigCycle, RigCycleSource } from '../rig/rig-cycle-ring.js';
import { CDR, SCHEMAS, offeredQosYaml, rosTime, type SchemaKey } from './ros2-messages.js';
import {
  EPISODE_METADATA_NAME,
  EPISODE_END_METADATA_NAME,
  TOPICS,
  cameraTopic,
  jointNames,
  type EventKind,
} from './episode-format.js';
import type { ChannelSpec, FromWriter, QueuedMessage, ToWriter } from './writer-protocol.js';

/** One control step's timing, as the rollout loop hands it over (src/rollout's StepTiming has this shape). */
export interface StepTimingRecord {
  readonly step: number;
  readonly chunkIndex: number;
  readonly observationToActionS: number;
  readonly frames: readonly { readonly camera: string; readonly ageS: number; readonly dropped: number }[];
}

export const RECORDER_LIBRARY = 'tandem episode recorder (@mcap/core)';

/** How long encoded messages wait to be handed over in one batch. */
const BATCH_MS = 20;

/** The process's one writer thread, started with the first recording and let go when none is open. */
class WriterThread {
  private static shared: WriterThread | undefined;
  private readonly worker: Worker;
  private readonly listeners = new Map<number, (m: FromWriter) => void>();
  private nextId = 1;

  private constructor() {
    this.worker = new Worker(new URL('./writer-thread-entry.mjs', import.meta.url));
    this.worker.on('message', (m: FromWriter) => this.listeners.get(m.id)?.(m));
    this.worker.on('error', (e) => {
      for (const [id, l] of this.listeners)
        l({ type: 'failed', id, reason: `the episode writer thread failed (${e.message})` });
    });
    this.worker.unref();
  }

  static get(): WriterThread {
    WriterThread.shared ??= new WriterThread();
    return WriterThread.shared;
  }

  attach(listener: (m: FromWriter) => void): number {
    const id = this.nextId++;
    this.listeners.set(id, listener);
    // A recording keeps the process alive until it is closed.
    if (this.listeners.size === 1) this.worker.ref();
    return id;
  }

  detach(id: number): void {
    this.listeners.delete(id);
    if (this.listeners.size === 0) this.worker.unref();
  }

  send(m: ToWriter, transfer: ArrayBuffer[] = []): void {
    this.worker.postMessage(m, transfer);
  }
}

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
  /** A chunk is closed early once it holds this many bytes. Default 1 MiB (a small last chunk keeps close() short). */
  readonly chunkBytes?: number;
  /** Queued bytes the disk may fall behind by before the recording stops (the disk is too slow). Default 512 MiB. */
  readonly maxQueuedBytes?: number;
  /**
   * A rig thread's ring of motor cycles (src/rig/rig-cycle-ring.ts): every cycle is recorded on
   * /tandem/rig_cycles, drained off the rig thread's path; cycles the ring had to drop are counted
   * and said in words (an event, the end metadata, the summary's problems).
   */
  readonly rigCycles?: ReturnType<RigCycleSource['rigCycles']>;
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
  /** The rig thread's motor cycles: recorded, and lost (the ring was full); absent without a rig thread. */
  readonly rigCycles?: { readonly recorded: number; readonly lost: number };
  /** What the finished file lacks, one sentence each (it is still a good file). */
  readonly problems: readonly string[];
}

/** How often the rig thread's cycle ring is drained (it holds seconds of cycles). */
const CYCLE_DRAIN_MS = 50;

export class EpisodeRecorder {
  private readonly thread = WriterThread.get();
  private readonly id: number;
  private batch: QueuedMessage[] = [];
  private batchTransfer: ArrayBuffer[] = [];
  private batchBytes = 0;
  private batchTimer: NodeJS.Timeout | undefined;
  private postedBytes = 0;
  private postedMessages = 0;
  private acked = { dataBytes: 0, fileBytes: 0, messages: 0, syncs: 0 };
  private readonly channels = new Map<string, number>();
  private readonly byTopic: Record<string, number> = {};
  private readonly cameraSubscriptions: (() => void)[] = [];
  private readonly attachedCameras: Camera[] = [];
  private readonly names: string[];
  private readonly offsetNs: bigint;
  private readonly maxQueuedBytes: number;
  private firstLogTime: bigint | undefined;
  private lastLogTime: bigint | undefined;
  private lost = 0;
  private state: RecorderStatus = 'recording';
  private failureText: string | undefined;
  private cameraCounters: Record<string, CameraCounters> = {};
  private waiters: ((m: FromWriter) => void)[] = [];
  private drainWaiters: (() => void)[] = [];
  private cycleTimer: NodeJS.Timeout | undefined;
  private cyclesRecorded = 0;
  /** Cycles without a stamp, not recorded (rigCycle says why). */
  private cyclesUnstamped = 0;
  private readonly problems: string[] = [];

  private constructor(private readonly opts: EpisodeRecorderOptions) {
    this.names = jointNames(opts.rigModel);
    this.offsetNs = BigInt(Math.round(opts.unixOffsetS * 1e9));
    this.maxQueuedBytes = opts.maxQueuedBytes ?? 512 * 1024 * 1024;
    this.id = this.thread.attach((m) => this.onWriter(m));
  }

  /**
   * Creates the file and writes its header, schemas, channels and metadata (synced), so even a
   * recording killed in its first second names what it was. Throws RecordingError when the file
   * cannot be created — before anything moves.
   */
  static async open(opts: EpisodeRecorderOptions): Promise<EpisodeRecorder> {
    const rec = new EpisodeRecorder(opts);
    const channels: ChannelSpec[] = [];
    const channel = (topic: string, key: SchemaKey, depth: number): void => {
      rec.channels.set(topic, channels.length);
      channels.push({
        topic,
        schemaName: SCHEMAS[key].name,
        schemaText: SCHEMAS[key].text,
        qosYaml: offeredQosYaml(depth),
      });
    };
    channel(TOPICS.jointStates, 'jointState', 10);
    channel(TOPICS.jointCommands, 'jointState', 10);
    channel(TOPICS.events, 'event', 100);
    channel(TOPICS.stepTiming, 'stepTiming', 10);
    if (opts.rigCycles) channel(TOPICS.rigCycles, 'rigCycle', 100);
    for (const cam of opts.cameras ?? []) channel(cameraTopic(cam.name), 'compressedImage', 5);
    const cameras = (opts.cameras ?? [])
      .map((c) => `${c.name}=${c.source} ${c.width}x${c.height}@${c.fps} ${c.format}`)
      .join('; ');
    const reply = rec.next();
    rec.thread.send({
      type: 'open',
      id: rec.id,
      file: opts.file,
      library: RECORDER_LIBRARY,
      channels,
      metadataName: EPISODE_METADATA_NAME,
      metadata: {
        ...opts.metadata,
        joint_names: rec.names.join(','),
        cameras,
        unix_offset_s: String(opts.unixOffsetS),
      },
      flushIntervalMs: (opts.flushIntervalS ?? 1) * 1000,
      chunkBytes: opts.chunkBytes ?? 1024 * 1024,
    });
    const m = await reply;
    if (m.type !== 'opened') {
      rec.thread.detach(rec.id);
      throw new RecordingError(
        `Cannot create the episode file ${opts.file}: ${m.type === 'open-failed' || m.type === 'failed' ? m.reason : 'the writer did not answer'}.`,
      );
    }
    if (opts.rigCycles) {
      opts.rigCycles.ring.start();
      rec.cycleTimer = setInterval(() => rec.drainCycles(), CYCLE_DRAIN_MS);
    }
    return rec;
  }

  /** The writer's next answer of the kinds open/close wait for. */
  private next(): Promise<FromWriter> {
    return new Promise((resolve) => this.waiters.push(resolve));
  }

  private onWriter(m: FromWriter): void {
    if (m.type === 'written') {
      this.acked = { dataBytes: m.dataBytes, fileBytes: m.fileBytes, messages: m.messages, syncs: m.syncs };
      if (this.acked.messages >= this.postedMessages) for (const w of this.drainWaiters.splice(0)) w();
      return;
    }
    if (m.type === 'failed') {
      this.fail(m.reason);
      for (const w of this.drainWaiters.splice(0)) w();
      return;
    }
    const w = this.waiters.shift();
    w?.(m);
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
    const channel = this.channels.get(topic);
    if (channel === undefined) return;
    const logTime = this.logTime(timeS);
    this.firstLogTime ??= logTime;
    if (this.lastLogTime === undefined || logTime > this.lastLogTime) this.lastLogTime = logTime;
    this.batch.push({ channel, logTime, data });
    this.batchTransfer.push(data.buffer as ArrayBuffer);
    this.batchBytes += data.byteLength;
    this.byTopic[topic] = (this.byTopic[topic] ?? 0) + 1;
    if (this.postedBytes + this.batchBytes - this.acked.dataBytes > this.maxQueuedBytes) {
      this.fail(
        `the disk fell ${Math.round((this.postedBytes - this.acked.dataBytes) / 1048576)} MiB behind the recording (too slow for this data rate)`,
      );
      return;
    }
    this.batchTimer ??= setTimeout(() => this.post(), BATCH_MS);
  }

  /** Hands the batch to the writer thread (the encoded buffers move, no copy). */
  private post(): void {
    if (this.batchTimer) clearTimeout(this.batchTimer);
    this.batchTimer = undefined;
    if (this.batch.length === 0 || this.state !== 'recording') return;
    this.thread.send({ type: 'write', id: this.id, messages: this.batch }, this.batchTransfer);
    this.postedBytes += this.batchBytes;
    this.postedMessages += this.batch.length;
    this.batch = [];
    this.batchTransfer = [];
    this.batchBytes = 0;
  }

  /**
   * Waits until everything handed over so far is written (not synced): for a producer faster than
   * real time (a sim, a bench) that must not queue a whole episode in memory.
   */
  drain(): Promise<void> {
    this.post();
    if (this.state !== 'recording' || this.acked.messages >= this.postedMessages) return Promise.resolve();
    return new Promise((resolve) => this.drainWaiters.push(resolve));
  }

  private header(timeS: number, frameId: string) {
    return { stamp: rosTime(this.logTime(timeS)), frame_id: frameId };
  }

  /** The measured state of both arms (14 joints, policy order, names from the rig model). */
  jointState(state: RigState): void {
    if (!this.accepting()) return;
    const data = CDR.writer.jointState.writeMessage({
      header: this.header(state.timeS, ''),
      name: this.names,
      position: state.position,
      velocity: state.velocity,
      effort: state.effort,
    });
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
    if (frame.format !== 'jpeg')
      throw new RecordingError(
        `Camera ${frame.camera} gives ${frame.format} frames; the recorder stores the camera's JPEG frames as they come and does not encode.`,
      );
    const data = CDR.writer.compressedImage.writeMessage({
      header: this.header(frame.arrivalS, frame.camera),
      format: 'jpeg',
      data: frame.data,
    });
    this.enqueue(cameraTopic(frame.camera), frame.arrivalS, data);
  }

  /** Something that happened, on the events topic (see docs/recording.md for the kinds). */
  event(timeS: number, kind: EventKind, source: string, message: string, detail: Record<string, unknown> = {}): void {
    if (!this.accepting()) return;
    const data = CDR.writer.event.writeMessage({
      header: this.header(timeS, ''),
      kind,
      source,
      message,
      detail_json: JSON.stringify(detail),
    });
    this.enqueue(TOPICS.events, timeS, data);
  }

  /** One control step's timing: the age of the observation behind its action, and of that observation's camera frames. */
  stepTiming(timeS: number, t: StepTimingRecord): void {
    if (!this.accepting()) return;
    const data = CDR.writer.stepTiming.writeMessage({
      header: this.header(timeS, ''),
      step: t.step,
      chunk_index: t.chunkIndex,
      observation_to_action_s: t.observationToActionS,
      camera: t.frames.map((f) => f.camera),
      frame_age_s: Float64Array.from(t.frames, (f) => f.ageS),
      dropped: Uint32Array.from(t.frames, (f) => f.dropped),
    });
    this.enqueue(TOPICS.stepTiming, timeS, data);
  }

  /** Records every cycle the rig thread kept since the last drain. */
  private drainCycles(): void {
    const feed = this.opts.rigCycles;
    if (!feed) return;
    const offsetS = feed.clockOffsetS();
    feed.ring.drain((c) => this.rigCycle(c, offsetS));
  }

  private rigCycle(c: RigCycle, offsetS: number): void {
    if (!this.accepting()) return;
    // A cycle the rig thread ran before its first reading has no stamp (0, not epoch seconds).
    // Recorded, its log time falls before 1970, which MCAP's unsigned stamps wrap to the end of
    // time: the chunk holding it then claims to start there, and an indexed reader (Foxglove, the
    // mcap CLI) reading in time order lost that chunk's other messages — seen: a takeover's first
    // events missing from a busy machine's recording. It carries no reading worth keeping.
    if (!(c.timeS > 0)) {
      this.cyclesUnstamped++;
      return;
    }
    const timeS = c.timeS + offsetS;
    const data = CDR.writer.rigCycle.writeMessage({
      header: this.header(timeS, ''),
      cycle: c.cycle,
      mode: c.mode,
      position: c.position,
      velocity: c.velocity,
      effort: c.effort,
      applied_position: c.appliedPosition,
      applied_velocity: c.appliedVelocity,
      applied_effort: c.appliedTorque,
    });
    this.cyclesRecorded++;
    this.enqueue(TOPICS.rigCycles, timeS, data);
  }

  /** The rig cycles the ring had to drop, said once when the recording closes. */
  private closeCycles(): void {
    const feed = this.opts.rigCycles;
    if (!feed) return;
    if (this.cycleTimer) clearInterval(this.cycleTimer);
    this.cycleTimer = undefined;
    feed.ring.stop();
    this.drainCycles();
    const lost = feed.ring.lost;
    if (lost === 0) return;
    const ring = feed.ring.capacity;
    const problem =
      `The recording lacks ${lost} of the rig thread's motor cycles (${(lost / feed.rateHz).toFixed(2)} s at ${feed.rateHz} Hz) because the station's main thread did not empty ` +
      `their ring (${ring} cycles, ${(ring / feed.rateHz).toFixed(1)} s) in time; the motors were commanded throughout, only their record has gaps (see the cycle numbers).`;
    this.problems.push(problem);
    this.event(
      this.lastLogTime === undefined ? 0 : Number(this.lastLogTime - this.offsetNs) / 1e9,
      'recorder',
      'rig thread',
      problem,
      { rig_cycles_lost: lost, ring_cycles: ring },
    );
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
        this.event(Number.isFinite(atS) ? atS : clockNowS(), 'camera-lost', camera.info.name, reason, {
          counters: camera.counters(),
        });
      }),
    );
  }

  private fail(reason: string): void {
    if (this.state !== 'recording') return;
    this.state = 'failed';
    this.failureText = `Recording stopped after ${this.spanS().toFixed(1)} s because ${reason}; every byte written before is kept in ${this.opts.file} (recover it with \`tandem record recover ${this.opts.file}\`).`;
    this.lost += this.batch.length + (this.postedMessages - this.acked.messages);
    this.batch = [];
    this.batchTransfer = [];
    this.batchBytes = 0;
  }

  /** Seconds from the first message handed over to the last. */
  private spanS(): number {
    return this.firstLogTime === undefined || this.lastLogTime === undefined
      ? 0
      : Number(this.lastLogTime - this.firstLogTime) / 1e9;
  }

  summary(closeMs = 0): RecordingSummary {
    const durationS = this.spanS();
    return {
      file: this.opts.file,
      status: this.state,
      failure: this.failureText,
      messages: this.acked.messages,
      lostMessages: this.lost,
      bytes: this.acked.fileBytes,
      durationS,
      syncs: this.acked.syncs,
      closeMs,
      messagesByTopic: { ...this.byTopic },
      cameraCounters: { ...this.cameraCounters },
      ...(this.opts.rigCycles
        ? { rigCycles: { recorded: this.cyclesRecorded, lost: this.opts.rigCycles.ring.lost } }
        : {}),
      problems: [...this.problems],
    };
  }

  /**
   * Finishes the file: writes what is queued, the end metadata (outcome, camera counters), the
   * summary and footer, and syncs. A failed recording is left as it is on the disk (a cut-off
   * file to recover) and close() reports why.
   */
  async close(end: Readonly<Record<string, string>> = {}): Promise<RecordingSummary> {
    const t0 = performance.now();
    for (const unsubscribe of this.cameraSubscriptions.splice(0)) unsubscribe();
    for (const cam of this.attachedCameras) this.cameraCounters[cam.info.name] = cam.counters();
    this.closeCycles();
    this.post();
    const counters = Object.fromEntries(
      Object.entries(this.cameraCounters).map(([k, v]) => [`camera.${k}`, JSON.stringify(v)]),
    );
    if (this.opts.rigCycles) {
      counters.rig_cycles_recorded = String(this.cyclesRecorded);
      counters.rig_cycles_lost = String(this.opts.rigCycles.ring.lost);
      if (this.cyclesUnstamped > 0) counters.rig_cycles_unstamped = String(this.cyclesUnstamped);
      if (this.problems.length > 0) counters.rig_cycles_problem = this.problems[this.problems.length - 1];
    }
    const reply = this.next();
    this.thread.send({
      type: 'close',
      id: this.id,
      metadataName: EPISODE_END_METADATA_NAME,
      metadata: { ...end, ...counters },
    });
    const m = await reply;
    this.thread.detach(this.id);
    if (m.type === 'closed') {
      this.acked = { ...this.acked, fileBytes: m.fileBytes, messages: m.messages, syncs: m.syncs };
      if (m.failure) this.fail(m.failure);
      else if (this.state === 'recording') this.state = 'finished';
    }
    return this.summary(performance.now() - t0);
  }
}
