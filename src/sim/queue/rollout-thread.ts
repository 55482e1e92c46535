/**
 * One sweep worker thread (sweep-worker.ts, the same one the in-process sweep uses) driven one
 * job at a time by a queue worker. The physics runs on the thread, so the queue worker's own
 * event loop stays free to renew its job locks however long a rollout takes.
 */
import { Worker } from 'node:worker_threads';
import type { FromWorker, SweepJob, SweepRollout, ToWorker, WorkerInit } from '../sweep.js';

export type ThreadOutcome = { readonly kind: 'rollout'; readonly rollout: SweepRollout } | { readonly kind: 'stopped' };

export class RolloutThread {
  private readonly worker: Worker;
  private readonly ready: Promise<void>;
  private pending: { resolve: (o: ThreadOutcome) => void; reject: (e: Error) => void } | undefined;
  private dead: Error | undefined;
  busy = false;

  constructor(
    /** Which sweep setup (layout set, policy, calibration, length) this thread has open. */
    readonly key: string,
    init: WorkerInit,
  ) {
    this.worker = new Worker(new URL('../sweep-worker-entry.mjs', import.meta.url), { workerData: init });
    let readyResolve!: () => void;
    let readyReject!: (e: Error) => void;
    this.ready = new Promise<void>((res, rej) => {
      readyResolve = res;
      readyReject = rej;
    });
    // Nothing may wait on `ready` (a thread can die before its first job): keep a rejection quiet here.
    this.ready.catch(() => undefined);
    const fail = (e: Error): void => {
      this.dead ??= e;
      readyReject(e);
      this.pending?.reject(e);
      this.pending = undefined;
    };
    this.worker.on('message', (m: FromWorker) => {
      if (m.type === 'ready') readyResolve();
      else if (m.type === 'result') this.settle({ kind: 'rollout', rollout: m.rollout });
      else if (m.type === 'stopped') this.settle({ kind: 'stopped' });
      else {
        // A failed rollout: that job is over; a failed start: the thread has closed.
        const e = new Error(m.message);
        if (this.pending) {
          this.pending.reject(e);
          this.pending = undefined;
        } else fail(e);
      }
    });
    this.worker.on('error', (e) => fail(e));
    this.worker.on('exit', (code) => fail(new Error(`the rollout thread exited (code ${code})`)));
  }

  get alive(): boolean {
    return this.dead === undefined;
  }

  private settle(o: ThreadOutcome): void {
    this.pending?.resolve(o);
    this.pending = undefined;
  }

  /** Runs one rollout; rejects with the thread's own error message. */
  async run(job: SweepJob): Promise<ThreadOutcome> {
    await this.ready;
    if (this.dead) throw this.dead;
    return new Promise<ThreadOutcome>((resolve, reject) => {
      this.pending = { resolve, reject };
      this.worker.postMessage({ type: 'job', job } satisfies ToWorker);
    });
  }

  /** Asks the running rollout to stop (it ends as 'stopped'). */
  stop(): void {
    if (this.alive) this.worker.postMessage({ type: 'stop' } satisfies ToWorker);
  }

  /** Ends the thread at once, whatever its rollout is doing (a worker's stop); a pending run rejects. */
  async terminate(): Promise<void> {
    if (!this.alive) return;
    await this.worker.terminate();
  }

  async close(): Promise<void> {
    if (!this.alive) return;
    this.worker.postMessage({ type: 'exit' } satisfies ToWorker);
    const exited = new Promise<void>((res) => this.worker.once('exit', () => res()));
    // A thread that will not leave (a stuck policy close) is ended after a while.
    const timer = setTimeout(() => void this.worker.terminate(), 10_000);
    await exited;
    clearTimeout(timer);
  }
}
