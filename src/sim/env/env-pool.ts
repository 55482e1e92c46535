/**
 * The env server's worker threads and the environments on them. A connection's N environments
 * are spread round-robin over the workers (env i on worker i mod W); a step fans the actions out
 * and gathers the results in env order. Workers serve every connection, one request at a time
 * each, so two trainers share the cores fairly and never each other's environments.
 */
import { Worker } from 'node:worker_threads';
import { STATE_DIM } from '../../rig/contract.js';
import type { EnvEpisodeInfo } from './sim-env.js';
import type { EnvImages, EnvWorkerInit, FromEnvWorker, ToEnvWorker, WorkerReset, WorkerStep } from './env-worker-protocol.js';

const ENTRY = new URL('./env-worker-entry.mjs', import.meta.url);

/** A request the workers refused (a layout the sim cannot build, a step before reset): one sentence for the client. */
export class EnvRequestError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'EnvRequestError';
  }
}

/** A reset or step request before the worker host numbers it. */
type WorkerRequest = { readonly type: 'reset'; readonly envs: readonly WorkerReset[] } | { readonly type: 'step'; readonly keys: readonly string[]; readonly actions: Float32Array };

interface Pending {
  resolve(m: FromEnvWorker): void;
}

class EnvWorker {
  readonly worker: Worker;
  private readonly pending = new Map<number, Pending>();
  private nextId = 1;
  readonly ready: Promise<void>;
  dead: string | undefined;

  constructor(init: EnvWorkerInit) {
    this.worker = new Worker(ENTRY, { workerData: init });
    this.ready = new Promise((resolve, reject) => {
      const onMessage = (m: FromEnvWorker): void => {
        if (m.type === 'ready') resolve();
        else if (m.type === 'fatal') this.die(m.message, reject);
        else if ('id' in m) {
          const p = this.pending.get(m.id);
          this.pending.delete(m.id);
          p?.resolve(m);
        }
      };
      this.worker.on('message', onMessage);
      this.worker.on('error', (e) => this.die(e.message, reject));
      this.worker.on('exit', (code) => this.die(`exited with code ${code}`, reject));
    });
  }

  private die(why: string, reject: (e: Error) => void): void {
    if (this.dead) return;
    this.dead = why;
    reject(new Error(`An env worker failed: ${why}`));
    for (const p of this.pending.values()) p.resolve({ type: 'error', id: -1, message: `The env worker failed: ${why}` });
    this.pending.clear();
  }

  request(m: WorkerRequest, transfer: ArrayBuffer[] = []): Promise<FromEnvWorker> {
    if (this.dead) return Promise.resolve({ type: 'error', id: -1, message: `The env worker failed: ${this.dead}` });
    const id = this.nextId++;
    return new Promise((resolve) => {
      this.pending.set(id, { resolve });
      this.worker.postMessage({ ...m, id }, transfer);
    });
  }

  post(m: ToEnvWorker): void {
    if (!this.dead) this.worker.postMessage(m);
  }
}

export interface EnvPoolOptions extends EnvWorkerInit {
  readonly workers: number;
}

export interface PoolStep {
  readonly states: Float32Array;
  readonly results: WorkerStep[];
}

export class EnvPool {
  private readonly workers: EnvWorker[];

  private constructor(opts: EnvPoolOptions) {
    const init: EnvWorkerInit = { taskId: opts.taskId, controlHz: opts.controlHz, ...(opts.randomizationJson ? { randomizationJson: opts.randomizationJson } : {}), ...(opts.cameras?.length ? { cameras: opts.cameras } : {}) };
    this.workers = Array.from({ length: opts.workers }, () => new EnvWorker(init));
  }

  static async start(opts: EnvPoolOptions): Promise<EnvPool> {
    const pool = new EnvPool(opts);
    try {
      await Promise.all(pool.workers.map((w) => w.ready));
    } catch (e) {
      await pool.close();
      throw e;
    }
    return pool;
  }

  get size(): number {
    return this.workers.length;
  }

  /** Resets a connection's n envs (keys `${owner}:${i}`); states in env order. */
  async reset(owner: string, n: number, params: (i: number) => Omit<WorkerReset, 'key'>): Promise<{ states: Float32Array; infos: EnvEpisodeInfo[]; images: (EnvImages | undefined)[] }> {
    const parts = this.split(owner, n);
    const answers = await Promise.all(parts.map(({ w, envs }) => (envs.length === 0 ? undefined : this.workers[w].request({ type: 'reset', envs: envs.map((i) => ({ key: `${owner}:${i}`, ...params(i) })) }))));
    const states = new Float32Array(n * STATE_DIM);
    const infos: EnvEpisodeInfo[] = new Array<EnvEpisodeInfo>(n);
    const images: (EnvImages | undefined)[] = new Array<EnvImages | undefined>(n);
    parts.forEach(({ envs }, k) => {
      const a = answers[k];
      if (!a) return;
      if (a.type === 'error') throw new EnvRequestError(a.message);
      if (a.type !== 'reset') throw new Error(`unexpected worker answer ${a.type}`);
      envs.forEach((i, j) => {
        states.set(a.states.subarray(j * STATE_DIM, (j + 1) * STATE_DIM), i * STATE_DIM);
        infos[i] = a.infos[j];
        images[i] = a.images?.[j];
      });
    });
    return { states, infos, images };
  }

  /** One step of a connection's n envs; actions float32[n × 14]. */
  async step(owner: string, n: number, actions: Float32Array): Promise<PoolStep> {
    const parts = this.split(owner, n);
    const answers = await Promise.all(
      parts.map(({ w, envs }) => {
        if (envs.length === 0) return undefined;
        const slice = new Float32Array(envs.length * STATE_DIM);
        envs.forEach((i, j) => slice.set(actions.subarray(i * STATE_DIM, (i + 1) * STATE_DIM), j * STATE_DIM));
        return this.workers[w].request({ type: 'step', keys: envs.map((i) => `${owner}:${i}`), actions: slice }, [slice.buffer]);
      }),
    );
    const states = new Float32Array(n * STATE_DIM);
    const results: WorkerStep[] = new Array<WorkerStep>(n);
    parts.forEach(({ envs }, k) => {
      const a = answers[k];
      if (!a) return;
      if (a.type === 'error') throw new EnvRequestError(a.message);
      if (a.type !== 'step') throw new Error(`unexpected worker answer ${a.type}`);
      envs.forEach((i, j) => {
        results[i] = a.results[j];
        states.set(a.results[j].state, i * STATE_DIM);
      });
    });
    return { states, results };
  }

  /** Frees a connection's envs (its worlds' memory). */
  free(owner: string, n: number): void {
    for (const { w, envs } of this.split(owner, n)) if (envs.length > 0) this.workers[w].post({ type: 'free', keys: envs.map((i) => `${owner}:${i}`) });
  }

  async close(): Promise<void> {
    await Promise.all(
      this.workers.map(async (w) => {
        if (w.dead) return;
        const exited = new Promise<void>((resolve) => w.worker.once('exit', () => resolve()));
        w.post({ type: 'close' });
        const timer = setTimeout(() => void w.worker.terminate(), 5000);
        await exited;
        clearTimeout(timer);
      }),
    );
  }

  private split(owner: string, n: number): { w: number; envs: number[] }[] {
    void owner;
    const parts = this.workers.map((_, w) => ({ w, envs: [] as number[] }));
    for (let i = 0; i < n; i++) parts[i % this.workers.length].envs.push(i);
    return parts;
  }
}
