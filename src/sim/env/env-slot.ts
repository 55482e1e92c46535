/**
 * One place the env pool's environments run: a worker thread here, or (with `--queue`) a thread
 * on another machine reached through Redis (remote-env-slot.ts). Either way the pool numbers its
 * requests, and a slot that fails answers every open request with an error instead of leaving
 * it waiting.
 */
import { Worker } from 'node:worker_threads';
import type { EnvWorkerInit, FromEnvWorker, ToEnvWorker, WorkerReset } from './env-worker-protocol.js';

/** The env worker thread's entry (it registers tsx, then loads env-worker.ts). */
export const ENV_WORKER_ENTRY = new URL('./env-worker-entry.mjs', import.meta.url);

/** A reset or step request before the slot numbers it. */
export type SlotRequest =
  | { readonly type: 'reset'; readonly envs: readonly WorkerReset[] }
  | { readonly type: 'step'; readonly keys: readonly string[]; readonly actions: Float32Array };

export abstract class EnvSlot {
  private readonly pending = new Map<number, (m: FromEnvWorker) => void>();
  private nextId = 1;
  private settleReady: { resolve(): void; reject(e: Error): void } | undefined;
  /** Why the slot can no longer serve, once it cannot. */
  dead: string | undefined;
  /** Resolves when the slot's thread has started; rejects when it fails first. */
  readonly ready: Promise<void>;

  constructor() {
    this.ready = new Promise((resolve, reject) => (this.settleReady = { resolve, reject }));
    // A slot that dies after start-up rejects nothing anyone awaits.
    this.ready.catch(() => {});
  }

  /** Sends one message to the slot's thread. */
  protected abstract send(m: ToEnvWorker, transfer: ArrayBuffer[]): void;
  /** Asks the thread to free everything and end. */
  abstract close(): Promise<void>;

  /** A message from the slot's thread. */
  protected deliver(m: FromEnvWorker): void {
    if (m.type === 'ready') this.settleReady?.resolve();
    else if (m.type === 'fatal') this.die(m.message);
    else {
      const p = this.pending.get(m.id);
      this.pending.delete(m.id);
      p?.(m);
    }
  }

  protected die(why: string): void {
    if (this.dead) return;
    this.dead = why;
    this.settleReady?.reject(new Error(`An env worker failed: ${why}`));
    for (const p of this.pending.values()) p({ type: 'error', id: -1, message: `The env worker failed: ${why}` });
    this.pending.clear();
  }

  request(m: SlotRequest, transfer: ArrayBuffer[] = []): Promise<FromEnvWorker> {
    if (this.dead) return Promise.resolve({ type: 'error', id: -1, message: `The env worker failed: ${this.dead}` });
    const id = this.nextId++;
    return new Promise((resolve) => {
      this.pending.set(id, resolve);
      this.send({ ...m, id }, transfer);
    });
  }

  post(m: ToEnvWorker): void {
    if (!this.dead) this.send(m, []);
  }
}

/** A worker thread of this process. */
export class LocalEnvSlot extends EnvSlot {
  private readonly worker: Worker;

  constructor(init: EnvWorkerInit) {
    super();
    this.worker = new Worker(ENV_WORKER_ENTRY, { workerData: init });
    this.worker.on('message', (m: FromEnvWorker) => this.deliver(m));
    this.worker.on('error', (e) => this.die(e.message));
    this.worker.on('exit', (code) => this.die(`exited with code ${code}`));
  }

  protected send(m: ToEnvWorker, transfer: ArrayBuffer[]): void {
    this.worker.postMessage(m, transfer);
  }

  async close(): Promise<void> {
    if (this.dead) return;
    const exited = new Promise<void>((resolve) => this.worker.once('exit', () => resolve()));
    this.post({ type: 'close' });
    const timer = setTimeout(() => void this.worker.terminate(), 5000);
    await exited;
    clearTimeout(timer);
  }
}
