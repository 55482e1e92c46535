/**
 * A queue worker (`tandem sim worker`): takes sim rollouts from the sweep queue, runs each on a
 * rollout thread, and hands the result back through BullMQ. It needs only the queue's address:
 * layout sets and ONNX models come from the queue's blob store by hash, checked on arrival.
 *
 * Up to `concurrency` rollouts run at once, one per thread; a thread keeps its policy open for
 * the next job of the same sweep. The main thread only moves jobs and renews their locks, so a
 * long rollout never lets a lock lapse (BullMQ would hand the job to another worker).
 *
 * Stopping (the signal, or Redis away longer than `giveUpAfterMs`) is bounded whatever Redis
 * does: running rollouts' threads are terminated, their jobs go back to the queue when Redis
 * answers, and are otherwise left to BullMQ's lock expiry (another worker takes them then).
 */
import { existsSync, mkdirSync, readFileSync, renameSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { DelayedError, UnrecoverableError, WaitingError, Worker, type Job } from 'bullmq';
import type { Redis } from 'ioredis';
import { parseLayoutSet } from '../../layouts/layout-set.js';
import { LayoutSetError } from '../../layouts/errors.js';
import type { LayoutSet } from '../../layouts/layout-set.js';
import { CalibrationFileError, parseSimCalibration } from '../calibration-file.js';
import { simCalibrationHash } from '../calibration.js';
import type { WorkerInit } from '../sweep.js';
import type { RecordedCall } from '../recording-relay.js';
import { connectRedis, QueueError, REDIS_RETRY_MS, unreachableReason, type QueueAddress } from './connection.js';
import { RedisLink } from './redis-link.js';
import { orStop, STOPPED, within } from './bounded.js';
import { serveWorkerHealth, type HealthServer, type WorkerHealth } from './worker-health.js';
import { getLayoutSetBlob, getVerifiedBlob, sha256Hex } from './blobs.js';
import {
  JobRefusedError,
  SIM_QUEUE_NAME,
  TANDEM_VERSION,
  validateSimJob,
  type RecordingRef,
  type SimJobData,
  type SimJobResult,
} from './job.js';
import { deleteRecordingBlob, encodeRecording, putRecordingBlob, RecordingBlobError } from './recording-blob.js';
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
  /** One line per event an operator may want to see (job started, done, refused; Redis lost, back). */
  readonly log?: (line: string) => void;
  /** Stop when Redis has been unreachable this long, ms (default: keep retrying). */
  readonly giveUpAfterMs?: number;
  /** Answer health probes over HTTP here (worker-health.ts). */
  readonly health?: { readonly host: string; readonly port: number };
  /** Told the health server's port once it listens (a port of 0 picks a free one). */
  readonly onHealthListening?: (port: number) => void;
}

export interface QueueWorkerSummary {
  readonly completed: number;
  readonly failed: number;
  /** Set when the worker stopped because the queue holds jobs of another tandem version. */
  readonly refusedVersion?: string;
  /** True when the stop left nothing behind: every running job went back to the queue, Redis answered. */
  readonly clean: boolean;
  /** The one sentence saying how the worker stopped. */
  readonly stopped: string;
}

/** How a job's policy reads in a log line: its spec, or the ONNX model's hash. */
function policyLabel(data: SimJobData): string {
  return data.policy.kind === 'spec' ? data.policy.spec : `onnx:${data.policy.sha256.slice(0, 12)}…`;
}

/** "job ID (layout L repeat R, POLICY)": what every line about a job starts with. */
function jobLabel(id: string, data: SimJobData): string {
  return `job ${id} (layout ${data.layoutIndex} repeat ${data.repeat}, ${policyLabel(data)})`;
}

function sleep(ms: number, signal: AbortSignal): Promise<void> {
  return new Promise((resolve) => {
    const t = setTimeout(done, ms);
    function done(): void {
      clearTimeout(t);
      signal.removeEventListener('abort', done);
      resolve();
    }
    signal.addEventListener('abort', done, { once: true });
  });
}

/** A job this worker holds now. */
interface RunningJob {
  readonly id: string;
  readonly label: string;
  readonly data: SimJobData;
  readonly startedMs: number;
  thread?: RolloutThread;
  /** How its stop ended: back on the queue, or left to BullMQ's lock expiry. */
  released?: boolean;
  /** Its lock could not be renewed: the queue no longer counts it as this worker's. */
  lost?: boolean;
}

/** Runs until the signal: returns how many jobs it finished. Throws QueueError when Redis cannot be used. */
export async function runQueueWorker(opts: QueueWorkerOptions): Promise<QueueWorkerSummary> {
  const log = opts.log ?? (() => undefined);
  const lockMs = opts.lockMs ?? 30_000;
  const modelDir = opts.modelCacheDir ?? join(tmpdir(), 'tandem-worker-models');
  const layoutSets = new Map<string, LayoutSet>();
  const threads: RolloutThread[] = [];
  const running = new Map<string, RunningJob>();
  const labels = new Map<string, string>();
  const jobsInFlight = new Set<Promise<unknown>>();
  let completed = 0;
  let failed = 0;
  let refusedVersion: string | undefined;
  let state: WorkerHealth['state'] = 'connecting';
  let gaveUp = false;
  // Aborted by the caller's signal, by giving up on Redis, or by a job of another tandem.
  const stopping = new AbortController();
  const onAbort = (): void => stopping.abort();
  opts.signal?.addEventListener('abort', onAbort, { once: true });
  if (opts.signal?.aborted) stopping.abort();

  const link = new RedisLink({
    address: opts.address,
    log,
    giveUpAfterMs: opts.giveUpAfterMs,
    onGiveUp: () => {
      gaveUp = true;
      stopping.abort();
    },
  });
  const status = (): WorkerHealth => ({
    state,
    queue: opts.address.shown,
    redis: state !== 'connecting' && link.reachable ? 'reachable' : 'unreachable',
    ...(link.awaySinceMs === undefined
      ? {}
      : { redisAwaySeconds: Math.round((Date.now() - link.awaySinceMs) / 100) / 10 }),
    jobsDone: completed,
    jobsFailed: failed,
    currentJobs: [...running.values()].map((j) => ({
      id: j.id,
      layout: j.data.layoutIndex,
      repeat: j.data.repeat,
      policy: policyLabel(j.data),
      ageSeconds: Math.round((Date.now() - j.startedMs) / 100) / 10,
    })),
  });
  let health: HealthServer | undefined;
  if (opts.health) {
    health = await serveWorkerHealth(opts.health.host, opts.health.port, status);
    opts.onHealthListening?.(health.port);
  }
  const stoppedBefore = (): QueueWorkerSummary => ({
    completed,
    failed,
    clean: !gaveUp,
    stopped: gaveUp
      ? `Worker gave up: Redis at ${opts.address.shown} stayed unreachable for ${(opts.giveUpAfterMs ?? 0) / 1000} s (--give-up-after); no job was running.`
      : `Worker stopped before Redis at ${opts.address.shown} answered; no job was running.`,
  });
  try {
    // A worker may start before its Redis (a machine booting, a container started first): it waits, and says so once.
    let redis: Redis | undefined;
    while (redis === undefined) {
      // A host that does not answer holds an attempt up to its connect timeout: a stop does not wait for it.
      const attempt = connectRedis(opts.address);
      let got;
      try {
        got = await orStop(attempt, stopping.signal);
      } catch (e) {
        if (!(e instanceof QueueError) || e.unreachable === undefined) throw e;
        link.failed(e);
        await sleep(REDIS_RETRY_MS, stopping.signal);
        if (stopping.signal.aborted) return stoppedBefore();
        continue;
      }
      if (got === STOPPED) {
        attempt.then(
          (r) => r.disconnect(),
          () => undefined,
        );
        return stoppedBefore();
      }
      redis = got;
    }
    link.back();
    return await work(redis);
  } finally {
    link.close();
    opts.signal?.removeEventListener('abort', onAbort);
    await health?.close();
  }

  async function work(redis: Redis): Promise<QueueWorkerSummary> {
    const stamp = await orStop(redis.get(queueVersionKey()), stopping.signal);
    if (stamp === STOPPED) {
      redis.disconnect();
      return stoppedBefore();
    }
    if (stamp !== null && stamp !== TANDEM_VERSION) {
      redis.disconnect();
      throw new QueueError(
        `The queue at ${opts.address.shown} holds jobs of tandem ${stamp}; this worker is tandem ${TANDEM_VERSION}: start a tandem ${stamp} worker for them.`,
      );
    }
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
      if (set.sha256 !== sha256)
        throw new JobRefusedError(
          `The layout set stored under ${sha256.slice(0, 12)}… names itself ${set.sha256.slice(0, 12)}…; this worker refuses it.`,
        );
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
      if (data.layoutIndex >= layoutSet.layouts.length)
        throw new JobRefusedError(
          `The job asks for layout ${data.layoutIndex}; its set has ${layoutSet.layouts.length}.`,
        );
      let calibration;
      try {
        calibration = parseSimCalibration(JSON.stringify(data.calibration), "the job's sim calibration");
      } catch (e) {
        if (e instanceof CalibrationFileError) throw new JobRefusedError(e.message);
        throw e;
      }
      if (simCalibrationHash(calibration) !== data.calibrationSha256)
        throw new JobRefusedError(
          `The job's sim calibration does not hash to the ${data.calibrationSha256.slice(0, 12)}… it claims.`,
        );
      const policySpec =
        data.policy.kind === 'spec' ? data.policy.spec : `onnx:${await modelFileFor(data.policy.sha256)}`;
      return {
        layoutSet,
        policySpec,
        seconds: data.seconds,
        controlHz: data.controlHz,
        calibration,
        cwd: modelDir,
        record: data.record === true,
      };
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

    /** A job whose rollout this worker stops: back to the queue when Redis answers, else left to its lock's expiry. */
    const release = async (job: Job, token: string | undefined, held: RunningJob): Promise<never> => {
      if (link.reachable && token !== undefined) {
        const moved = await within(
          job.moveToWait(token).then(
            () => true,
            () => false,
          ),
          2000,
        );
        held.released = moved === true;
      } else held.released = false;
      log(
        held.released
          ? `${held.label}: stopped; the job went back to the queue`
          : `${held.label}: stopped; the job stays claimed until its lock lapses (${lockMs / 1000} s), then BullMQ gives it to another worker`,
      );
      // BullMQ moves nothing for this error: the job is where release() left it.
      throw new WaitingError();
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
          log(`job ${String(job.id)}: ${e.message} Stopping this worker; the job goes back to the queue.`);
          await job.moveToDelayed(Date.now() + 2000, token);
          stopping.abort();
          throw new DelayedError();
        }
        log(`job ${String(job.id)}: refused: ${(e as Error).message}`);
        throw new UnrecoverableError((e as Error).message);
      }
      const held: RunningJob = {
        id: String(job.id),
        label: jobLabel(String(job.id), data),
        data,
        startedMs: Date.now(),
      };
      running.set(held.id, held);
      labels.set(held.id, held.label);
      // BullMQ may speak of a job after it left this worker (a result refused): its label stays a while.
      if (labels.size > 256) labels.delete(labels.keys().next().value!);
      const settled = run(job, token, data, held).finally(() => running.delete(held.id));
      jobsInFlight.add(settled);
      void settled.catch(() => undefined).finally(() => jobsInFlight.delete(settled));
      return settled;
    };

    const run = async (
      job: Job,
      token: string | undefined,
      data: SimJobData,
      held: RunningJob,
    ): Promise<SimJobResult> => {
      if (stopping.signal.aborted) return release(job, token, held);
      if ((await redis.exists(sweepStoppedKey(data.sweepId))) === 1) return { kind: 'stopped' };
      let init: WorkerInit;
      try {
        init = await initFor(data);
      } catch (e) {
        // A payload or blob that fails its checks fails the same way every time: no retries.
        if (e instanceof JobRefusedError) throw new UnrecoverableError(e.message);
        throw e;
      }
      if (stopping.signal.aborted) return release(job, token, held);
      log(`${held.label}: started`);
      const key = `${data.sweepId}|${init.policySpec}|${init.record ? 'record' : ''}`;
      const thread = await threadFor(key, init);
      if (stopping.signal.aborted) return release(job, token, held);
      held.thread = thread;
      thread.busy = true;
      // The coordinator's Ctrl-C stops its sweep: a rollout of it still running here stops too.
      const watch = setInterval(() => {
        if (!link.reachable) return;
        void redis.exists(sweepStoppedKey(data.sweepId)).then(
          (n) => {
            if (n === 1) thread.stop();
          },
          () => undefined,
        );
      }, 1000);
      try {
        // Each job carries its own calibration (a randomized sweep draws one per job); the thread
        // keeps the sweep's setup open and runs this job on this job's world.
        const world = {
          calibration: init.calibration!,
          ...(data.placement ? { placement: data.placement } : {}),
          ...(data.look ? { look: data.look } : {}),
        };
        let out;
        try {
          out = await thread.run({
            jobId: 0,
            layoutIndex: data.layoutIndex,
            repeat: data.repeat,
            seed: data.seed,
            world,
          });
        } catch (e) {
          // Our own stop terminated the thread: that is no failure of the job.
          if (stopping.signal.aborted) return await release(job, token, held);
          // A lost claim terminated it: the job is the queue's again; BullMQ moves nothing for this error.
          if (held.lost) throw new WaitingError();
          throw e;
        }
        if (out.kind !== 'rollout') {
          log(`${held.label}: stopped with its sweep`);
          return out;
        }
        log(`${held.label}: ${out.rollout.status} (${(out.rollout.wallMs / 1000).toFixed(1)} s)`);
        // The calls never go into BullMQ's result: they travel as a blob the result names.
        const { recorded, ...rollout } = out.rollout;
        if (!data.record) return { kind: 'rollout', rollout };
        // A sweep stopped while this rollout ran to its end collects nothing more: no blob to leave behind.
        if ((await redis.exists(sweepStoppedKey(data.sweepId))) === 1)
          return { kind: 'rollout', rollout, recording: { refused: 'its sweep was stopped before it was collected.' } };
        const recording = await storeRecording(data, recorded, held.label);
        // Stopped while the recording was encoded and stored (long on a busy machine): nobody will
        // collect it, so it goes now rather than lie in Redis until it expires. What is left is a
        // stop landing in the one round trip between the store and this check.
        if ('sha256' in recording && (await redis.exists(sweepStoppedKey(data.sweepId))) === 1) {
          await deleteRecordingBlob(redis, recording.sha256);
          return { kind: 'rollout', rollout, recording: { refused: 'its sweep was stopped before it was collected.' } };
        }
        return { kind: 'rollout', rollout, recording };
      } finally {
        clearInterval(watch);
        thread.busy = false;
      }
    };

    /** A recorded rollout's calls into the queue's store, or the sentence saying why they are not there. */
    const storeRecording = async (
      data: SimJobData,
      calls: readonly RecordedCall[] | undefined,
      label: string,
    ): Promise<RecordingRef> => {
      if (!calls) return { refused: 'its rollout thread kept no recording.' };
      let bytes: Buffer;
      try {
        bytes = await encodeRecording(
          { sweepId: data.sweepId, layoutIndex: data.layoutIndex, repeat: data.repeat },
          calls,
        );
      } catch (e) {
        if (e instanceof RecordingBlobError) {
          log(`${label}: not recorded: ${e.message}`);
          return { refused: e.message };
        }
        throw e;
      }
      // A Redis that fails here fails the job, which is retried: the rollout reruns and records again.
      return { sha256: await putRecordingBlob(redis, bytes), bytes: bytes.length };
    };

    const workerConnection = redis.duplicate();
    link.watch(redis);
    link.watch(workerConnection);
    const worker = new Worker(SIM_QUEUE_NAME, processJob, {
      connection: workerConnection,
      concurrency: opts.concurrency,
      lockDuration: lockMs,
      stalledInterval: lockMs,
      // A worker killed mid-rollout leaves its job stalled: it goes back to the queue once; killed
      // twice, it fails (and ends in the store as an invalid rollout with that reason).
      maxStalledCount: 2,
      // After a connection error BullMQ waits this long before fetching again (15 s by default): as long as a reconnect attempt.
      runRetryDelay: REDIS_RETRY_MS,
    });
    worker.on('completed', () => (completed += 1));
    worker.on('failed', (job, e) => {
      if (e instanceof DelayedError || e.name === 'DelayedError' || e.name === 'WaitingError') return;
      failed += 1;
      log(
        `${job ? (labels.get(String(job.id)) ?? `job ${String(job.id)}`) : 'a job'}: failed (attempt ${job?.attemptsMade ?? '?'}): ${e.message.split('\n')[0]}`,
      );
    });
    // A job whose lock lapsed (Redis away longer than the lock, or back without its data) may
    // already be another worker's: its result would be refused, so its rollout stops now.
    const lostClaims = new Set<string>();
    const claimLost = (id: string, why: string): void => {
      if (lostClaims.has(id)) return;
      lostClaims.add(id);
      const held = running.get(id);
      if (held) {
        held.lost = true;
        void held.thread?.terminate();
      }
      log(`${labels.get(id) ?? `job ${id}`}: ${why}; the queue hands the job out again`);
    };
    worker.on('lockRenewalFailed', (ids: string[]) => {
      for (const id of ids) claimLost(String(id), `its claim on the queue lapsed, so its rollout stops here`);
    });
    // Connection errors are the link's to say, once; a lost claim is said once per job; anything else is one line.
    worker.on('error', (e) => {
      if (stopping.signal.aborted) return;
      if (unreachableReason(e) !== undefined) {
        link.failed(e);
        return;
      }
      if (/^could not renew lock for job /.test(e.message)) return;
      const missing = /^Missing (?:lock|key) for job (\S+?)\.? (\w+)$/.exec(e.message);
      if (missing) {
        claimLost(
          missing[1],
          `its claim on the queue lapsed before its result could be handed in (BullMQ ${missing[2]}), so the result is dropped`,
        );
        return;
      }
      log(`queue worker: ${e.message.split('\n')[0]}`);
    });

    await Promise.race([
      worker.waitUntilReady(),
      new Promise((resolve) => stopping.signal.addEventListener('abort', resolve, { once: true })),
    ]);
    if (!stopping.signal.aborted) {
      state = 'working';
      log(
        `tandem ${TANDEM_VERSION} worker on ${opts.address.shown}, ${opts.concurrency} rollout thread${opts.concurrency === 1 ? '' : 's'}`,
      );
      await new Promise((resolve) => stopping.signal.addEventListener('abort', resolve, { once: true }));
    }
    state = 'stopping';

    // 1. No new jobs; every running rollout's thread ends now (a rollout cannot be resumed, only rerun).
    void worker.pause(true).catch(() => undefined);
    const held = [...running.values()];
    for (const t of threads) if (t.busy) void t.terminate();
    // 2. Each job goes back to the queue if Redis answers (a bounded wait), else stays to its lock's expiry.
    await within(Promise.allSettled([...jobsInFlight]), 3000);
    for (const h of held) {
      if (h.released === undefined) {
        h.released = false;
        log(
          `${h.label}: stopped; the job stays claimed until its lock lapses (${lockMs / 1000} s), then BullMQ gives it to another worker`,
        );
      }
    }
    const redisAnswered = link.reachable;
    // 3. BullMQ closes without waiting for jobs (they are settled or abandoned); a Redis that is gone cannot hold the stop.
    link.close();
    await within(
      worker.close(true).catch(() => undefined),
      1000,
    );
    await within(Promise.all(threads.map((t) => t.close())), 1000);
    for (const t of threads) void t.terminate();
    // BullMQ leaves a connection it was handed open.
    workerConnection.disconnect();
    redis.disconnect();

    const left = held.filter((h) => !h.released);
    const back = held.filter((h) => h.released);
    const counts = `${completed} job${completed === 1 ? '' : 's'} done, ${failed} failed`;
    const what = [
      back.length > 0 ? `${back.map((h) => h.id).join(', ')} went back to the queue` : '',
      left.length > 0
        ? `${left.map((h) => h.id).join(', ')} stay${left.length === 1 ? 's' : ''} claimed until ${left.length === 1 ? 'its lock lapses' : 'their locks lapse'} (${lockMs / 1000} s), then another worker takes ${left.length === 1 ? 'it' : 'them'}`
        : '',
      held.length === 0 ? 'no job was running' : '',
    ]
      .filter((x) => x !== '')
      .join('; ');
    const redisNote = redisAnswered ? '' : ` Redis at ${opts.address.shown} was unreachable.`;
    const clean = !gaveUp && left.length === 0 && refusedVersion === undefined;
    const stopped = gaveUp
      ? `Worker gave up: Redis at ${opts.address.shown} stayed unreachable for ${(opts.giveUpAfterMs ?? 0) / 1000} s (--give-up-after); ${counts}; ${what}.`
      : `Worker stopped ${clean ? 'cleanly' : 'leaving work behind'}: ${counts}; ${what}.${redisNote}`;
    return { completed, failed, refusedVersion, clean, stopped };
  }
}
