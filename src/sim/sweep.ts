/**
 * Sim sweeps: every layout of a set, R times each, on worker threads. Each worker opens the
 * policy once and runs one rollout at a time; the main thread hands out jobs, so a fast worker
 * takes more and the order of results depends only on timing — each result names its layout and
 * repeat, and each rollout is deterministic on its own (seed = repeat index).
 *
 * Stopping (the signal) sends no new jobs and asks running rollouts to stop; finished rollouts
 * are kept, stopped ones are reported as such and not returned as results.
 */
import type { TaskEvent } from '../tasks/task-events.js';
import type { RecordedCall } from './recording-relay.js';
import { Worker } from 'node:worker_threads';
import { performance } from 'node:perf_hooks';
import type { LayoutSet } from '../layouts/layout-set.js';
import type { SimCalibration } from './calibration.js';
import type { RandomizedWorld } from './randomization.js';
import type { EpisodeOutcome, EpisodeStatus } from '../rollout/episode.js';

export interface SweepJob {
  readonly jobId: number;
  readonly layoutIndex: number;
  readonly repeat: number;
  readonly seed: number;
  /** This job's own world (a domain-randomization draw); default the sweep's calibration. */
  readonly world?: RandomizedWorld;
}

/** What a worker reports for one rollout (the trajectory stays in the worker). */
export interface SweepRollout {
  readonly job: SweepJob;
  readonly tier: number;
  readonly status: EpisodeStatus;
  /** Why it ended (EPISODE_OUTCOMES); 'policy-error' rollouts are valid and scored, with `error`. */
  readonly outcome: EpisodeOutcome;
  readonly reason?: string;
  /** The policy's own error (outcome 'policy-error'). */
  readonly error?: string;
  readonly progress?: number;
  /** The task's scoring counts plus `offTable` (objects that ended off the table); scored rollouts only. */
  readonly counts?: Record<string, number>;
  readonly finalStateHash: string;
  readonly episodeSeconds: number;
  readonly controlHz: number;
  readonly policyName: string;
  readonly policyCheckpointSha256: string;
  readonly calibrationSha256: string;
  readonly physicsSteps: number;
  readonly wallMs: number;
  /** Observations built for the policy, and the camera images drawn for them (0 without cameras). */
  readonly observations: number;
  readonly cameraFrames: number;
  /** Every call the rollout made on its recording (only when the sweep records). */
  readonly recorded?: readonly RecordedCall[];
  /** What happened to each object (absent for a job that never ran). */
  readonly taskEvents?: readonly TaskEvent[];
}

export interface SweepOptions {
  readonly layoutSet: LayoutSet;
  readonly policySpec: string;
  readonly repeats: number;
  readonly workers: number;
  /** Episode length; default the task's. */
  readonly seconds?: number;
  readonly controlHz?: number;
  readonly calibration?: SimCalibration;
  /** Each job's own world (domain randomization), drawn here in the main thread. */
  readonly worldFor?: (job: SweepJob) => RandomizedWorld;
  /** Base for relative policy paths. */
  readonly cwd: string;
  readonly signal?: AbortSignal;
  /** Keep each rollout's recording calls (SweepRollout.recorded) for an episode file. */
  readonly record?: boolean;
  /** Called in the main thread as each rollout finishes (store it here). */
  readonly onRollout?: (r: SweepRollout) => void;
  readonly onProgress?: (done: number, total: number) => void;
}

export interface SweepOutcome {
  readonly rollouts: SweepRollout[];
  readonly total: number;
  /** True when the signal stopped the sweep before every job ran. */
  readonly stopped: boolean;
  readonly wallMs: number;
}

/** Messages between the sweep and its workers. */
export interface WorkerInit {
  readonly layoutSet: LayoutSet;
  readonly policySpec: string;
  readonly seconds?: number;
  readonly controlHz?: number;
  readonly calibration?: SimCalibration;
  readonly cwd: string;
  readonly record?: boolean;
}
export type ToWorker =
  | { readonly type: 'job'; readonly job: SweepJob }
  | { readonly type: 'stop' }
  | { readonly type: 'exit' };
export type FromWorker =
  | { readonly type: 'ready' }
  | { readonly type: 'result'; readonly rollout: SweepRollout }
  | { readonly type: 'stopped'; readonly job: SweepJob }
  | { readonly type: 'fatal'; readonly message: string };

/** A sweep that cannot run at all (a worker failed to start or the policy would not open). */
export class SweepError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'SweepError';
  }
}

export function sweepJobs(layoutSet: LayoutSet, repeats: number): SweepJob[] {
  const jobs: SweepJob[] = [];
  // Repeat-major: every layout once before any layout twice, so a stopped sweep covers layouts evenly.
  for (let r = 0; r < repeats; r++) {
    for (let i = 0; i < layoutSet.layouts.length; i++)
      jobs.push({ jobId: jobs.length, layoutIndex: i, repeat: r, seed: r });
  }
  return jobs;
}

export function runSweep(opts: SweepOptions): Promise<SweepOutcome> {
  if (!Number.isInteger(opts.repeats) || opts.repeats < 1)
    throw new RangeError(`repeats must be a whole number ≥ 1, not ${opts.repeats}`);
  if (!Number.isInteger(opts.workers) || opts.workers < 1)
    throw new RangeError(`workers must be a whole number ≥ 1, not ${opts.workers}`);
  const worldFor = opts.worldFor;
  const jobs = sweepJobs(opts.layoutSet, opts.repeats).map((j) => (worldFor ? { ...j, world: worldFor(j) } : j));
  const total = jobs.length;
  const t0 = performance.now();
  const init: WorkerInit = {
    layoutSet: opts.layoutSet,
    policySpec: opts.policySpec,
    seconds: opts.seconds,
    controlHz: opts.controlHz,
    calibration: opts.calibration,
    cwd: opts.cwd,
    record: opts.record,
  };
  const workerCount = Math.min(opts.workers, total);
  const rollouts: SweepRollout[] = [];
  let next = 0;
  let stopping = false;
  let failed: string | undefined;

  return new Promise<SweepOutcome>((resolve, reject) => {
    const workers: Worker[] = [];
    let alive = 0;
    const busy = new Set<Worker>();
    const finishIfDone = (): void => {
      if (alive > 0) return;
      opts.signal?.removeEventListener('abort', onAbort);
      if (failed !== undefined) reject(new SweepError(failed));
      else resolve({ rollouts, total, stopped: rollouts.length < total, wallMs: performance.now() - t0 });
    };
    const dispatch = (w: Worker): void => {
      if (stopping || failed !== undefined || next >= jobs.length) {
        busy.delete(w);
        w.postMessage({ type: 'exit' } satisfies ToWorker);
        return;
      }
      busy.add(w);
      w.postMessage({ type: 'job', job: jobs[next++] } satisfies ToWorker);
    };
    const onAbort = (): void => {
      stopping = true;
      for (const w of workers) w.postMessage({ type: busy.has(w) ? 'stop' : 'exit' } satisfies ToWorker);
    };
    if (opts.signal?.aborted) {
      resolve({ rollouts, total, stopped: true, wallMs: 0 });
      return;
    }
    opts.signal?.addEventListener('abort', onAbort, { once: true });
    for (let k = 0; k < workerCount; k++) {
      // The entry registers tsx in the worker, then loads sweep-worker.ts.
      const w = new Worker(new URL('./sweep-worker-entry.mjs', import.meta.url), { workerData: init });
      workers.push(w);
      alive += 1;
      w.on('message', (m: FromWorker) => {
        if (m.type === 'ready') dispatch(w);
        else if (m.type === 'result') {
          rollouts.push(m.rollout);
          opts.onRollout?.(m.rollout);
          opts.onProgress?.(rollouts.length, total);
          dispatch(w);
        } else if (m.type === 'stopped') {
          busy.delete(w);
          w.postMessage({ type: 'exit' } satisfies ToWorker);
        } else if (m.type === 'fatal') {
          failed ??= m.message;
          // The failed job is over: this worker gets 'exit' (it would never answer a 'stop').
          busy.delete(w);
          onAbort();
        }
      });
      w.on('error', (e) => {
        failed ??= `A sweep worker failed: ${e.message}`;
        stopping = true;
      });
      w.on('exit', () => {
        alive -= 1;
        busy.delete(w);
        finishIfDone();
      });
    }
  });
}
