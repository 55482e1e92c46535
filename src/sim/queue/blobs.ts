/**
 * Content-addressed bytes in the queue's Redis: the layout set and ONNX weights a sweep needs
 * travel once, under their SHA-256, and every reader checks the bytes against the name before
 * using them — a worker needs nothing but the queue's address.
 */
import { createHash } from 'node:crypto';
import type { Redis } from 'ioredis';
import { JobRefusedError } from './job.js';

export function blobKey(sha256: string): string {
  return `tandem:blob:${sha256}`;
}

export function sha256Hex(bytes: Uint8Array | string): string {
  return createHash('sha256').update(bytes).digest('hex');
}

/**
 * How long a blob outlives the last sweep that put or used it — the same week a job nobody
 * collects is kept — so weights and layout sets of finished sweeps do not fill Redis for ever.
 */
export const BLOB_TTL_S = 7 * 24 * 3600;

/** Stores `value` under `key` once (a blob never changes under its name) and starts its week again. */
async function putOnce(redis: Redis, key: string, value: Buffer | string): Promise<void> {
  const set = await redis.set(key, value, 'EX', BLOB_TTL_S, 'NX');
  if (set === null) await redis.expire(key, BLOB_TTL_S);
}

/** Starts the blobs' week again (a coordinator still collecting keeps what its jobs read). */
export async function keepBlobs(redis: Redis, keys: readonly string[]): Promise<void> {
  for (const key of keys) await redis.expire(key, BLOB_TTL_S);
}

/** Stores bytes under their hash (once: a blob never changes under its name). Returns the hash. */
export async function putBlob(redis: Redis, bytes: Uint8Array | string): Promise<string> {
  const sha256 = sha256Hex(bytes);
  await putOnce(redis, blobKey(sha256), Buffer.from(bytes));
  return sha256;
}

/** The bytes stored under `sha256`, checked; throws JobRefusedError (missing, or not matching its hash). */
export async function getVerifiedBlob(redis: Redis, sha256: string, what: string): Promise<Buffer> {
  const bytes = await redis.getBuffer(blobKey(sha256));
  if (bytes === null)
    throw new JobRefusedError(
      `The ${what} ${sha256.slice(0, 12)}… is not in the queue's store; restart the sweep's coordinator, which puts it there.`,
    );
  const found = sha256Hex(bytes);
  if (found !== sha256) {
    throw new JobRefusedError(
      `The ${what} in the queue's store under ${sha256.slice(0, 12)}… hashes to ${found.slice(0, 12)}…: its bytes were changed or damaged; this worker refuses to run it.`,
    );
  }
  return bytes;
}

/**
 * Layout sets are named by their own hash (over their canonical JSON, not their file's bytes),
 * so they live under their own key and the reader checks them by parsing (parseLayoutSet).
 */
export function layoutSetKey(sha256: string): string {
  return `tandem:layout-set:${sha256}`;
}

export async function putLayoutSetBlob(redis: Redis, sha256: string, text: string): Promise<void> {
  await putOnce(redis, layoutSetKey(sha256), text);
}

/** The layout set's text, unchecked: the caller parses it, which verifies its hash. */
export async function getLayoutSetBlob(redis: Redis, sha256: string): Promise<string> {
  const text = await redis.get(layoutSetKey(sha256));
  if (text === null)
    throw new JobRefusedError(
      `The layout set ${sha256.slice(0, 12)}… is not in the queue's store; restart the sweep's coordinator, which puts it there.`,
    );
  return text;
}
