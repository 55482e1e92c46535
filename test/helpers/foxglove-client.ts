/**
 * A Foxglove WebSocket protocol v1 viewer for tests, as Foxglove connects: a real `ws` client
 * offering the subprotocol, collecting the server's JSON ops and decoding its Message Data frames
 * with @foxglove/rosmsg2-serialization from the schema text the server advertised (never from
 * the station's own writers, so a schema that does not stand on its own fails here).
 */
import WebSocket from 'ws';
import { parse } from '@foxglove/rosmsg';
import { MessageReader } from '@foxglove/rosmsg2-serialization';

/** Resolves once `cond()` holds; rejects naming what never came. */
async function waitFor(cond: () => boolean, timeoutMs: number, what: string): Promise<void> {
  const start = Date.now();
  while (!cond()) {
    if (Date.now() - start > timeoutMs) throw new Error(`no ${what} within ${timeoutMs} ms`);
    await new Promise((r) => setTimeout(r, 5));
  }
}

export interface AdvertisedChannel {
  id: number;
  topic: string;
  encoding: string;
  schemaName: string;
  schema: string;
  schemaEncoding?: string;
}

export interface LiveMessage {
  subscriptionId: number;
  receiveNs: bigint;
  message: unknown;
}

export class FoxgloveTestClient {
  readonly json: { op: string; [k: string]: unknown }[] = [];
  readonly messages: LiveMessage[] = [];
  private readonly readers = new Map<number, MessageReader>();
  /** subscription id → channel id */
  private readonly subs = new Map<number, number>();

  private constructor(readonly ws: WebSocket) {
    ws.on('message', (data: Buffer, isBinary: boolean) => {
      if (!isBinary) {
        this.json.push(JSON.parse(data.toString('utf8')) as { op: string });
        return;
      }
      if (data.readUInt8(0) !== 1) throw new Error(`unexpected binary opcode ${data.readUInt8(0)}`);
      const subscriptionId = data.readUInt32LE(1);
      const channelId = this.subs.get(subscriptionId);
      const reader = channelId === undefined ? undefined : this.readers.get(channelId);
      this.messages.push({
        subscriptionId,
        receiveNs: data.readBigUInt64LE(5),
        message: reader ? reader.readMessage(data.subarray(13)) : undefined,
      });
    });
  }

  static async connect(
    url: string,
    protocols: string[] = ['foxglove.sdk.v1', 'foxglove.websocket.v1'],
  ): Promise<FoxgloveTestClient> {
    const ws = new WebSocket(url, protocols);
    const client = new FoxgloveTestClient(ws);
    await new Promise<void>((resolve, reject) => {
      ws.once('open', () => resolve());
      ws.once('error', reject);
    });
    return client;
  }

  /** The advertised channels (waits for the advertise op), with a reader built from each schema. */
  async channels(): Promise<AdvertisedChannel[]> {
    await waitFor(() => this.json.some((m) => m.op === 'advertise'), 5000, 'an advertise op');
    const channels = this.json.filter((m) => m.op === 'advertise').flatMap((m) => m.channels as AdvertisedChannel[]);
    for (const c of channels) this.readers.set(c.id, new MessageReader(parse(c.schema, { ros2: true })));
    return channels;
  }

  subscribe(subscriptionId: number, channelId: number): void {
    this.subs.set(subscriptionId, channelId);
    this.ws.send(JSON.stringify({ op: 'subscribe', subscriptions: [{ id: subscriptionId, channelId }] }));
  }

  unsubscribe(subscriptionId: number): void {
    this.ws.send(JSON.stringify({ op: 'unsubscribe', subscriptionIds: [subscriptionId] }));
  }

  of(subscriptionId: number): LiveMessage[] {
    return this.messages.filter((m) => m.subscriptionId === subscriptionId);
  }

  async next(subscriptionId: number, timeoutMs = 5000): Promise<LiveMessage> {
    const before = this.of(subscriptionId).length;
    await waitFor(
      () => this.of(subscriptionId).length > before,
      timeoutMs,
      `a message on subscription ${subscriptionId}`,
    );
    return this.of(subscriptionId).at(-1)!;
  }

  close(): void {
    this.ws.close();
  }
}
