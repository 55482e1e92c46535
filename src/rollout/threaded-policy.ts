/**
 * A policy run in a worker thread, behind the same Policy contract. On a wall-clock rig the
 * control loop keeps ticking the rig (its watchdog, its motors' replies) only while the event
 * loop is free; a code policy that plans synchronously for 100 ms would starve it, and on the
 * YAM the motors' replies would look lost. In a worker, planning costs the loop nothing.
 * Observations and chunks are copied across (structured clone); errors come back as their
 * messages, with the policy's own error class name kept for the episode record.
 */
import { Worker } from 'node:worker_threads';
import type { ActionChunk, EpisodeContext, Observation, Policy, PolicyInfo } from '../policy/contract.js';

export type ToPolicyWorker =
  | { type: 'reset'; id: number; ctx: EpisodeContext }
  | { type: 'infer'; id: number; obs: Observation }
  | { type: 'close'; id: number };

export type FromPolicyWorker =
  | { type: 'ready'; info: PolicyInfo }
  | { type: 'open-failed'; message: string }
  | { type: 'done'; id: number }
  | { type: 'chunk'; id: number; chunk: ActionChunk }
  | { type: 'error'; id: number; message: string; name: string };

/** The policy's own failure, re-thrown on this side of the thread. */
export class ThreadedPolicyError extends Error {
  constructor(message: string, name: string) {
    super(message);
    this.name = name;
  }
}

export class ThreadedPolicy implements Policy {
  private nextId = 1;
  private readonly pending = new Map<number, { resolve: (m: FromPolicyWorker) => void; reject: (e: Error) => void }>();
  private exited: Error | undefined;

  private constructor(
    private readonly worker: Worker,
    readonly info: PolicyInfo,
  ) {
    worker.on('message', (m: FromPolicyWorker) => {
      if (m.type === 'ready' || m.type === 'open-failed') return;
      const p = this.pending.get(m.id);
      if (!p) return;
      this.pending.delete(m.id);
      if (m.type === 'error') p.reject(new ThreadedPolicyError(m.message, m.name));
      else p.resolve(m);
    });
    const gone = (why: string): void => {
      this.exited = new Error(`The policy's worker thread stopped (${why}).`);
      for (const p of this.pending.values()) p.reject(this.exited);
      this.pending.clear();
    };
    worker.on('error', (e) => gone(e.message));
    worker.on('exit', (code) => gone(`exit code ${code}`));
  }

  /** Opens the policy `spec` names (any spec openPolicy takes) in a new worker thread. */
  static open(spec: string, opts: { cwd: string }): Promise<ThreadedPolicy> {
    const worker = new Worker(new URL('./threaded-policy-entry.mjs', import.meta.url), { workerData: { spec, cwd: opts.cwd } });
    return new Promise((resolve, reject) => {
      const onMessage = (m: FromPolicyWorker): void => {
        if (m.type === 'ready') {
          worker.off('message', onMessage);
          resolve(new ThreadedPolicy(worker, m.info));
        } else if (m.type === 'open-failed') {
          worker.off('message', onMessage);
          void worker.terminate();
          reject(new Error(m.message));
        }
      };
      worker.on('message', onMessage);
      worker.once('error', reject);
    });
  }

  async reset(ctx: EpisodeContext): Promise<void> {
    await this.call({ type: 'reset', id: 0, ctx });
  }

  async infer(obs: Observation): Promise<ActionChunk> {
    const m = await this.call({ type: 'infer', id: 0, obs });
    if (m.type !== 'chunk') throw new Error('The policy worker answered an inference without a chunk.');
    return m.chunk;
  }

  async close(): Promise<void> {
    if (!this.exited) await this.call({ type: 'close', id: 0 }).catch(() => {});
    await this.worker.terminate();
  }

  private call(msg: ToPolicyWorker): Promise<FromPolicyWorker> {
    if (this.exited) return Promise.reject(this.exited);
    const id = this.nextId++;
    return new Promise((resolve, reject) => {
      this.pending.set(id, { resolve, reject });
      this.worker.postMessage({ ...msg, id });
    });
  }
}
