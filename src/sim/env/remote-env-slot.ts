/**
 * The server's side of `serve-env --queue`: claims env slots that `tandem sim env-worker` hosts
 * advertise in Redis, sends each its init and then the pool's requests, and reads every slot's
 * answers from the server's outbox. A slot whose host stops refreshing its alive key is failed,
 * so a request on it ends in an error instead of waiting for ever.
 */
import { randomBytes } from 'node:crypto';
import type { Redis } from 'ioredis';
import { connectRedis, type QueueAddress } from '../queue/connection.js';
import { within } from '../queue/bounded.js';
import { EnvSlot } from './env-slot.js';
import type { EnvWorkerInit, FromEnvWorker, ToEnvWorker } from './env-worker-protocol.js';
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

/** What a slot's host sends a server first: the thread's init and where to answer. */
export interface SlotInit {
  readonly type: 'init';
  readonly server: string;
  readonly init: EnvWorkerInit;
}

/** One answer in a server's outbox. */
export interface SlotAnswer {
  readonly slot: string;
  readonly message: FromEnvWorker;
}

class RemoteEnvSlot extends EnvSlot {
  constructor(
    readonly slot: string,
    private readonly redis: Redis,
  ) {
    super();
  }

  protected send(m: ToEnvWorker): void {
    void this.redis
      .rpush(slotInboxKey(this.slot), packEnvMessage(m))
      .catch((e: unknown) => this.die(`Redis refused a request for it (${(e as Error).message})`));
  }

  answer(m: FromEnvWorker): void {
    this.deliver(m);
  }

  lost(why: string): void {
    this.die(why);
  }

  close(): Promise<void> {
    // The host ends the thread and advertises the slot again; nothing here waits for that.
    this.post({ type: 'close' });
    return Promise.resolve();
  }
}

export interface ClaimOptions {
  readonly address: QueueAddress;
  readonly count: number;
  readonly init: EnvWorkerInit;
  readonly signal?: AbortSignal;
  readonly log: (line: string) => void;
}

/** Waits until `count` slots are claimed and started (however long that takes: workers may start later). */
export async function claimRemoteSlots(opts: ClaimOptions): Promise<{ slots: EnvSlot[]; close(): Promise<void> }> {
  const server = `${process.pid}-${randomBytes(6).toString('hex')}`;
  const cmd = await connectRedis(opts.address);
  const reader = await connectRedis(opts.address);
  const bySlot = new Map<string, RemoteEnvSlot>();
  let closing = false;

  const heartbeat = async (): Promise<void> => {
    await cmd.set(serverAliveKey(server), '1', 'PX', ALIVE_TTL_MS);
    for (const [slot, s] of bySlot) {
      if (s.dead) continue;
      if ((await cmd.exists(slotAliveKey(slot))) === 0)
        s.lost(
          `its host stopped answering (no heartbeat in Redis at ${opts.address.shown} for ${ALIVE_TTL_MS / 1000} s)`,
        );
    }
  };
  await heartbeat();
  const beat = setInterval(() => void heartbeat().catch(() => {}), HEARTBEAT_MS);

  const reading = (async () => {
    while (!closing) {
      let got: [Buffer, Buffer] | null;
      try {
        got = await reader.blpopBuffer(serverOutboxKey(server), 1);
      } catch {
        if (closing) return;
        continue;
      }
      if (!got) continue;
      const a = unpackEnvMessage(got[1]) as SlotAnswer;
      bySlot.get(a.slot)?.answer(a.message);
    }
  })();

  const close = async (): Promise<void> => {
    closing = true;
    clearInterval(beat);
    reader.disconnect();
    await reading;
    await within(cmd.del(serverAliveKey(server), serverOutboxKey(server)), 2000).catch(() => undefined);
    cmd.disconnect();
  };

  const claimer = await connectRedis(opts.address);
  try {
    const started = Date.now();
    let said = false;
    while (bySlot.size < opts.count) {
      if (opts.signal?.aborted) throw new Error(`Stopped while waiting for env workers on ${opts.address.shown}.`);
      const got = await claimer.blpop(idleSlotsKey(), 1);
      if (!got) {
        if (!said && Date.now() - started > 2000) {
          said = true;
          opts.log(
            `Waiting for env workers on ${opts.address.shown} (${bySlot.size} of ${opts.count} claimed): start 'tandem sim env-worker --queue redis://HOST:PORT[/DB]' on each worker machine.`,
          );
        }
        continue;
      }
      const slot = got[1];
      // A slot left in the list by a host that died since: skip it.
      if ((await cmd.exists(slotAliveKey(slot))) === 0) continue;
      const s = new RemoteEnvSlot(slot, cmd);
      bySlot.set(slot, s);
      const init: SlotInit = { type: 'init', server, init: opts.init };
      await cmd.rpush(slotInboxKey(slot), packEnvMessage(init));
      opts.log(`claimed env worker ${slot} (${bySlot.size} of ${opts.count})`);
    }
  } catch (e) {
    for (const s of bySlot.values()) await s.close();
    await close();
    throw e;
  } finally {
    claimer.disconnect();
  }
  return { slots: [...bySlot.values()], close };
}
