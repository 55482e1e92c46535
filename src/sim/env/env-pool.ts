/**
 * The env server's worker threads (here, or with a queue on env worker hosts elsewhere: env-slot.ts)
 * and the environments on them. A connection's N environments
 * are spread round-robin over the workers (env i on worker i mod W); a step fans the actions out
 * and gathers the results in env order. Workers serve every connection, one request at a time
 * each, so two trainers share the cores fairly and never each other's environments.
 */
import { STATE_DIM } from '../../rig/contract.js';
import type { EnvEpisodeInfo } from './sim-env.js';
import type { EnvImages, EnvWorkerInit, WorkerReset, WorkerStep } from './env-worker-protocol.js';
import { LocalEnvSlot, type EnvSlot } from './env-slot.js';
import type { QueueAddress } from '../queue/connection.js';

/** A request the workers refused (a layout the sim cannot build, a step before reset): one sentence for the client. */
export class EnvRequestError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'EnvRequestError';
  }
}

export interface EnvPoolOptions extends EnvWorkerInit {
  readonly workers: number;
  /** Run the workers on env worker hosts reached through this Redis (`tandem sim env-worker`), not on threads here. */
  readonly queue?: QueueAddress;
  /** Stops waiting for remote workers. */
  readonly signal?: AbortSignal;
  readonly log?: (line: string) => void;
}

export interface PoolStep {
  readonly states: Float32Array;
  readonly results: WorkerStep[];
}

export class EnvPool {
  private constructor(
    private readonly workers: readonly EnvSlot[],
    private readonly release: () => Promise<void> = async () => {},
  ) {}

  static async start(opts: EnvPoolOptions): Promise<EnvPool> {
    const init: EnvWorkerInit = {
      taskId: opts.taskId,
      controlHz: opts.controlHz,
      ...(opts.randomizationJson ? { randomizationJson: opts.randomizationJson } : {}),
      ...(opts.cameras?.length ? { cameras: opts.cameras } : {}),
    };
    let pool: EnvPool;
    if (opts.queue) {
      const { claimRemoteSlots } = await import('./remote-env-slot.js');
      const remote = await claimRemoteSlots({
        address: opts.queue,
        count: opts.workers,
        init,
        ...(opts.signal ? { signal: opts.signal } : {}),
        log: opts.log ?? (() => {}),
      });
      pool = new EnvPool(remote.slots, () => remote.close());
    } else pool = new EnvPool(Array.from({ length: opts.workers }, () => new LocalEnvSlot(init)));
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
  async reset(
    owner: string,
    n: number,
    params: (i: number) => Omit<WorkerReset, 'key'>,
  ): Promise<{ states: Float32Array; infos: EnvEpisodeInfo[]; images: (EnvImages | undefined)[] }> {
    const parts = this.split(owner, n);
    const answers = await Promise.all(
      parts.map(({ w, envs }) =>
        envs.length === 0
          ? undefined
          : this.workers[w].request({ type: 'reset', envs: envs.map((i) => ({ key: `${owner}:${i}`, ...params(i) })) }),
      ),
    );
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
        return this.workers[w].request({ type: 'step', keys: envs.map((i) => `${owner}:${i}`), actions: slice }, [
          slice.buffer,
        ]);
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
    for (const { w, envs } of this.split(owner, n))
      if (envs.length > 0) this.workers[w].post({ type: 'free', keys: envs.map((i) => `${owner}:${i}`) });
  }

  async close(): Promise<void> {
    await Promise.all(this.workers.map((w) => w.close()));
    await this.release();
  }

  private split(owner: string, n: number): { w: number; envs: number[] }[] {
    void owner;
    const parts = this.workers.map((_, w) => ({ w, envs: [] as number[] }));
    for (let i = 0; i < n; i++) parts[i % this.workers.length].envs.push(i);
    return parts;
  }
}
