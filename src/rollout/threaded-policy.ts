/**
 * A policy run in a worker thread, behind the same Policy contract. The policy registry opens
 * every planning code policy this way, in the sim and on rigs alike (one loop, one contract): on
 * a wall-clock rig the control loop keeps ticking the rig (its watchdog, its motors' replies) only
 * while the event loop is free, and a code policy that plans synchronously for 100 ms would starve
 * it; in a worker, planning costs the loop nothing. In the sim the loop simply awaits the answer,
 * so results are the same as in-thread, bit for bit. Observations and chunks are copied across
 * (structured clone); the policy's own errors come back as their messages, with their class name
 * kept for the episode record. A worker that crashes or stops answering is the policy becoming
 * unavailable (PolicyUnavailableError, one sentence), never a hang: an unanswered call is given
 * up after `answerTimeoutMs` and the worker terminated. close() always ends the worker.
 */
import { Worker } from 'node:worker_threads';
import {
  PolicyUnavailableError,
  type ActionChunk,
  type EpisodeContext,
  type Observation,
  type Policy,
  type PolicyInfo,
} from '../policy/contract.js';

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

/**
 * How long a reset or an inference may go unanswered before the worker counts as hung. Far above
 * any plan (≈0.2 s on a busy 2-core machine) and above every rollout's own inference deadline, so
 * on a rig the rollout's policy timeout speaks first; in the sim (which has no deadline) it is
 * what turns a hung planner into an aborted rollout instead of a sweep that never ends.
 */
export const DEFAULT_ANSWER_TIMEOUT_MS = 60_000;
/** How long close() waits for the policy's own close before terminating the worker anyway. */
const CLOSE_GRACE_MS = 2_000;

export interface ThreadedPolicyOptions {
  readonly cwd: string;
  /** See DEFAULT_ANSWER_TIMEOUT_MS. */
  readonly answerTimeoutMs?: number;
  /** The worker's entry module (tests give one that misbehaves). Default: threaded-policy-entry.mjs. */
  readonly entry?: URL;
  /**
   * A module the worker runs before it says ready: its `warmUpPolicy(spec, open)` drives throwaway
   * instances of the policy (`open()` makes one) so the first plans of the real one are not the
   * slow, unoptimised ones. Only latency changes, never an answer: the real instance is opened
   * afresh afterwards. Wall-clock rigs want it (a cold first plan outlasts the 100 ms watchdog);
   * the sim, where time waits for the policy, does not need it.
   */
  readonly warmUp?: URL;
}

/** What a warm-up module (ThreadedPolicyOptions.warmUp) exports. */
export interface PolicyWarmUpModule {
  warmUpPolicy(spec: string, open: () => Promise<Policy>): Promise<void>;
}

interface Pending {
  readonly resolve: (m: FromPolicyWorker) => void;
  readonly reject: (e: Error) => void;
  readonly timer: NodeJS.Timeout | undefined;
}

function messageOf(e: unknown): string {
  return e instanceof Error ? e.message : String(e);
}

export class ThreadedPolicy implements Policy {
  private nextId = 1;
  private readonly pending = new Map<number, Pending>();
  /** Why the worker is gone (a crash, a hang, close): every later call rejects with it. */
  private gone: Error | undefined;
  private closing: Promise<void> | undefined;

  private constructor(
    private readonly worker: Worker,
    readonly info: PolicyInfo,
    private readonly answerTimeoutMs: number,
  ) {
    // Idle between calls, the worker does not keep the process alive (a caller that forgets
    // close() still exits); while a call is pending it does.
    worker.unref();
    worker.on('message', (m: FromPolicyWorker) => {
      if (m.type === 'ready' || m.type === 'open-failed') return;
      const p = this.settle(m.id);
      if (!p) return;
      if (m.type === 'error') p.reject(new ThreadedPolicyError(m.message, m.name));
      else p.resolve(m);
    });
    worker.on('error', (e) =>
      this.stop(
        new PolicyUnavailableError(
          `The worker thread running policy ${info.name} crashed (${messageOf(e)}); the policy cannot answer any more.`,
          'disconnected',
        ),
      ),
    );
    worker.on('exit', (code) =>
      this.stop(
        new PolicyUnavailableError(
          `The worker thread running policy ${info.name} exited (code ${code}); the policy cannot answer any more.`,
          'disconnected',
        ),
      ),
    );
  }

  /** Opens the policy `spec` names (any spec openPolicyHere takes) in a new worker thread. */
  static open(spec: string, opts: ThreadedPolicyOptions): Promise<ThreadedPolicy> {
    const entry = opts.entry ?? new URL('./threaded-policy-entry.mjs', import.meta.url);
    const worker = new Worker(entry, { workerData: { spec, cwd: opts.cwd, warmUp: opts.warmUp?.href } });
    return new Promise((resolve, reject) => {
      const fail = (why: string): void => {
        worker.off('message', onMessage);
        void worker.terminate();
        reject(new Error(why));
      };
      const onMessage = (m: FromPolicyWorker): void => {
        if (m.type === 'ready') {
          worker.off('message', onMessage);
          worker.removeAllListeners('error').removeAllListeners('exit');
          resolve(new ThreadedPolicy(worker, m.info, opts.answerTimeoutMs ?? DEFAULT_ANSWER_TIMEOUT_MS));
        } else if (m.type === 'open-failed') {
          fail(m.message);
        }
      };
      worker.on('message', onMessage);
      worker.once('error', (e) =>
        fail(`The worker thread for policy ${spec} crashed while opening it: ${messageOf(e)}`),
      );
      worker.once('exit', (code) =>
        fail(`The worker thread for policy ${spec} exited (code ${code}) before the policy was open.`),
      );
    });
  }

  async reset(ctx: EpisodeContext): Promise<void> {
    await this.call({ type: 'reset', id: 0, ctx }, 'a reset');
  }

  async infer(obs: Observation): Promise<ActionChunk> {
    const m = await this.call({ type: 'infer', id: 0, obs }, 'an inference');
    if (m.type !== 'chunk')
      throw new Error(`The worker thread running policy ${this.info.name} answered an inference without a chunk.`);
    return m.chunk;
  }

  /** The policy's own close, then the worker is terminated — also when it is hung or already gone. */
  close(): Promise<void> {
    this.closing ??= (async () => {
      if (!this.gone) {
        // A worker busy planning (its inference given up by the rollout's deadline) answers no close: a short grace, then it is ended.
        let grace: NodeJS.Timeout | undefined;
        const closed = this.call({ type: 'close', id: 0 }, 'its close', null).catch(() => {});
        await Promise.race([closed, new Promise<void>((resolve) => (grace = setTimeout(resolve, CLOSE_GRACE_MS)))]);
        clearTimeout(grace);
      }
      this.stop(new PolicyUnavailableError(`Policy ${this.info.name} was closed.`, 'disconnected'));
      await this.worker.terminate();
    })();
    return this.closing;
  }

  /** Sends one request; unanswered after `timeoutMs` (null: no limit), the worker counts as hung and is terminated. */
  private call(
    msg: ToPolicyWorker,
    what: string,
    timeoutMs: number | null = this.answerTimeoutMs,
  ): Promise<FromPolicyWorker> {
    if (this.gone) return Promise.reject(this.gone);
    const id = this.nextId++;
    return new Promise((resolve, reject) => {
      const timer =
        timeoutMs === null
          ? undefined
          : setTimeout(() => {
              this.stop(
                new PolicyUnavailableError(
                  `Policy ${this.info.name} did not answer ${what} within ${timeoutMs} ms; its worker thread was stopped.`,
                  'timeout',
                ),
              );
              void this.worker.terminate();
            }, timeoutMs);
      this.pending.set(id, { resolve, reject, timer });
      this.worker.ref();
      this.worker.postMessage({ ...msg, id });
    });
  }

  /** The pending call `id`, removed and its timer cleared (undefined when it was given up). */
  private settle(id: number): Pending | undefined {
    const p = this.pending.get(id);
    if (!p) return undefined;
    this.pending.delete(id);
    clearTimeout(p.timer);
    if (this.pending.size === 0) this.worker.unref();
    return p;
  }

  /** The worker is gone (or being stopped) for `why`: every pending and later call rejects with it. */
  private stop(why: Error): void {
    if (!this.gone) this.gone = why;
    for (const id of [...this.pending.keys()]) this.settle(id)?.reject(this.gone);
  }
}
