/**
 * The station's live view for Foxglove (and Lichtblick): a read-only server of the Foxglove
 * WebSocket protocol v1 on its own port, fed by the rig host's latest reading. Written on `ws`
 * because the protocol's Node server package (@foxglove/ws-protocol) is deprecated; it is small,
 * and only the part a viewer needs is here.
 *
 * The messages, as this server speaks them (spec: github.com/foxglove/ws-protocol docs/spec.md):
 *
 *   handshake  the client must offer subprotocol `foxglove.sdk.v1` (Foxglove's current name; its
 *              bridge ≥ 3.2 and app use it) or `foxglove.websocket.v1` (the same protocol's older
 *              name: Lichtblick, older Foxglove Studio). A client offering neither is answered
 *              400 and never upgraded. Any path is accepted (viewers connect to `/`).
 *   server → client, JSON text
 *     {"op":"serverInfo","name","capabilities":[],"metadata":{rigType},"sessionId"}  first, on connect
 *     {"op":"advertise","channels":[{"id","topic","encoding":"cdr","schemaName","schema","schemaEncoding":"ros2msg"}]}
 *     {"op":"status","level":0|1|2,"message"}   a refused or unsupported request, in one sentence
 *   client → server, JSON text
 *     {"op":"subscribe","subscriptions":[{"id","channelId"}]}   id: the client's uint32, unique per live subscription
 *     {"op":"unsubscribe","subscriptionIds":[id,…]}
 *     anything else (clientInfo, parameters, services, publishing, binary frames) gets a status
 *     saying it is not offered: this server publishes, it never takes data or commands.
 *   server → client, binary: Message Data
 *     u8 opcode 0x01 · u32 LE subscription id · u64 LE receive time (unix ns) · CDR payload
 *
 * Channels and their encoders are live-messages.ts. Messages go out at `rateHz` (default 30),
 * encoded once per channel per tick and only for channels someone subscribed to.
 *
 * Limits, since any page in a browser on this machine could otherwise read the arms: an upgrade
 * must carry no Origin (the desktop apps, scripts) or one of `allowedOrigins` (default the Foxglove
 * and Lichtblick apps and file://); a client whose unsent bytes pass `sendBudgetBytes` is
 * disconnected (send-budget.ts); each request gets at most one status reply, however many ids it
 * names.
 *
 * Binds 127.0.0.1 by default; a non-loopback address is refused unless `allowRemote` is set
 * (the joint stream then reaches anyone on that network: there is no token on this port).
 */
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { Duplex } from 'node:stream';
import { WebSocketServer, type RawData, type WebSocket } from 'ws';
import { rosTime } from '../record/ros2-messages.js';
import { LIVE_CHANNELS, type LiveChannel, type LiveRigReading } from './live-messages.js';
import { DEFAULT_SEND_BUDGET_BYTES, sendWithinBudget } from './send-budget.js';

/** The subprotocols accepted, preferred first. */
export const FOXGLOVE_SUBPROTOCOLS = ['foxglove.sdk.v1', 'foxglove.websocket.v1'] as const;
export const DEFAULT_FOXGLOVE_PORT = 8765;
export const DEFAULT_LIVE_RATE_HZ = 30;

const MESSAGE_DATA = 0x01;
const STATUS_INFO = 0;
const STATUS_WARNING = 1;
const STATUS_ERROR = 2;
const UINT32_MAX = 0xffffffff;
/** How many of a request's bad entries a status names; the rest are counted. */
const NAMED_IN_STATUS = 5;

/**
 * The browser origins the live view answers by default: the Foxglove and Lichtblick web apps and
 * desktop pages (file://). Requests with no Origin (desktop apps' own sockets, scripts) are let in.
 */
export const DEFAULT_FOXGLOVE_ORIGINS: readonly string[] = [
  'file://',
  'https://app.foxglove.dev',
  'https://studio.foxglove.dev',
  'https://lichtblick-suite.github.io',
];

/** Where the live view gets the rig's state; undefined while there is no rig (being re-created for a rollout). */
export interface LiveRigSource {
  live(): LiveRigReading | undefined;
}

export interface FoxgloveLiveOptions {
  readonly source: LiveRigSource;
  /** 0 takes any free port. */
  readonly port: number;
  /** Default 127.0.0.1. */
  readonly host?: string;
  /** Required to bind anything but a loopback address. */
  readonly allowRemote?: boolean;
  readonly rateHz?: number;
  /** The name viewers show for the connection, e.g. "tandem station (yam-cell)". */
  readonly name?: string;
  readonly metadata?: Readonly<Record<string, string>>;
  /** Browser origins let in (a request without Origin always is); default DEFAULT_FOXGLOVE_ORIGINS. */
  readonly allowedOrigins?: readonly string[];
  /** A client's unsent bytes past this and it is disconnected; default 1 MiB. */
  readonly sendBudgetBytes?: number;
}

/** The live view cannot be served as asked; the message says what to change. */
export class FoxgloveLiveError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'FoxgloveLiveError';
  }
}

const LOOPBACK_HOSTS = new Set(['127.0.0.1', '::1', 'localhost']);

export function isLoopbackHost(host: string): boolean {
  return LOOPBACK_HOSTS.has(host) || /^127\.\d{1,3}\.\d{1,3}\.\d{1,3}$/.test(host);
}

/** The subprotocol to answer with, or undefined when the client offers none of ours. */
export function pickSubprotocol(offered: ReadonlySet<string>): string | undefined {
  return FOXGLOVE_SUBPROTOCOLS.find((p) => offered.has(p));
}

/** The binary Message Data frame: opcode, subscription id, receive time, payload. */
export function messageDataFrame(subscriptionId: number, receiveNs: bigint, payload: Uint8Array): Buffer {
  const frame = Buffer.allocUnsafe(13 + payload.byteLength);
  frame.writeUInt8(MESSAGE_DATA, 0);
  frame.writeUInt32LE(subscriptionId, 1);
  frame.writeBigUInt64LE(receiveNs, 5);
  frame.set(payload, 13);
  return frame;
}

interface Client {
  readonly ws: WebSocket;
  /** subscription id → channel id */
  readonly subscriptions: Map<number, number>;
}

/** The first few items, and how many more: a status stays one short sentence whatever it reports. */
function summary(items: readonly string[]): string {
  const named = items.slice(0, NAMED_IN_STATUS).join(', ');
  return items.length > NAMED_IN_STATUS ? `${named} and ${items.length - NAMED_IN_STATUS} more` : named;
}

const isUint32 = (x: unknown): x is number => typeof x === 'number' && Number.isInteger(x) && x >= 0 && x <= UINT32_MAX;

/** Unix time now, nanoseconds (sub-millisecond through the monotonic clock's origin). */
function unixNowNs(): bigint {
  return BigInt(Math.round((performance.timeOrigin + performance.now()) * 1e6));
}

export class FoxgloveLiveServer {
  private readonly http: Server;
  private readonly wss: WebSocketServer;
  private readonly clients = new Set<Client>();
  private readonly host: string;
  private readonly sessionId = String(Date.now());
  private timer: NodeJS.Timeout | undefined;
  private port = 0;
  private readonly origins: ReadonlySet<string>;
  private readonly budget: number;
  private slowDropped = 0;
  /** The last failure to read or encode, said once to the clients rather than every tick. */
  private lastProblem: string | undefined;

  constructor(private readonly o: FoxgloveLiveOptions) {
    this.host = o.host ?? '127.0.0.1';
    this.origins = new Set(o.allowedOrigins ?? DEFAULT_FOXGLOVE_ORIGINS);
    this.budget = o.sendBudgetBytes ?? DEFAULT_SEND_BUDGET_BYTES;
    if (!isLoopbackHost(this.host) && !o.allowRemote) {
      throw new FoxgloveLiveError(
        `The Foxglove live view binds loopback only; ${this.host} is not loopback. Use 127.0.0.1, or allow it explicitly (--foxglove-allow-remote) knowing anyone on that network can then read the arm state.`,
      );
    }
    const rateHz = o.rateHz ?? DEFAULT_LIVE_RATE_HZ;
    if (!(rateHz > 0 && rateHz <= 250))
      throw new FoxgloveLiveError(`The Foxglove live view's rate must be from 0 to 250 Hz, not ${rateHz}.`);
    this.http = createServer((req, res) => this.plainRequest(req, res));
    // Viewers send only small JSON requests; anything big is not one of ours.
    this.wss = new WebSocketServer({
      noServer: true,
      maxPayload: 64 * 1024,
      handleProtocols: (offered) => pickSubprotocol(offered) ?? false,
    });
    this.http.on('upgrade', (req: IncomingMessage, socket: Duplex, head: Buffer) => this.upgrade(req, socket, head));
    this.wss.on('connection', (ws: WebSocket) => this.connected(ws));
  }

  /** Listens; returns the address to give the viewer (ws://host:port). */
  async listen(): Promise<string> {
    await new Promise<void>((resolve, reject) => {
      this.http.once('error', reject);
      this.http.listen(this.o.port, this.host, () => {
        this.http.off('error', reject);
        resolve();
      });
    });
    this.port = (this.http.address() as AddressInfo).port;
    this.timer = setInterval(() => this.publish(), 1000 / (this.o.rateHz ?? DEFAULT_LIVE_RATE_HZ));
    return this.url;
  }

  get url(): string {
    const host = this.host.includes(':') ? `[${this.host}]` : this.host;
    return `ws://${host}:${this.port}`;
  }

  /** Clients connected now, and how many were disconnected for not reading. */
  get clientCounts(): { connected: number; droppedSlow: number } {
    return { connected: this.clients.size, droppedSlow: this.slowDropped };
  }

  async close(): Promise<void> {
    clearInterval(this.timer);
    for (const c of this.clients) c.ws.close(1001, 'station shutting down');
    this.wss.close();
    this.http.closeAllConnections();
    await new Promise<void>((resolve) => this.http.close(() => resolve()));
  }

  /** A browser or curl on the port: say what it is and how to use it. */
  private plainRequest(_req: IncomingMessage, res: ServerResponse): void {
    const text = `This is the tandem station's Foxglove live view. In Foxglove: Open connection → Foxglove WebSocket → ${this.url}\n`;
    res.writeHead(426, {
      'Content-Type': 'text/plain; charset=utf-8',
      'Content-Length': Buffer.byteLength(text),
      Upgrade: 'websocket',
      Connection: 'close',
    });
    res.end(text);
  }

  private upgrade(req: IncomingMessage, socket: Duplex, head: Buffer): void {
    socket.on('error', () => {});
    const offered = new Set(
      String(req.headers['sec-websocket-protocol'] ?? '')
        .split(',')
        .map((p) => p.trim())
        .filter((p) => p !== ''),
    );
    const origin = req.headers.origin;
    if (origin !== undefined && !this.origins.has(origin)) {
      const body = `The Foxglove live view refuses pages from ${origin.slice(0, 200)}; open it from the Foxglove or Lichtblick app, or add that origin to the allowed ones.\n`;
      socket.end(
        `HTTP/1.1 403 Forbidden\r\nContent-Type: text/plain; charset=utf-8\r\nContent-Length: ${Buffer.byteLength(body)}\r\nConnection: close\r\n\r\n${body}`,
      );
      return;
    }
    if (!pickSubprotocol(offered)) {
      const body = `This is a Foxglove WebSocket live view: connect with subprotocol ${FOXGLOVE_SUBPROTOCOLS.join(' or ')} (Foxglove: Open connection → Foxglove WebSocket).\n`;
      socket.end(
        `HTTP/1.1 400 Bad Request\r\nContent-Type: text/plain; charset=utf-8\r\nContent-Length: ${Buffer.byteLength(body)}\r\nConnection: close\r\n\r\n${body}`,
      );
      return;
    }
    this.wss.handleUpgrade(req, socket, head, (ws) => this.wss.emit('connection', ws, req));
  }

  private connected(ws: WebSocket): void {
    const client: Client = { ws, subscriptions: new Map() };
    this.clients.add(client);
    ws.on('error', () => {});
    ws.on('close', () => this.clients.delete(client));
    ws.on('message', (data: RawData, isBinary: boolean) => this.received(client, data, isBinary));
    this.sendJson(ws, {
      op: 'serverInfo',
      name: this.o.name ?? 'tandem station',
      capabilities: [],
      metadata: { ...this.o.metadata },
      sessionId: this.sessionId,
    });
    this.sendJson(ws, {
      op: 'advertise',
      channels: LIVE_CHANNELS.map((c, i) => ({
        id: i + 1,
        topic: c.topic,
        encoding: 'cdr',
        schemaName: c.schemaName,
        schema: c.schema,
        schemaEncoding: 'ros2msg',
      })),
    });
  }

  private status(ws: WebSocket, level: number, message: string): void {
    this.sendJson(ws, { op: 'status', level, message });
  }

  private sendJson(ws: WebSocket, body: unknown): void {
    this.send(ws, JSON.stringify(body));
  }

  private send(ws: WebSocket, data: string | Buffer): boolean {
    return sendWithinBudget(ws, data, this.budget, () => (this.slowDropped += 1));
  }

  private received(client: Client, data: RawData, isBinary: boolean): void {
    const ws = client.ws;
    if (isBinary) {
      this.status(
        ws,
        STATUS_ERROR,
        'This live view only publishes: it takes no client messages, service calls or other binary requests.',
      );
      return;
    }
    let m: unknown;
    try {
      m = JSON.parse(String(data));
    } catch {
      this.status(
        ws,
        STATUS_ERROR,
        'That request is not JSON; send {"op": "subscribe", …} or {"op": "unsubscribe", …}.',
      );
      return;
    }
    const op = typeof m === 'object' && m !== null ? (m as { op?: unknown }).op : undefined;
    if (op === 'subscribe') this.subscribe(client, (m as { subscriptions?: unknown }).subscriptions);
    else if (op === 'unsubscribe') this.unsubscribe(client, (m as { subscriptionIds?: unknown }).subscriptionIds);
    else if (op === 'clientInfo')
      return; // a newer client naming itself: nothing to do
    else
      this.status(
        ws,
        STATUS_WARNING,
        `This live view does not offer '${String(op).slice(0, 64)}': it publishes the rig's channels and takes only subscribe and unsubscribe.`,
      );
  }

  private subscribe(client: Client, list: unknown): void {
    if (!Array.isArray(list)) {
      this.status(client.ws, STATUS_ERROR, 'A subscribe needs "subscriptions": [{"id", "channelId"}, …].');
      return;
    }
    // One status for the whole request, naming the first few problems: a request of thousands of
    // bad entries must not become thousands of replies.
    const problems: string[] = [];
    let level = STATUS_INFO;
    const problem = (l: number, words: string): void => {
      level = Math.max(level, l);
      problems.push(words);
    };
    for (const s of list as unknown[]) {
      const { id, channelId } = (typeof s === 'object' && s !== null ? s : {}) as { id?: unknown; channelId?: unknown };
      if (!isUint32(id) || !isUint32(channelId)) {
        problem(
          STATUS_ERROR,
          `${JSON.stringify(s)?.slice(0, 64) ?? String(s)} is not {"id": uint32, "channelId": uint32}`,
        );
        continue;
      }
      if (channelId < 1 || channelId > LIVE_CHANNELS.length) {
        problem(
          STATUS_WARNING,
          `there is no channel ${channelId} (the advertised ones are 1 to ${LIVE_CHANNELS.length})`,
        );
        continue;
      }
      if (client.subscriptions.has(id)) {
        problem(STATUS_ERROR, `subscription id ${id} is already in use (unsubscribe it first)`);
        continue;
      }
      if ([...client.subscriptions.values()].includes(channelId)) {
        problem(
          STATUS_WARNING,
          `channel ${channelId} (${LIVE_CHANNELS[channelId - 1].topic}) is already subscribed on this connection (one subscription per channel)`,
        );
        continue;
      }
      client.subscriptions.set(id, channelId);
    }
    if (problems.length > 0)
      this.status(
        client.ws,
        level,
        `Ignored ${problems.length} of ${list.length} subscription${list.length === 1 ? '' : 's'}: ${summary(problems)}.`,
      );
  }

  private unsubscribe(client: Client, ids: unknown): void {
    if (!Array.isArray(ids)) {
      this.status(client.ws, STATUS_ERROR, 'An unsubscribe needs "subscriptionIds": [id, …].');
      return;
    }
    const unknown: string[] = [];
    for (const id of ids as unknown[]) {
      if (!isUint32(id) || !client.subscriptions.delete(id))
        unknown.push(JSON.stringify(id)?.slice(0, 32) ?? String(id));
    }
    if (unknown.length > 0)
      this.status(client.ws, STATUS_INFO, `There was no subscription ${summary(unknown)} to end.`);
  }

  /** A failure here must not stop the station (this runs on a timer): it is told to the viewers instead. */
  private publish(): void {
    try {
      this.tick();
      this.lastProblem = undefined;
    } catch (e) {
      const problem = `The live view could not publish the rig's state: ${(e as Error).message ?? String(e)}`;
      if (problem === this.lastProblem) return;
      this.lastProblem = problem;
      for (const c of this.clients) this.status(c.ws, STATUS_ERROR, problem);
    }
  }

  /** One publishing step: read the rig once, encode each subscribed channel once, send. */
  private tick(): void {
    const wanted = new Set<number>();
    for (const c of this.clients) for (const ch of c.subscriptions.values()) wanted.add(ch);
    if (wanted.size === 0) return;
    const reading = this.o.source.live();
    if (!reading) return;
    const receiveNs = unixNowNs();
    const stamp = rosTime(receiveNs - BigInt(Math.max(0, Math.round(reading.ageS * 1e9))));
    const payloads = new Map<number, Uint8Array>();
    for (const id of wanted) payloads.set(id, (LIVE_CHANNELS[id - 1] as LiveChannel).encode(reading, stamp));
    for (const c of this.clients) {
      for (const [subscriptionId, channelId] of c.subscriptions) {
        if (!this.send(c.ws, messageDataFrame(subscriptionId, receiveNs, payloads.get(channelId)!))) break;
      }
    }
  }
}
