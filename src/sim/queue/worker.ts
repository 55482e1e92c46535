/**
 * A queue worker (`tandem sim worker`): takes sim rollouts from the sweep queue, runs each on a
 * rollout thread, and hands the result back through BullMQ. It needs only the queue's address:
 * layout sets and ONNX models come from the queue's blob store by hash, checked on arrival.
 *
 * Up to `concurrency` rollouts run at once, one per thread; a thread keeps its policy open for
 * the next job of the same sweep. The main thread only moves jobs and renews their locks, so a
 * long rollout never lets a lock lapse (BullMQ would hand the job to another worker).
 */
import { existsSync, mkdirSync, readFileSync, renameSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { DelayedError, UnrecoverableError, Worker, type Job } from 'bullmq';
import { parseLayoutSet } from '../../layouts/layout-set.js';
import { LayoutSetError } from '../../layouts/errors.js';
import type { LayoutSet } from '../../layouts/layout-set.js';
import { CalibrationFileError, parseSimCalibration } from '../calibration-file.js';
import { simCalibrationHash } from '../calibration.js';
import type { WorkerInit } from '../sweep.js';
import type { RecordedCall } from '../recording-relay.js';
import { connectRedis, QueueError, type QueueAddress } from './connection.js';
import { getLayoutSetBlob, getVerifiedBlob, sha256Hex } from './blobs.js';
import { JobRefusedError, SIM_QUEUE_NAME, TANDEM_VERSION, validateSimJob, type RecordingRef, type SimJobData, type SimJobResult } from './job.js';
import { encodeRecording, putRecordingBlob, RecordingBlobError } from './recording-blob.js';
import { RolloutThread } from './rollout-thread.js';
import { queueVersionKey, sweepStoppedKey } from './keys.js';

export interface QueueWorkerOptions {
  readonly address: QueueAddress;
  readonly concurrency: number;
  /** How long a job stays claimed by a worker that stops answering (BullMQ's lock), ms. */
  readonly lockMs?: number;
  /** Where verified ONNX models are kept between jobs (default: a folder in the OS temp dir). */
  readonly modelCacheDir?: string;
  readonly signal?: AbortSignal;
  /** One line per event an operator may want to see (job done, job refused). */
  readonly log?: (line: string) => void;
}

export interface QueueWorkerSummary {
  readonly completed: number;
  readonly failed: number;
  /** Set when the worker stopped because the queue holds jobs of another tandem version. */
  readonly refusedVersion?: string;
}

/** Runs until the signal: returns how many jobs it finished. Throws QueueError when Redis cannot be used. */
export async function runQueueWorker(opts: QueueWorkerOptions): Promise<QueueWorkerSummary> {
  const log = opts.log ?? (() => undefined);
  const redis = await connectRedis(opts.address);
  const stamp = await redis.get(queueVersionKey());
  if (stamp !== null && stamp !== TANDEM_VERSION) {
    redis.disconnect();
    throw new QueueError(`The queue at ${opts.address.shown} holds jobs of tandem ${stamp}; this worker is tandem ${TANDEM_VERSION}: start a tandem ${stamp} worker for them.`);
  }
  const modelDir = opts.modelCacheDir ?? join(tmpdir(), 'tandem-worker-models');
  const layoutSets = new Map<string, LayoutSet>();
  const threads: RolloutThread[] = [];
  let completed = 0;
  let failed = 0;
  let refusedVersion: string | undefined;
  let closing: Promise<void> | undefined;

  const layoutSetFor = async (sha256: string): Promise<LayoutSet> => {
    const cached = layoutSets.get(sha256);
    if (cached) return cached;
    const text = await getLayoutSetBlob(redis, sha256);
    let set: LayoutSet;
    try {
      set = parseLayoutSet(text, `layout set ${sha256.slice(0, 12)}… from the queue`);
    } catch (e) {
      if (e instanceof LayoutSetError) throw new JobRefusedError(e.message);
      throw e;
    }
    if (set.sha256 !== sha256) throw new JobRefusedError(`The layout set stored under ${sha256.slice(0, 12)}… names itself ${set.sha256.slice(0, 12)}…; this worker refuses it.`);
    layoutSets.set(sha256, set);
    return set;
  };

  /** The ONNX model of a job as a local file, its bytes checked against the hash the job names. */
  const modelFileFor = async (sha256: string): Promise<string> => {
    const file = join(modelDir, `${sha256}.onnx`);
    if (existsSync(file) && sha256Hex(readFileSync(file)) === sha256) return file;
    const bytes = await getVerifiedBlob(redis, sha256, 'ONNX model');
    mkdirSync(modelDir, { recursive: true });
    // Written aside and renamed, so a second worker process never opens half a file.
    const part = `${file}.${process.pid}.part`;
    writeFileSync(part, bytes);
    renameSync(part, file);
    return file;
  };

  const initFor = async (data: SimJobData): Promise<WorkerInit> => {
    const layoutSet = await layoutSetFor(data.layoutSetSha256);
    if (data.layoutIndex >= layoutSet.layouts.length) throw new JobRefusedError(`The job asks for layout ${data.layoutIndex}; its set has ${layoutSet.layouts.length}.`);
    let calibration;
    try {
      calibration = parseSimCalibration(JSON.stringify(data.calibration), 'the job\'s sim calibration');
    } catch (e) {
      if (e instanceof CalibrationFileError) throw new JobRefusedError(e.message);
      throw e;
    }
    if (simCalibrationHash(calibration) !== data.calibrationSha256) throw new JobRefusedError(`The job's sim calibration does not hash to the ${data.calibrationSha256.slice(0, 12)}… it claims.`);
    const policySpec = data.policy.kind === 'spec' ? data.policy.spec : `onnx:${await modelFileFor(data.policy.sha256)}`;
    return { layoutSet, policySpec, seconds: data.seconds, controlHz: data.controlHz, calibration, cwd: modelDir, record: data.record === true };
  };

  /** A free thread with this setup open, else a new one (replacing an idle thread of another setup). */
  const threadFor = async (key: string, init: WorkerInit): Promise<RolloutThread> => {
    for (let i = threads.length - 1; i >= 0; i--) if (!threads[i].alive) threads.splice(i, 1);
    const same = threads.find((t) => !t.busy && t.key === key);
    if (same) return same;
    if (threads.length >= opts.concurrency) {
      const idle = threads.findIndex((t) => !t.busy);
      if (idle >= 0) {
        const [old] = threads.splice(idle, 1);
        await old.close();
      }
    }
    const t = new RolloutThread(key, init);
    threads.push(t);
    return t;
  };

  const processJob = async (job: Job, token?: string): Promise<SimJobResult> => {
    let data: SimJobData;
    try {
      data = validateSimJob(job.data, String(job.id));
    } catch (e) {
      const version = (job.data as { tandemVersion?: unknown } | undefined)?.tandemVersion;
      if (e instanceof JobRefusedError && version !== TANDEM_VERSION && typeof version === 'string') {
        // Another tandem's job: leave it for a worker of that version, and stop taking jobs here.
        refusedVersion = version;
        log(`${e.message} Stopping this worker; the job goes back to the queue.`);
        await job.moveToDelayed(Date.now() + 2000, token);
        void stop();
        throw new DelayedError();
      }
      throw new UnrecoverableError((e as Error).message);
    }
    if ((await redis.exists(sweepStoppedKey(data.sweepId))) === 1) return { kind: 'stopped' };
    let init: WorkerInit;
    try {
      init = await initFor(data);
    } catch (e) {
      // A payload or blob that fails its checks fails the same way every time: no retries.
      if (e instanceof JobRefusedError) throw new UnrecoverableError(e.message);
      throw e;
    }
    log(`rollout ${data.sweepId} layout ${data.layoutIndex} repeat ${data.repeat}: started (job ${String(job.id)})`);
    const key = `${data.sweepId}|${init.policySpec}|${init.record ? 'record' : ''}`;
    const thread = await threadFor(key, init);
    thread.busy = true;
    // The coordinator's Ctrl-C stops its sweep: a rollout of it still running here stops too.
    const watch = setInterval(() => {
      void redis.exists(sweepStoppedKey(data.sweepId)).then((n) => {
        if (n === 1) thread.stop();
      }, () => undefined);
    }, 1000);
    try {
      // Each job carries its own calibration (a randomized sweep draws one per job); the thread
      // keeps the sweep's setup open and runs this job on this job's world.
      const world = { calibration: init.calibration!, ...(data.placement ? { placement: data.placement } : {}), ...(data.look ? { look: data.look } : {}) };
      const out = await thread.run({ jobId: 0, layoutIndex: data.layoutIndex, repeat: data.repeat, seed: data.seed, world });
      if (out.kind !== 'rollout') return out;
      log(`rollout ${data.sweepId} layout ${data.layoutIndex} repeat ${data.repeat}: ${out.rollout.status} (${(out.rollout.wallMs / 1000).toFixed(1)} s)`);
      // The calls never go into BullMQ's result: they travel as a blob the result names.
      const { recorded, ...rollout } = out.rollout;
      if (!data.record) return { kind: 'rollout', rollout };
      // A sweep stopped while this rollout ran to its end collects nothing more: no blob to leave behind.
      if ((await redis.exists(sweepStoppedKey(data.sweepId))) === 1) return { kind: 'rollout', rollout, recording: { refused: 'its sweep was stopped before it was collected.' } };
      return { kind: 'rollout', rollout, recording: await storeRecording(data, recorded) };
    } finally {
      clearInterval(watch);
      thread.busy = false;
    }
  };

  /** A recorded rollout's calls into the queue's store, or the sentence saying why they are not there. */
  const storeRecording = async (data: SimJobData, calls: readonly RecordedCall[] | undefined): Promise<RecordingRef> => {
    if (!calls) return { refused: 'its rollout thread kept no recording.' };
    let bytes: Buffer;
    try {
      bytes = await encodeRecording({ sweepId: data.sweepId, layoutIndex: data.layoutIndex, repeat: data.repeat }, calls);
    } catch (e) {
      if (e instanceof RecordingBlobError) {
        log(`rollout ${data.sweepId} layout ${data.layoutIndex} repeat ${data.repeat}: not recorded: ${e.message}`);
        return { refused: e.message };
      }
      throw e;
    }
    // A Redis that fails here fails the job, which is retried: the rollout reruns and records again.
    return { sha256: await putRecordingBlob(redis, bytes), bytes: bytes.length };
  };

  const workerConnection = redis.duplicate();
  const worker = new Worker(SIM_QUEUE_NAME, processJob, {
    connection: workerConnection,
    concurrency: opts.concurrency,
    lockDuration: opts.lockMs ?? 30_000,
    stalledInterval: opts.lockMs ?? 30_000,
    // A worker killed mid-rollout leaves its job stalled: it goes back to the queue once; killed
    // twice, it fails (and ends in the store as an invalid rollout with that reason).
    maxStalledCount: 2,
  });
  worker.on('completed', () => (completed += 1));
  worker.on('failed', (job, e) => {
    if (e instanceof DelayedError || e.name === 'DelayedError') return;
    failed += 1;
    log(`job ${job?.id ?? '?'} failed (attempt ${job?.attemptsMade ?? '?'}): ${e.message}`);
  });
  worker.on('error', (e) => log(`queue worker: ${e.message}`));

  let closed!: () => void;
  const done = new Promise<void>((resolve) => (closed = resolve));
  const stop = (): Promise<void> => {
    closing ??= (async () => {
      await worker.close();
      await Promise.all(threads.map((t) => t.close()));
      // BullMQ leaves a connection it was handed open.
      workerConnection.disconnect();
      redis.disconnect();
      closed();
    })();
    return closing;
  };
  opts.signal?.addEventListener('abort', () => void stop(), { once: true });
  if (opts.signal?.aborted) void stop();
  await worker.waitUntilReady();
  log(`tandem ${TANDEM_VERSION} worker on ${opts.address.shown}, ${opts.concurrency} rollout thread${opts.concurrency === 1 ? '' : 's'}`);
  await done;
  return { completed, failed, refusedVersion };
}
