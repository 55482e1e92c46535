/**
 * How `serve-env --queue` reaches environment threads on other machines through Redis: the keys,
 * the message codec and the heartbeats both sides keep (docs/env-server.md, "Environments on
 * worker machines"). An env worker host advertises each idle slot (one env thread) on its
 * version's list; a server claims a slot by popping it, sends its requests to the slot's inbox
 * list and reads every slot's answers from its own outbox list. Only a slot's own host reads
 * its inbox, only its server reads its outbox, so the lists keep each direction in order.
 */
import { Packr } from 'msgpackr';
import { TANDEM_VERSION } from '../queue/job.js';

/** Slots of this tandem version waiting for a server (another version may step other physics). */
export const idleSlotsKey = (): string => `tandem:env:${TANDEM_VERSION}:idle`;
/** Present while the slot's host is alive (refreshed every second). */
export const slotAliveKey = (slot: string): string => `tandem:env:slot:${slot}:alive`;
/** Requests for one slot: `init` from the server that claimed it, then the pool's messages. */
export const slotInboxKey = (slot: string): string => `tandem:env:slot:${slot}:in`;
/** Present while the server is alive (refreshed every second). */
export const serverAliveKey = (server: string): string => `tandem:env:server:${server}:alive`;
/** Every answer of the server's slots, `{slot, message}`. */
export const serverOutboxKey = (server: string): string => `tandem:env:server:${server}:out`;

/** How often each side refreshes its alive key, ms. */
export const HEARTBEAT_MS = 1000;
/** An alive key lapses this long after its last refresh: a side silent this long is gone. */
export const ALIVE_TTL_MS = 5000;

/** Typed arrays (states, actions, images) travel as themselves, not as plain bytes. */
const codec = new Packr({ moreTypes: true, useRecords: false });
export const packEnvMessage = (value: unknown): Buffer => codec.pack(value);
export const unpackEnvMessage = (bytes: Buffer): unknown => codec.unpack(bytes);
