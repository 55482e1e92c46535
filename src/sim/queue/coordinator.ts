/**
 * The coordinator of a sweep over the job queue (`tandem sim sweep … --queue`): it puts one job
 * per (layout, repeat) on the queue and collects the results as workers finish them, handing
 * each to `onRollout` (the caller stores it) — the same shape as the in-process runSweep.
 *
 * Results stay in Redis until collected and stored, so a coordinator killed mid-sweep loses
 * nothing: run again, it enqueues only what is neither stored nor queued (job ids are per
 * (sweep, layout, repeat)) and collects what finished meanwhile. Delivery is at least once; the
 * store keeps one row per (sweep, layout, repeat), and `onRollout` says whether a result was new.
 *
 * Stopping (the signal) removes the sweep's jobs no worker has started, marks the sweep stopped
 * so workers stop its running rollouts, and returns what was collected. With Redis unreachable
 * the stop waits for nothing: the jobs stay queued, and the same command resumes the sweep.
 *
 * A Redis that goes away mid-sweep is said once and waited for; back, it may have lost what it
 * held (no persistence): the coordinator queues again every job it has not collected, which adds
 * nothing for a job Redis still has.
 */
import { EPISODE_CONTROL_HZ } from '../../rollout/run-episode.js';
import { performance } from 'node:perf_hooks';
import { Queue } from 'bullmq';
import type { Redis } from 'ioredis';
import type { LayoutSet } from '../../layouts/layout-set.js';
import { serializeLayoutSet } from '../../layouts/layout-set.js';
import { simCalibrationHash, type SimCalibration } from '../calibration.js';
import type { SweepJob, SweepRollout } from '../sweep.js';
import type { RandomizedWorld } from '../randomization.js';
import { connectRedis, QueueError, unreachableReason, type QueueAddress } from './connection.js';
import { RedisLink } from './redis-link.js';
import { orStop, STOPPED, within } from './bounded.js';
import { blobKey, keepBlobs, layoutSetKey, putBlob, putLayoutSetBlob } from './blobs.js';
import {
  rolloutKey,
  simJobId,
  SIM_JOB_FORMAT,
  SIM_QUEUE_NAME,
  TANDEM_VERSION,
  type JobPolicy,
  type RecordingRef,
  type SimJobData,
  type SimJobResult,
} from './job.js';
import { queueVersionKey, sweepStoppedKey } from './keys.js';
import {
  decodeRecording,
  deleteRecordingBlob,
  getRecordingBlob,
  RECORDING_LIMIT_BYTES,
  RecordingBlobError,
} from './recording-blob.js';
import type { RecordedCall } from '../recording-relay.js';

/**
 * A collected rollout's recording (a sweep that records): its calls, fetched from the queue's
 * store and checked, or the one sentence saying why there are none.
 */
export type CollectedRecording = { readonly calls: readonly RecordedCall[] } | { readonly problem: string };

export interface QueuedSweepOptions {
  readonly address: QueueAddress;
  readonly sweepId: string;
  readonly layoutSet: LayoutSet;
  /** A registry spec that loads nothing from disk, or ONNX bytes (sent by hash). */
  readonly policy:
    | { readonly kind: 'spec'; readonly spec: string }
    | { readonly kind: 'onnx'; readonly bytes: Uint8Array };
  readonly repeats: number;
  readonly seconds: number;
  readonly controlHz?: number;
  readonly calibration: SimCalibration;
  /** Each job's own world (domain randomization), drawn here; default the calibration above. */
  readonly worldFor?: (job: SweepJob) => RandomizedWorld;
  /** "layout/repeat" keys already in the store (a resumed sweep): not enqueued again. */
  readonly alreadyStored: ReadonlySet<string>;
  /** Tries per job before it ends as an invalid rollout (default 3). */
  readonly attempts?: number;
  readonly signal?: AbortSignal;
  /** Workers keep each rollout's recording calls; onRollout gets them (or why not) to write its episode file. */
  readonly record?: boolean;
  /**
   * Store one collected rollout; return false when the store already had it (a duplicate
   * delivery). When the sweep records, a rollout not collected before comes with its recording
   * (one a worker ran; not a failed job): the job and its blob leave Redis once this resolves,
   * so write the episode file before resolving — a coordinator killed meanwhile collects it again.
   */
  readonly onRollout: (r: SweepRollout, recording?: CollectedRecording) => boolean | Promise<boolean>;
  readonly onProgress?: (done: number, total: number) => void;
  /** Said once when no worker is listening on the queue. */
  readonly onNoWorkers?: () => void;
  /** How often to look for finished jobs, ms (default 200). */
  readonly pollMs?: number;
  /** One line per event: Redis lost and back, a job stored as failed. */
  readonly log?: (line: string) => void;
}

export interface QueuedSweepOutcome {
  /** Rollouts collected and newly stored by this run. */
  readonly rollouts: SweepRollout[];
  readonly total: number;
  /** Stored for this sweep now, by this run and earlier ones. */
  readonly stored: number;
  readonly stopped: boolean;
  /** Results that arrived for a (layout, repeat) already stored, and were dropped. */
  readonly duplicates: number;
  readonly wallMs: number;
  /** Stopped while Redis could not be reached: the sweep's jobs are still queued, the sweep can be resumed. */
  readonly stoppedWithoutRedis: boolean;
}

function jobLabel(data: SimJobData): string {
  const policy = data.policy.kind === 'spec' ? data.policy.spec : `onnx:${data.policy.sha256.slice(0, 12)}…`;
  return `job ${simJobId(data.sweepId, data.layoutIndex, data.repeat)} (layout ${data.layoutIndex} repeat ${data.repeat}, ${policy})`;
}

/** The rollout the store keeps for a job that failed every attempt (a poison job, or a worker killed each time). */
function failedRollout(
  data: SimJobData,
  tier: number,
  attempts: number,
  reason: string,
  seconds: number,
  controlHz: number,
  calibrationSha256: string,
): SweepRollout {
  return {
    job: { jobId: 0, layoutIndex: data.layoutIndex, repeat: data.repeat, seed: data.seed },
    tier,
    status: 'invalid',
    outcome: 'worker-failed',
    reason: `sweep job failed on ${attempts} attempt${attempts === 1 ? '' : 's'}: ${reason}`,
    finalStateHash: '',
    episodeSeconds: seconds,
    controlHz,
    policyName: '',
    policyCheckpointSha256: '',
    calibrationSha256,
    physicsSteps: 0,
    wallMs: 0,
    observations: 0,
    cameraFrames: 0,
  };
}

const STATUSES = new Set(['valid', 'invalid', 'aborted']);

/** A finished job's recording from the queue's store, checked against its hash and its rollout; never throws a RecordingBlobError. */
async function collectRecording(
  redis: Redis,
  data: SimJobData,
  ref: RecordingRef | undefined,
): Promise<CollectedRecording> {
  if (ref === undefined || ref === null || typeof ref !== 'object')
    return { problem: 'its worker returned no recording (a worker of an older tandem?).' };
  if ('refused' in ref)
    return { problem: typeof ref.refused === 'string' ? ref.refused : 'its worker did not record it.' };
  if (typeof ref.sha256 !== 'string' || !/^[0-9a-f]{64}$/.test(ref.sha256))
    return { problem: 'its worker named its recording by no valid SHA-256.' };
  if (!(Number.isSafeInteger(ref.bytes) && ref.bytes <= RECORDING_LIMIT_BYTES))
    return {
      problem: `its worker says its recording is ${String(ref.bytes)} bytes; a queued rollout's is at most ${RECORDING_LIMIT_BYTES}.`,
    };
  try {
    const bytes = await getRecordingBlob(redis, ref.sha256);
    return {
      calls: await decodeRecording(bytes, {
        sweepId: data.sweepId,
        layoutIndex: data.layoutIndex,
        repeat: data.repeat,
      }),
    };
  } catch (e) {
    if (e instanceof RecordingBlobError) return { problem: e.message };
    throw e;
  }
}

/** The hash of the recording blob a finished job's result names, when it names a well-formed one. */
function recordingBlobOf(result: SimJobResult | null | undefined): string | undefined {
  const ref = result?.kind === 'rollout' ? result.recording : undefined;
  return ref && 'sha256' in ref && typeof ref.sha256 === 'string' && /^[0-9a-f]{64}$/.test(ref.sha256)
    ? ref.sha256
    : undefined;
}

function sleep(ms: number, signal?: AbortSignal): Promise<void> {
  return new Promise((resolve) => {
    const t = setTimeout(done, ms);
    function done(): void {
      clearTimeout(t);
      signal?.removeEventListener('abort', done);
      resolve();
    }
    signal?.addEventListener('abort', done, { once: true });
  });
}

/** Refuses a queue that holds jobs of another tandem version; stamps it with ours otherwise. */
async function claimQueueVersion(redis: Redis, queue: Queue, address: QueueAddress): Promise<void> {
  const stamp = await redis.get(queueVersionKey());
  if (stamp !== null && stamp !== TANDEM_VERSION) {
    const counts = await queue.getJobCounts('waiting', 'active', 'delayed', 'prioritized', 'completed', 'failed');
    const held = Object.values(counts).reduce((a, b) => a + b, 0);
    if (held > 0) {
      throw new QueueError(
        `The queue at ${address.shown} holds ${held} job${held === 1 ? '' : 's'} of tandem ${stamp}; this is tandem ${TANDEM_VERSION}: let tandem ${stamp} finish them, or use another database (redis://HOST:PORT/1).`,
      );
    }
  }
  await redis.set(queueVersionKey(), TANDEM_VERSION);
}

/** Checks the queue can be used by this tandem (reachable, password, version) before anything is stored. */
export async function checkQueue(address: QueueAddress): Promise<void> {
  const redis = await connectRedis(address);
  const queueConnection = redis.duplicate();
  const queue = new Queue(SIM_QUEUE_NAME, { connection: queueConnection });
  try {
    await claimQueueVersion(redis, queue, address);
  } finally {
    await queue.close().catch(() => undefined);
    // BullMQ leaves a connection it was handed open.
    queueConnection.disconnect();
    redis.disconnect();
  }
}

export async function runQueuedSweep(opts: QueuedSweepOptions): Promise<QueuedSweepOutcome> {
  const t0 = performance.now();
  const total = opts.layoutSet.layouts.length * opts.repeats;
  const attempts = opts.attempts ?? 3;
  const calibrationSha256 = simCalibrationHash(opts.calibration);
  const controlHz = opts.controlHz ?? EPISODE_CONTROL_HZ;
  const log = opts.log ?? (() => undefined);
  const redis = await connectRedis(opts.address);
  const queueConnection = redis.duplicate();
  let requeue = false;
  const link = new RedisLink({ address: opts.address, log, onBack: () => (requeue = true) });
  link.watch(redis);
  link.watch(queueConnection);
  const queue = new Queue(SIM_QUEUE_NAME, { connection: queueConnection });
  // Connection errors are the link's to say, once.
  queue.on('error', (e: Error) => {
    if (unreachableReason(e) !== undefined) link.failed(e);
    else log(`queue: ${e.message.split('\n')[0]}`);
  });
  const rollouts: SweepRollout[] = [];
  const collected = new Set(opts.alreadyStored);
  let duplicates = 0;
  let stopped = false;
  let stoppedWithoutRedis = false;
  const signal = opts.signal;
  try {
    let policy: JobPolicy = opts.policy.kind === 'spec' ? opts.policy : { kind: 'onnx', sha256: '' };
    /** Stamps the queue, puts the blobs, and adds every job not collected yet (one already queued is not added twice). */
    const enqueue = async (): Promise<void> => {
      await claimQueueVersion(redis, queue, opts.address);
      await putLayoutSetBlob(redis, opts.layoutSet.sha256, serializeLayoutSet(opts.layoutSet));
      if (opts.policy.kind === 'onnx') policy = { kind: 'onnx', sha256: await putBlob(redis, opts.policy.bytes) };
      const jobs = [];
      // Repeat-major, as in-process: a stopped sweep covers the layouts evenly.
      for (let r = 0; r < opts.repeats; r++) {
        for (let i = 0; i < opts.layoutSet.layouts.length; i++) {
          if (collected.has(rolloutKey(i, r))) continue;
          const world = opts.worldFor?.({ jobId: 0, layoutIndex: i, repeat: r, seed: r });
          const data: SimJobData = {
            format: SIM_JOB_FORMAT,
            tandemVersion: TANDEM_VERSION,
            sweepId: opts.sweepId,
            layoutSetSha256: opts.layoutSet.sha256,
            layoutIndex: i,
            repeat: r,
            seed: r,
            policy,
            calibration: world?.calibration ?? opts.calibration,
            calibrationSha256: world ? simCalibrationHash(world.calibration) : calibrationSha256,
            ...(world?.placement ? { placement: world.placement } : {}),
            ...(world?.look ? { look: world.look } : {}),
            seconds: opts.seconds,
            ...(opts.controlHz === undefined ? {} : { controlHz: opts.controlHz }),
            ...(opts.record ? { record: true as const } : {}),
          };
          jobs.push({
            name: 'sim-rollout',
            data,
            opts: {
              jobId: simJobId(opts.sweepId, i, r),
              attempts,
              backoff: { type: 'exponential', delay: 500 },
              // Kept until collected; a week bounds what a sweep nobody resumes leaves in Redis.
              removeOnComplete: { age: 7 * 24 * 3600 },
              removeOnFail: { age: 7 * 24 * 3600 },
            },
          });
        }
      }
      // addBulk with known ids adds nothing for a job already queued (a resumed sweep, a Redis that kept its data).
      for (let k = 0; k < jobs.length; k += 500) await queue.addBulk(jobs.slice(k, k + 500));
    };
    if ((await orStop(enqueue(), signal)) === STOPPED) stopped = true;
    const blobKeys = [layoutSetKey(opts.layoutSet.sha256), ...(policy.kind === 'onnx' ? [blobKey(policy.sha256)] : [])];
    let keptAt = performance.now();
    opts.onProgress?.(collected.size, total);
    let warnedNoWorkers = false;
    let idleSince = performance.now();
    while (!stopped && collected.size < total) {
      if (signal?.aborted) {
        stopped = true;
        break;
      }
      if (requeue) {
        requeue = false;
        // Workers reconnect too: give them the same few seconds before saying none is there.
        idleSince = performance.now();
        if ((await orStop(enqueue(), signal)) === STOPPED) continue;
      }
      // Asked apart: a job that failed an attempt and then succeeded still carries its old failedReason.
      const completedJobs = await orStop(queue.getJobs(['completed'], 0, 499, true), signal);
      const failedJobs =
        completedJobs === STOPPED ? STOPPED : await orStop(queue.getJobs(['failed'], 0, 499, true), signal);
      if (completedJobs === STOPPED || failedJobs === STOPPED) continue;
      const finished = [
        ...completedJobs.map((job) => ({ job, failed: false })),
        ...failedJobs.map((job) => ({ job, failed: true })),
      ];
      let progressed = false;
      for (const { job, failed } of finished) {
        // Writing episode files makes a batch slow to collect: Ctrl-C does not wait for the rest of it.
        if (signal?.aborted) break;
        const data = job.data as SimJobData | undefined;
        if (
          data?.sweepId !== opts.sweepId ||
          !Number.isSafeInteger(data.layoutIndex) ||
          data.layoutIndex >= opts.layoutSet.layouts.length
        )
          continue;
        const tier = opts.layoutSet.layouts[data.layoutIndex].tier;
        let rollout: SweepRollout | undefined;
        let recordingSha: string | undefined;
        let recordingOf: (() => Promise<CollectedRecording>) | undefined;
        if (!failed) {
          const result = job.returnvalue as SimJobResult | null;
          const ref = result?.kind === 'rollout' ? result.recording : undefined;
          recordingSha = recordingBlobOf(result);
          if (result?.kind === 'rollout' && STATUSES.has(result.rollout?.status) && result.rollout.tier === tier) {
            rollout = {
              ...result.rollout,
              job: { jobId: 0, layoutIndex: data.layoutIndex, repeat: data.repeat, seed: data.seed },
            };
            if (opts.record) recordingOf = () => collectRecording(redis, data, ref);
          } else if (result?.kind !== 'stopped') {
            rollout = failedRollout(
              data,
              tier,
              job.attemptsMade,
              'the worker returned no readable rollout',
              opts.seconds,
              controlHz,
              calibrationSha256,
            );
          }
        } else {
          rollout = failedRollout(
            data,
            tier,
            Math.max(job.attemptsMade, 1),
            job.failedReason ?? 'no reason given',
            opts.seconds,
            controlHz,
            calibrationSha256,
          );
        }
        if (rollout) {
          const key = rolloutKey(data.layoutIndex, data.repeat);
          // Stored first, removed from Redis after: a crash between the two collects it again, and the store keeps one.
          // A (layout, repeat) already stored is a duplicate delivery: its recording is not fetched.
          const recording = recordingOf && !collected.has(key) ? await orStop(recordingOf(), signal) : undefined;
          if (recording === STOPPED) break;
          const isNew = await opts.onRollout(rollout, recording);
          if (isNew) rollouts.push(rollout);
          else duplicates += 1;
          if (isNew && rollout.outcome === 'worker-failed')
            log(`${jobLabel(data)}: stored invalid: ${rollout.reason ?? 'the job failed'}`);
          if (!collected.has(key)) {
            collected.add(key);
            progressed = true;
          }
        }
        // The recording leaves before its job: killed between the two, the job is collected again as a duplicate.
        if (recordingSha)
          await orStop(
            deleteRecordingBlob(redis, recordingSha).catch(() => undefined),
            signal,
          );
        await orStop(
          queue.remove(String(job.id)).catch(() => undefined),
          signal,
        );
      }
      if (progressed) {
        idleSince = performance.now();
        if (idleSince - keptAt > 3600_000) {
          // A sweep longer than the blobs' week must not lose them under its last jobs.
          await orStop(keepBlobs(redis, blobKeys), signal);
          keptAt = idleSince;
        }
        opts.onProgress?.(collected.size, total);
        continue;
      }
      if (
        !warnedNoWorkers &&
        link.reachable &&
        performance.now() - idleSince > 3000 &&
        (await orStop(queue.getWorkersCount(), signal)) === 0
      ) {
        warnedNoWorkers = true;
        opts.onNoWorkers?.();
      }
      await sleep(opts.pollMs ?? 200, signal);
    }
    if (stopped && !link.reachable) stoppedWithoutRedis = true;
    else if (stopped) {
      // Workers skip and stop the sweep's jobs; the ones nobody has started leave the queue now.
      // Bounded: a Redis that goes away meanwhile leaves them queued, as a stop without Redis does.
      const cleanup = async (): Promise<void> => {
        await redis.set(sweepStoppedKey(opts.sweepId), '1', 'EX', 7 * 24 * 3600);
        for (let r = 0; r < opts.repeats; r++) {
          for (let i = 0; i < opts.layoutSet.layouts.length; i++) {
            if (collected.has(rolloutKey(i, r))) continue;
            const id = simJobId(opts.sweepId, i, r);
            if (opts.record) {
              // A rollout that finished but is not collected takes its recording with it.
              const sha = recordingBlobOf(
                (await queue.getJob(id).catch(() => undefined))?.returnvalue as SimJobResult | null | undefined,
              );
              if (sha) await deleteRecordingBlob(redis, sha).catch(() => undefined);
            }
            await queue.remove(id).catch(() => undefined);
          }
        }
        return undefined;
      };
      const done = await within(
        cleanup().then(() => true),
        3000,
      );
      if (done !== true) stoppedWithoutRedis = true;
    }
  } finally {
    link.close();
    await within(
      queue.close().catch(() => undefined),
      1000,
    );
    queueConnection.disconnect();
    redis.disconnect();
  }
  return {
    rollouts,
    total,
    stored: collected.size,
    stopped,
    duplicates,
    wallMs: performance.now() - t0,
    stoppedWithoutRedis,
  };
}
