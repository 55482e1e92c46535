/**
 * One queued sim rollout: what the coordinator puts on the queue and what a worker accepts.
 * A worker trusts nothing in a job: it checks the shape and numbers here, takes policies only
 * as specs the policy registry opens by name (`code:NAME…`, `ws://`) or as ONNX bytes named by
 * their content hash, and never loads a file or module a job names.
 */
import { readFileSync } from 'node:fs';
import type { SimCalibration } from '../calibration.js';
import type { SweepRollout } from '../sweep.js';
import type { SceneLook } from '../render/scene-look.js';

/** The queue every tandem worker takes sim rollouts from (one per Redis database). */
export const SIM_QUEUE_NAME = 'tandem-sim';
/** The payload's own format; a change to its fields bumps it. */
export const SIM_JOB_FORMAT = 'tandem.sim-job/2';
/** The tandem version that wrote a job: workers run only jobs of their own version (same physics, same results). */
export const TANDEM_VERSION: string = (
  JSON.parse(readFileSync(new URL('../../../package.json', import.meta.url), 'utf8')) as { version: string }
).version;

/** How a job names its policy. */
export type JobPolicy =
  /** A registry spec that loads nothing from disk: `code:NAME[?opts]` or `ws://` / `wss://`. */
  | { readonly kind: 'spec'; readonly spec: string }
  /** ONNX weights in the queue's blob store under their SHA-256; verified on arrival. */
  | { readonly kind: 'onnx'; readonly sha256: string };

export interface SimJobData {
  readonly format: typeof SIM_JOB_FORMAT;
  readonly tandemVersion: string;
  readonly sweepId: string;
  /** The layout set travels once, by hash, in the blob store; the worker verifies it. */
  readonly layoutSetSha256: string;
  readonly layoutIndex: number;
  readonly repeat: number;
  readonly seed: number;
  readonly policy: JobPolicy;
  readonly calibration: SimCalibration;
  readonly calibrationSha256: string;
  /** Placement noise of a domain-randomized job (the calibration above is then its drawn world). */
  readonly placement?: { readonly sigmaM: number; readonly sigmaYawRad: number };
  /** How a domain-randomized job's cameras see it (src/sim/render/scene-look.ts). */
  readonly look?: SceneLook;
  readonly seconds: number;
  readonly controlHz?: number;
  /** Keep the rollout's recording calls and put them in the queue's store for the coordinator's episode file (recording-blob.ts). */
  readonly record?: true;
}

/** A job a worker refuses: one sentence, naming the job. */
export class JobRefusedError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'JobRefusedError';
  }
}

const HEX64 = /^[0-9a-f]{64}$/;
const SWEEP_ID = /^[A-Za-z0-9_-]{1,64}$/;

/** The job id: one job per (sweep, layout, repeat), so enqueuing twice adds nothing (BullMQ ids may not hold ':'). */
export function simJobId(sweepId: string, layoutIndex: number, repeat: number): string {
  return `${sweepId}-${layoutIndex}-${repeat}`;
}

/** "layout/repeat", the key results are collected and stored under. */
export function rolloutKey(layoutIndex: number, repeat: number): string {
  return `${layoutIndex}/${repeat}`;
}

function isObj(v: unknown): v is Record<string, unknown> {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

function wholeNumber(v: unknown, max: number): v is number {
  return Number.isSafeInteger(v) && (v as number) >= 0 && (v as number) <= max;
}

/** True when a spec opens a policy from the registry's own table or a server, never from a file. */
export function isQueueSafeSpec(spec: string): boolean {
  return /^code:[A-Za-z0-9_-]+(\?[A-Za-z0-9_.=&-]*)?$/.test(spec) || /^wss?:\/\/[^\s]+$/.test(spec);
}

/**
 * Checks a job's payload; returns it typed, or throws JobRefusedError with one sentence. The
 * version check comes first: a job of another tandem may have other fields, and another physics.
 */
export function validateSimJob(data: unknown, jobId: string): SimJobData {
  const where = `Job ${jobId}`;
  if (!isObj(data)) throw new JobRefusedError(`${where} carries no tandem sim job (its payload is not an object).`);
  if (data.tandemVersion !== TANDEM_VERSION) {
    throw new JobRefusedError(
      `${where} was queued by tandem ${String(data.tandemVersion)}; this worker is tandem ${TANDEM_VERSION}: run workers of the coordinator's version on this queue.`,
    );
  }
  if (data.format !== SIM_JOB_FORMAT)
    throw new JobRefusedError(`${where} has format ${JSON.stringify(data.format)}, not "${SIM_JOB_FORMAT}".`);
  if (typeof data.sweepId !== 'string' || !SWEEP_ID.test(data.sweepId))
    throw new JobRefusedError(`${where} names no valid sweep id.`);
  if (typeof data.layoutSetSha256 !== 'string' || !HEX64.test(data.layoutSetSha256))
    throw new JobRefusedError(`${where} names no layout set by its SHA-256.`);
  if (
    !wholeNumber(data.layoutIndex, 1_000_000) ||
    !wholeNumber(data.repeat, 1_000_000) ||
    !wholeNumber(data.seed, 2 ** 31 - 1)
  ) {
    throw new JobRefusedError(`${where} has a layout index, repeat or seed that is not a whole number in range.`);
  }
  if (typeof data.seconds !== 'number' || !(data.seconds >= 0.02 && data.seconds <= 3600))
    throw new JobRefusedError(`${where} asks for ${String(data.seconds)} s; an episode is 0.02 to 3600 s.`);
  if (
    data.controlHz !== undefined &&
    (typeof data.controlHz !== 'number' || !(data.controlHz > 0 && data.controlHz <= 1000))
  )
    throw new JobRefusedError(`${where} has control rate ${String(data.controlHz)} Hz.`);
  const p = data.policy;
  if (!isObj(p) || (p.kind !== 'spec' && p.kind !== 'onnx'))
    throw new JobRefusedError(`${where} names its policy neither by spec nor by model hash.`);
  if (p.kind === 'spec' && (typeof p.spec !== 'string' || !isQueueSafeSpec(p.spec))) {
    throw new JobRefusedError(
      `${where} names policy ${JSON.stringify(p.spec)}; a worker opens only code:NAME and ws:// specs, and ONNX models by hash, never a path from a job.`,
    );
  }
  if (p.kind === 'onnx' && (typeof p.sha256 !== 'string' || !HEX64.test(p.sha256)))
    throw new JobRefusedError(`${where} names its ONNX model by no valid SHA-256.`);
  if (!isObj(data.calibration) || typeof data.calibrationSha256 !== 'string' || !HEX64.test(data.calibrationSha256))
    throw new JobRefusedError(`${where} carries no sim calibration with its hash.`);
  if (data.placement !== undefined) {
    const pl = data.placement;
    const ok =
      isObj(pl) &&
      [pl.sigmaM, pl.sigmaYawRad].every((v) => typeof v === 'number' && Number.isFinite(v) && v >= 0 && v <= 0.5);
    if (!ok) throw new JobRefusedError(`${where} has placement noise that is not two numbers from 0 to 0.5.`);
  }
  // A look only moves cameras, lamps and colours a little; anything but small finite numbers is not one.
  const smallNumbers = (v: unknown): boolean =>
    typeof v === 'number'
      ? Number.isFinite(v) && Math.abs(v) <= 10
      : isObj(v) || Array.isArray(v)
        ? Object.values(v).every(smallNumbers)
        : false;
  if (data.look !== undefined && !(isObj(data.look) && smallNumbers(data.look)))
    throw new JobRefusedError(`${where} has a camera look that is not an object of small numbers.`);
  if (data.record !== undefined && data.record !== true)
    throw new JobRefusedError(`${where} has record ${JSON.stringify(data.record)}; it is true or absent.`);
  return data as unknown as SimJobData;
}

/**
 * Where a recorded rollout's calls went: the queue's store, under their hash (recording-blob.ts),
 * or nowhere, with the sentence saying why (too big to travel).
 */
export type RecordingRef = { readonly sha256: string; readonly bytes: number } | { readonly refused: string };

/**
 * What a worker returns for a job: the rollout (without its recording calls: a result stays
 * small, the calls travel as a blob), or that its sweep was stopped before it ran to the end.
 */
export type SimJobResult =
  | { readonly kind: 'rollout'; readonly rollout: SweepRollout; readonly recording?: RecordingRef }
  | { readonly kind: 'stopped' };
