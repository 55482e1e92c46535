/**
 * Action-chunk execution: open loop (openpi's reference client), replanning every k steps,
 * optional temporal ensembling (ACT), and prefetch — the next observation is taken and its
 * inference started p steps before the current chunk's turn ends, so a policy slower than one
 * control period does not leave the arm waiting at chunk boundaries.
 *
 * Deterministic under a stepped sim clock: which step's observation feeds a chunk, and at
 * which step that chunk takes over, are fixed by (p, k) alone — never by how long inference
 * took. Schedule, with chunk c's observation at step o_c and takeover at step a_c:
 *   chunk 0:  o = a = first step (the only wait that cannot be hidden)
 *   chunk c:  a_c = a_{c-1} + k,  o_c = a_c − p
 *   row used at step t = t − o_c   (rows 0..p−1 of a prefetched chunk are already in the past)
 * so p ≤ k (one inference in flight) and p + k ≤ H.
 */
import { STATE_DIM } from '../rig/contract.js';
import {
  PolicyUnavailableError,
  type ActionChunk,
  type ChunkExecutor,
  type EpisodeContext,
  type InferenceTiming,
  type Observation,
  type Policy,
  type StepAction,
} from './contract.js';
import { InvalidActionError, validateActionChunk } from './actions.js';

export interface ChunkExecutionOptions {
  /** k: steps each chunk drives before the next takes over. Default: the horizon minus prefetchSteps (use the whole chunk). */
  readonly replanEverySteps?: number;
  /** p: steps before the takeover at which the next observation is taken and inference starts. 0 = openpi reference (the arm waits at every boundary). */
  readonly prefetchSteps?: number;
  /** Temporal ensembling (ACT): blend the rows overlapping chunks give for a step with weights exp(−decay·i), i = 0 the oldest chunk. Off when undefined. */
  readonly ensembleDecay?: number;
  /** Wall-clock deadline per inference, from its request to the step that needs it. Default 5000 ms. */
  readonly deadlineMs?: number;
}

/** One inference, as the rollout may record it. */
export interface ChunkRecord {
  readonly chunkIndex: number;
  /** Step whose observation fed the chunk. */
  readonly observedStep: number;
  /** Step at which the chunk took over. */
  readonly adoptedStep: number;
  readonly horizon: number;
  /** Wall time from request until the result was there (only its ordering relative to the schedule is wall-clock dependent). */
  readonly latencyMs: number;
  /** Wall time the control loop waited at the takeover step (≈0 when prefetch hid the latency). */
  readonly waitedMs: number;
  /** The answer was there before the takeover step asked for it: the arm did not wait. */
  readonly readyAtTakeover: boolean;
  readonly timing?: InferenceTiming;
}

export interface ChunkExecutorWithLog extends ChunkExecutor {
  /** Every chunk adopted since reset, in order. */
  chunks(): readonly ChunkRecord[];
}

interface AdoptedChunk {
  readonly index: number;
  readonly observedStep: number;
  readonly horizon: number;
  readonly actions: Float32Array;
}

interface Inflight {
  readonly index: number;
  readonly observedStep: number;
  readonly startedMs: number;
  result?: { chunk: ActionChunk; doneMs: number } | { error: unknown };
  readonly done: Promise<void>;
}

const DEFAULT_DEADLINE_MS = 5000;

export function createChunkExecutor(policy: Policy, opts: ChunkExecutionOptions = {}): ChunkExecutorWithLog {
  const p = opts.prefetchSteps ?? 0;
  const deadlineMs = opts.deadlineMs ?? DEFAULT_DEADLINE_MS;
  if (!Number.isInteger(p) || p < 0) throw new RangeError(`prefetchSteps must be a whole number ≥ 0, not ${p}.`);
  if (opts.replanEverySteps !== undefined && (!Number.isInteger(opts.replanEverySteps) || opts.replanEverySteps < 1)) {
    throw new RangeError(`replanEverySteps must be a whole number ≥ 1, not ${opts.replanEverySteps}.`);
  }
  if (opts.replanEverySteps !== undefined && p > opts.replanEverySteps) {
    throw new RangeError(
      `prefetchSteps (${p}) may not exceed replanEverySteps (${opts.replanEverySteps}): only one inference is in flight at a time.`,
    );
  }
  if (opts.ensembleDecay !== undefined && !(Number.isFinite(opts.ensembleDecay) && opts.ensembleDecay >= 0)) {
    throw new RangeError(`ensembleDecay must be a number ≥ 0, not ${opts.ensembleDecay}.`);
  }
  if (!(deadlineMs > 0)) throw new RangeError(`deadlineMs must be positive, not ${deadlineMs}.`);

  let k = 0; // fixed by the first chunk's horizon unless given
  let current: AdoptedChunk | undefined;
  let kept: AdoptedChunk[] = []; // for ensembling: chunks whose rows still cover the present
  let nextTakeover = 0;
  let inflight: Inflight | undefined;
  let nextIndex = 0;
  let log: ChunkRecord[] = [];

  const name = (): string => policy.info.name;

  function request(obs: Observation, stepIndex: number): Inflight {
    const started = performance.now();
    const f: Inflight = {
      index: nextIndex++,
      observedStep: stepIndex,
      startedMs: started,
      done: Promise.resolve()
        .then(() => policy.infer(obs))
        .then(
          (chunk) => void (f.result = { chunk, doneMs: performance.now() }),
          (error: unknown) => void (f.result = { error }),
        ),
    };
    return f;
  }

  async function collect(
    f: Inflight,
  ): Promise<{ chunk: ActionChunk; waitedMs: number; latencyMs: number; ready: boolean }> {
    const waitStart = performance.now();
    const ready = f.result !== undefined;
    if (f.result === undefined) {
      const left = deadlineMs - (waitStart - f.startedMs);
      let timer: NodeJS.Timeout | undefined;
      // Wall clock on purpose, in sim too: a hung server hangs in real time.
      const expired = new Promise<'expired'>(
        (resolve) => (timer = setTimeout(() => resolve('expired'), Math.max(0, left))),
      );
      const won = await Promise.race([f.done.then(() => 'done' as const), expired]);
      clearTimeout(timer);
      if (won === 'expired' && f.result === undefined) {
        throw new PolicyUnavailableError(
          `Policy ${name()} did not answer within ${deadlineMs} ms (chunk ${f.index}, observed at step ${f.observedStep}).`,
          'timeout',
        );
      }
    }
    const r = f.result;
    if (r === undefined) throw new Error('inference settled without a result'); // unreachable: done sets result
    if ('error' in r) throw r.error;
    return { chunk: r.chunk, waitedMs: performance.now() - waitStart, latencyMs: r.doneMs - f.startedMs, ready };
  }

  function adopt(
    f: Inflight,
    { chunk, waitedMs, latencyMs, ready }: Awaited<ReturnType<typeof collect>>,
    stepIndex: number,
  ): void {
    validateActionChunk(chunk, name());
    if (k === 0) {
      k = opts.replanEverySteps ?? chunk.horizon - p;
      if (k < 1 || p > k) {
        throw new InvalidActionError(
          `Policy ${name()} answers chunks of ${chunk.horizon} rows, too short to prefetch ${p} steps ahead; lower the prefetch or use a longer horizon.`,
        );
      }
    }
    const needed = f.index === 0 ? k : p + k;
    if (chunk.horizon < needed) {
      throw new InvalidActionError(
        `Policy ${name()} answered ${chunk.horizon} action rows but this execution plan needs ${needed} (replan every ${k} steps, prefetch ${p}); lower them or use a longer horizon.`,
      );
    }
    current = { index: f.index, observedStep: f.observedStep, horizon: chunk.horizon, actions: chunk.actions };
    if (opts.ensembleDecay !== undefined) kept.push(current);
    nextTakeover = stepIndex + k;
    log.push({
      chunkIndex: f.index,
      observedStep: f.observedStep,
      adoptedStep: stepIndex,
      horizon: chunk.horizon,
      latencyMs,
      waitedMs,
      readyAtTakeover: ready,
      timing: chunk.timing,
    });
  }

  function blend(stepIndex: number): Float32Array {
    kept = kept.filter((c) => stepIndex - c.observedStep < c.horizon);
    const out = new Float32Array(STATE_DIM);
    let total = 0;
    kept.forEach((c, i) => {
      const w = Math.exp(-(opts.ensembleDecay ?? 0) * i);
      const row = stepIndex - c.observedStep;
      for (let j = 0; j < STATE_DIM; j++) out[j] += w * c.actions[row * STATE_DIM + j];
      total += w;
    });
    for (let j = 0; j < STATE_DIM; j++) out[j] /= total;
    return out;
  }

  function discardInflight(): void {
    // Its result (or error) is no longer wanted; `done` never rejects, so nothing goes unhandled.
    inflight = undefined;
  }

  return {
    async reset(ctx: EpisodeContext) {
      discardInflight();
      current = undefined;
      kept = [];
      k = 0;
      nextTakeover = 0;
      nextIndex = 0;
      log = [];
      await policy.reset(ctx);
    },

    async step(stepIndex: number, _tS: number, observe: () => Promise<Observation>): Promise<StepAction> {
      if (current === undefined) {
        const f = request(await observe(), stepIndex);
        adopt(f, await collect(f), stepIndex);
      } else {
        if (inflight === undefined && stepIndex >= nextTakeover - p) inflight = request(await observe(), stepIndex);
        if (stepIndex >= nextTakeover && inflight !== undefined) {
          const f = inflight;
          inflight = undefined;
          adopt(f, await collect(f), stepIndex);
        }
      }
      const c = current as AdoptedChunk;
      const row = stepIndex - c.observedStep;
      if (row < 0 || row >= c.horizon) {
        throw new RangeError(
          `step ${stepIndex} is outside chunk ${c.index} (observed at step ${c.observedStep}, ${c.horizon} rows); steps must be called once per cycle, in order.`,
        );
      }
      const position =
        opts.ensembleDecay !== undefined
          ? blend(stepIndex)
          : c.actions.subarray(row * STATE_DIM, (row + 1) * STATE_DIM);
      return { position, chunkIndex: c.index, row };
    },

    replanNow() {
      discardInflight();
      current = undefined;
      kept = [];
    },

    chunks: () => log,
  };
}

/**
 * Parses `replan=K,prefetch=P,ensemble=DECAY,deadline=MS` (any subset, e.g. from a CLI option)
 * into options; throws RangeError with one sentence on anything else.
 */
export function parseChunkExecution(text: string): ChunkExecutionOptions {
  const out: { -readonly [K in keyof ChunkExecutionOptions]: ChunkExecutionOptions[K] } = {};
  const keys: Record<string, keyof ChunkExecutionOptions> = {
    replan: 'replanEverySteps',
    prefetch: 'prefetchSteps',
    ensemble: 'ensembleDecay',
    deadline: 'deadlineMs',
  };
  for (const part of text
    .split(',')
    .map((s) => s.trim())
    .filter(Boolean)) {
    const [key, value, ...rest] = part.split('=');
    const field = keys[key?.trim() ?? ''];
    const n = Number(value);
    if (field === undefined || rest.length > 0 || value === undefined || value.trim() === '' || !Number.isFinite(n)) {
      throw new RangeError(
        `Chunk execution '${part}' is not understood; write replan=K,prefetch=P,ensemble=DECAY,deadline=MS (any of them).`,
      );
    }
    out[field] = n;
  }
  return out;
}
