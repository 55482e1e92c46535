/**
 * `tandem sim env-worker`: runs env server worker threads for `serve-env --queue` servers on this
 * machine. Each of its slots advertises itself in Redis, waits for a server to claim it, starts
 * the same env worker thread a local server would (env-worker.ts) with that server's init, and
 * relays: the slot's inbox list to the thread, the thread's messages to the server's outbox. When
 * the server closes it, or stops refreshing its alive key, the thread ends and the slot is
 * advertised again.
 */
import { hostname } from 'node:os';
import { randomBytes } from 'node:crypto';
import { Worker } from 'node:worker_threads';
import type { Redis } from 'ioredis';
import { connectRedis, type QueueAddress } from '../queue/connection.js';
import { within } from '../queue/bounded.js';
import { ENV_WORKER_ENTRY } from './env-slot.js';
import type { FromEnvWorker, ToEnvWorker } from './env-worker-protocol.js';
import type { SlotAnswer, SlotInit } from './remote-env-slot.js';
import {
  ALIVE_TTL_MS,
  HEARTBEAT_MS,
  idleSlotsKey,
  packEnvMessage,
  serverAliveKey,
  serverOutboxKey,
  slotAliveKey,
  slotInboxKey,
  unpackEnvMessage,
} from './env-queue-keys.js';

export interface EnvWorkerHostOptions {
  readonly address: QueueAddress;
  /** Env threads offered (one per core is the most that helps). */
  readonly slots: number;
  readonly signal: AbortSignal;
  readonly log: (line: string) => void;
}

/** A slot that waited this long without the init of the server that popped it advertises again (that server died in between). */
const UNCLAIMED_CHECK_MS = 30_000;

/** Serves until the signal; resolves with how many server sessions its slots served. */
export async function runEnvWorkerHost(opts: EnvWorkerHostOptions): Promise<{ sessions: number }> {
  const cmd = await connectRedis(opts.address);
  const ids = Array.from(
    { length: opts.slots },
    (_, k) => `${hostname()}-${process.pid}-${k}-${randomBytes(3).toString('hex')}`,
  );
  const alive = async (): Promise<void> => {
    const p = cmd.pipeline();
    for (const id of ids) p.set(slotAliveKey(id), '1', 'PX', ALIVE_TTL_MS);
    await p.exec();
  };
  await alive();
  const beat = setInterval(() => void alive().catch(() => {}), HEARTBEAT_MS);
  let sessions = 0;
  const blocking: Redis[] = [];
  try {
    for (let k = 0; k < ids.length; k++) blocking.push(await connectRedis(opts.address));
    opts.log(
      `env worker on ${opts.address.shown}: ${ids.length} slot${ids.length === 1 ? '' : 's'} waiting for serve-env --queue servers`,
    );
    await Promise.all(
      ids.map(async (id, k) => {
        const conn = blocking[k];
        while (!opts.signal.aborted) {
          const init = await awaitClaim(id, conn);
          if (!init) break;
          sessions += 1;
          await serve(id, conn, init);
        }
      }),
    );
  } finally {
    clearInterval(beat);
    for (const b of blocking) b.disconnect();
    // With Redis gone the keys lapse or stay stale (servers skip a slot with no alive key): never wait for it.
    await within(
      Promise.all([
        ...ids.map((id) => cmd.lrem(idleSlotsKey(), 0, id)),
        cmd.del(...ids.map(slotAliveKey), ...ids.map(slotInboxKey)),
      ]),
      2000,
    ).catch(() => undefined);
    cmd.disconnect();
  }
  return { sessions };

  /** Advertises the slot and waits for a server's init; undefined once stopped. */
  async function awaitClaim(id: string, conn: Redis): Promise<SlotInit | undefined> {
    // Requests left from a server that is gone must not reach the next one's thread.
    await cmd.del(slotInboxKey(id));
    await cmd.rpush(idleSlotsKey(), id);
    let since = Date.now();
    while (!opts.signal.aborted) {
      const got = await conn.blpopBuffer(slotInboxKey(id), 1);
      if (got) {
        const m = unpackEnvMessage(got[1]) as { type?: unknown };
        if (m.type === 'init') return m as SlotInit;
        continue;
      }
      if (Date.now() - since > UNCLAIMED_CHECK_MS) {
        since = Date.now();
        if ((await cmd.lpos(idleSlotsKey(), id)) === null) await cmd.rpush(idleSlotsKey(), id);
      }
    }
    return undefined;
  }

  async function serve(id: string, conn: Redis, claim: SlotInit): Promise<void> {
    const outbox = serverOutboxKey(claim.server);
    const answer = (message: FromEnvWorker): void => {
      const a: SlotAnswer = { slot: id, message };
      void cmd.rpush(outbox, packEnvMessage(a)).catch(() => 0);
    };
    opts.log(`slot ${id}: serving ${claim.init.taskId} for server ${claim.server}`);
    const thread = new Worker(ENV_WORKER_ENTRY, { workerData: claim.init });
    let closing = false;
    let exited = false;
    const exit = new Promise<void>((resolve) =>
      thread.once('exit', (code) => {
        exited = true;
        if (!closing) answer({ type: 'fatal', message: `its thread on ${hostname()} exited with code ${code}` });
        resolve();
      }),
    );
    thread.on('message', (m: FromEnvWorker) => answer(m));
    thread.on('error', (e) => answer({ type: 'fatal', message: `its thread on ${hostname()} failed: ${e.message}` }));
    let why = 'closed by its server';
    while (!exited) {
      if (opts.signal.aborted) {
        why = 'this env worker was stopped';
        answer({ type: 'fatal', message: `its env worker on ${hostname()} was stopped` });
        break;
      }
      const got = await conn.blpopBuffer(slotInboxKey(id), 1);
      if (!got) {
        if ((await cmd.exists(serverAliveKey(claim.server))) === 0) {
          why = 'its server is gone';
          break;
        }
        continue;
      }
      const m = unpackEnvMessage(got[1]) as ToEnvWorker;
      if (m.type === 'close') break;
      thread.postMessage(m);
    }
    closing = true;
    if (!exited) {
      thread.postMessage({ type: 'close' } satisfies ToEnvWorker);
      const timer = setTimeout(() => void thread.terminate(), 5000);
      await exit;
      clearTimeout(timer);
    }
    opts.log(`slot ${id}: session ended (${why})`);
  }
}
