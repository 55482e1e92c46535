/**
 * A queued rollout's recording on its way to the coordinator: the worker keeps every call the
 * rollout made on its recording (recording-relay.ts, as a sweep on one machine does), packs them
 * with msgpackr (typed arrays as they are: the file gets the same float64s), deflates them, and
 * puts them in the queue's Redis under their SHA-256 (`tandem:recording:SHA`, expiring with the
 * job). The job's result names only the hash and the size; the coordinator fetches the bytes,
 * checks them against the hash and the rollout they claim to be, writes the episode file and
 * deletes them. The bytes name their rollout, so two rollouts never share a blob.
 */
import { promisify } from 'node:util';
import { deflateRaw, inflateRaw } from 'node:zlib';
import { Packr } from 'msgpackr';
import type { Redis } from 'ioredis';
import type { RecordedCall } from '../recording-relay.js';
import { BLOB_TTL_S, sha256Hex } from './blobs.js';

/** The packed format; a change to it bumps it. */
export const RECORDING_FORMAT = 'tandem.sim-recording/1';

/**
 * The most a rollout's packed calls may take (before deflate): 256 MiB, about two hours of a
 * 50 Hz episode (a moving policy packs to ~37 kB a second and deflates to about half). Over it,
 * the rollout is stored without its episode file, and the coordinator never inflates more.
 */
export const RECORDING_LIMIT_BYTES = 256 * 1024 * 1024;

/** A recording that cannot travel or cannot be used: one sentence, said where the rollout is stored. */
export class RecordingBlobError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'RecordingBlobError';
  }
}

/** Which rollout a recording is of; packed with it, checked on arrival. */
export interface RecordingIdentity {
  readonly sweepId: string;
  readonly layoutIndex: number;
  readonly repeat: number;
}

export function recordingKey(sha256: string): string {
  return `tandem:recording:${sha256}`;
}

// moreTypes: Float64Array comes back a Float64Array (bit for bit, -0 and all); records: the
// calls' repeated keys are written once. structuredClone stays off: no references in the data.
const packr = new Packr({ moreTypes: true, useRecords: true, structuredClone: false });

const deflate = promisify(deflateRaw);
const inflate = promisify(inflateRaw);

function mib(bytes: number): string {
  const m = bytes / 1024 / 1024;
  return `${Number.isInteger(m) ? m : m.toFixed(1)} MiB`;
}

/** The calls, packed and deflated; throws RecordingBlobError (one sentence, naming the limit) when they are too big to travel. */
export async function encodeRecording(
  id: RecordingIdentity,
  calls: readonly RecordedCall[],
  limitBytes = RECORDING_LIMIT_BYTES,
): Promise<Buffer> {
  const packed = packr.pack({
    format: RECORDING_FORMAT,
    sweepId: id.sweepId,
    layoutIndex: id.layoutIndex,
    repeat: id.repeat,
    calls,
  });
  if (packed.length > limitBytes) {
    throw new RecordingBlobError(
      `its recording packs to ${mib(packed.length)}, over the ${mib(limitBytes)} a queued rollout may carry; run it in a sweep on one machine (--workers) to record it, or shorten --seconds.`,
    );
  }
  // Deflated on libuv's thread pool: the worker's event loop keeps renewing its job locks.
  return deflate(packed);
}

const isObj = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v);
const isF64 = (v: unknown): boolean => v instanceof Float64Array;
const isNum = (v: unknown): boolean => typeof v === 'number';

/** True when one value has the shape of a RecordedCall (what replayRecording and the episode writer read). */
function isCall(c: unknown): c is RecordedCall {
  if (!isObj(c)) return false;
  if (c.k === 'state') {
    const s = c.state;
    return (
      isObj(s) &&
      isNum(s.timeS) &&
      typeof s.mode === 'string' &&
      isF64(s.position) &&
      isF64(s.velocity) &&
      isF64(s.effort) &&
      Array.isArray(s.faults) &&
      s.faults.every((f) => isObj(f) && typeof f.kind === 'string' && typeof f.message === 'string')
    );
  }
  if (c.k === 'command') {
    const a = c.applied;
    return (
      isNum(c.timeS) &&
      isObj(a) &&
      isF64(a.position) &&
      (a.velocity === undefined || isF64(a.velocity)) &&
      (a.torqueNm === undefined || isF64(a.torqueNm))
    );
  }
  if (c.k === 'safety') return isObj(c.event) && isNum(c.event.timeS);
  // The per-step timing (observation-to-action latency, camera frame ages) every rollout records.
  if (c.k === 'timing') return isNum(c.timeS) && isObj(c.timing);
  if (c.k === 'event')
    return (
      isNum(c.timeS) &&
      typeof c.kind === 'string' &&
      typeof c.source === 'string' &&
      typeof c.message === 'string' &&
      (c.detail === undefined || isObj(c.detail))
    );
  return false;
}

/** The calls in `bytes`, checked to be of rollout `id`; throws RecordingBlobError with one sentence. */
export async function decodeRecording(
  bytes: Uint8Array,
  id: RecordingIdentity,
  limitBytes = RECORDING_LIMIT_BYTES,
): Promise<RecordedCall[]> {
  let packed: Buffer;
  try {
    packed = await inflate(bytes, { maxOutputLength: limitBytes });
  } catch (e) {
    throw new RecordingBlobError(`its recording does not inflate (${(e as Error).message}).`);
  }
  let value: unknown;
  try {
    value = packr.unpack(packed);
  } catch (e) {
    throw new RecordingBlobError(`its recording does not unpack (${(e as Error).message}).`);
  }
  if (!isObj(value) || value.format !== RECORDING_FORMAT)
    throw new RecordingBlobError(`its recording is not a ${RECORDING_FORMAT}.`);
  if (value.sweepId !== id.sweepId || value.layoutIndex !== id.layoutIndex || value.repeat !== id.repeat) {
    throw new RecordingBlobError(
      `the recording its result names is of sweep ${String(value.sweepId)} layout ${String(value.layoutIndex)} repeat ${String(value.repeat)}, not of this rollout.`,
    );
  }
  const calls = value.calls;
  if (!Array.isArray(calls) || !calls.every(isCall))
    throw new RecordingBlobError('its recording holds calls of a shape no rollout makes.');
  return calls;
}

/** Stores a recording under its hash, expiring with the job that made it; returns the hash. */
export async function putRecordingBlob(redis: Redis, bytes: Buffer): Promise<string> {
  const sha256 = sha256Hex(bytes);
  await redis.set(recordingKey(sha256), bytes, 'EX', BLOB_TTL_S);
  return sha256;
}

/** The recording stored under `sha256`, checked against it; throws RecordingBlobError (missing, or changed). */
export async function getRecordingBlob(redis: Redis, sha256: string): Promise<Buffer> {
  const bytes = await redis.getBuffer(recordingKey(sha256));
  if (bytes === null)
    throw new RecordingBlobError(
      `its recording ${sha256.slice(0, 12)}… is not in the queue's store (expired, or removed).`,
    );
  const found = sha256Hex(bytes);
  if (found !== sha256)
    throw new RecordingBlobError(
      `its recording in the queue's store under ${sha256.slice(0, 12)}… hashes to ${found.slice(0, 12)}…: its bytes were changed or damaged.`,
    );
  return bytes;
}

export async function deleteRecordingBlob(redis: Redis, sha256: string): Promise<void> {
  await redis.del(recordingKey(sha256));
}
