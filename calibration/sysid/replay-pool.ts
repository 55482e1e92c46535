/**
 * Replays on worker threads: each worker reads every episode once, then takes (episode,
 * calibration) jobs; a batch of calibrations × episodes is spread over the workers as they free
 * up. One worker per core is the default (the replay is pure physics, one thread each).
 */
import { availableParallelism } from 'node:os';
import { Worker } from 'node:worker_threads';
import type { SimCalibration } from '../../src/sim/calibration.js';
import type { LayoutSet } from '../../src/layouts/layout-set.js';
import type { ReplayResult } from './replay.js';

export interface ReplayWorkerInit {
  readonly files: readonly string[];
  /** The layout sets the files' layouts come from (see readEpisodeTrajectory). */
  readonly layoutSets?: readonly LayoutSet[];
}
export interface ReplayJob {
  readonly id: number;
  readonly episode: number;
  readonly calibration: SimCalibration;
  /** Replay this long from the first command (default: all of it). */
  readonly seconds?: number;
}
export interface ReplayReply {
  readonly id: number;
  readonly residuals: Float64Array;
  /** Residuals over the holding samples (see ReplayResult.holdingResiduals). */
  readonly holdingResiduals?: Float64Array;
  readonly lostObject?: string;
  readonly rmsRad: readonly number[];
  /** Per phase: compared samples and RMS per state index (see ReplayResult.byPhase). */
  readonly byPhase?: ReplayResult['byPhase'];
  readonly problem?: string;
}

export class ReplayPool {
  private readonly workers: Worker[] = [];
  private readonly idle: Worker[] = [];
  private readonly pending = new Map<number, (r: ReplayReply) => void>();
  private readonly queue: ReplayJob[] = [];
  private nextId = 0;
  private failure: Error | undefined;

  private constructor() {}

  /** Starts `workers` threads (default: one per core), each having read every file. */
  static async start(
    files: readonly string[],
    workers = availableParallelism(),
    layoutSets: readonly LayoutSet[] = [],
  ): Promise<ReplayPool> {
    const pool = new ReplayPool();
    const init: ReplayWorkerInit = { files, layoutSets };
    await Promise.all(
      Array.from({ length: Math.max(1, workers) }, () => {
        const w = new Worker(new URL('./replay-worker-entry.mjs', import.meta.url), { workerData: init });
        pool.workers.push(w);
        return new Promise<void>((resolve, reject) => {
          w.once('error', reject);
          w.on('message', (m: ReplayReply | { ready: true }) => {
            if ('ready' in m) {
              pool.idle.push(w);
              resolve();
              return;
            }
            pool.pending.get(m.id)?.(m);
            pool.pending.delete(m.id);
            pool.idle.push(w);
            pool.dispatch();
          });
          w.on('error', (e) => {
            pool.failure = e;
            for (const done of pool.pending.values())
              done({
                id: -1,
                residuals: new Float64Array(0),
                rmsRad: [],
                problem: `a replay worker failed: ${e.message}`,
              });
            pool.pending.clear();
          });
        });
      }),
    );
    return pool;
  }

  get size(): number {
    return this.workers.length;
  }

  /** Replays every episode in `episodes` under every calibration (for `seconds`, one for all or one per episode); replies[c][e]. */
  async replayAll(
    calibrations: readonly SimCalibration[],
    episodes: readonly number[],
    seconds?: number | readonly number[],
  ): Promise<ReplayReply[][]> {
    if (this.failure) throw this.failure;
    const out = calibrations.map(() => new Array<ReplayReply>(episodes.length));
    const waits: Promise<void>[] = [];
    calibrations.forEach((calibration, c) => {
      episodes.forEach((episode, e) => {
        const id = this.nextId++;
        waits.push(
          new Promise<void>((resolve) => {
            this.pending.set(id, (r) => {
              out[c][e] = r;
              resolve();
            });
          }),
        );
        this.queue.push({
          id,
          episode,
          calibration,
          seconds: typeof seconds === 'number' || seconds === undefined ? seconds : seconds[e],
        });
      });
    });
    this.dispatch();
    await Promise.all(waits);
    return out;
  }

  private dispatch(): void {
    while (this.idle.length > 0 && this.queue.length > 0) this.idle.pop()!.postMessage(this.queue.shift()!);
  }

  async close(): Promise<void> {
    await Promise.all(this.workers.map((w) => w.terminate()));
  }
}
