/**
 * The tandem policy server: serves any tandem Policy over the openpi websocket protocol, so
 * openpi clients and tandem's own client (many sim workers at once) share one loaded model.
 * Behaves as openpi's `websocket_policy_server.py`: metadata first, strict request/response,
 * `GET /healthz` → 200, an error is a text frame then close 1011. Adds an API-key check (openpi
 * leaves that to a proxy), required off loopback, and refuses browser pages (any Origin not
 * allowed): a page on another site must not drive the model.
 */
import { timingSafeEqual } from 'node:crypto';
import { createServer, type IncomingMessage, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { Duplex } from 'node:stream';
import WebSocket, { WebSocketServer } from 'ws';
import type { EpisodeContext, Policy } from '../contract.js';
import { packOpenpi, WireFormatError, type WireValue } from './msgpack-numpy.js';
import { DEFAULT_MAX_IMAGE_SIDE, decodeObservation, encodeResult, maxRequestBytes } from './wire.js';
import { closeWebSocketService } from './ws-shutdown.js';

export interface PolicyServerOptions {
  readonly policy: Policy;
  readonly port: number;
  /** Default 127.0.0.1; use 0.0.0.0 to serve other machines. */
  readonly host?: string;
  readonly apiKey?: string;
  /** Extra wait before each answer, to rehearse a heavier model's latency on a small one. */
  readonly addedLatencyMs?: number;
  /** Merged into the metadata message (openpi servers send e.g. {reset_pose: [...]}). */
  readonly metadata?: Record<string, WireValue>;
  /** Reset once at start: openpi has no per-episode reset message. */
  readonly resetContext?: EpisodeContext;
  /**
   * Largest image side a request may carry (default DEFAULT_MAX_IMAGE_SIDE). Bounds every request
   * before it is read: the websocket refuses larger messages (close 1009) and image headers over it
   * are refused before any pixel is allocated.
   */
  readonly maxImageSide?: number;
  /** One line per notable event (connections, errors). */
  readonly log?: (line: string) => void;
  /** Browser origins that may connect; default none (openpi clients send no Origin). */
  readonly allowedOrigins?: readonly string[];
}

/** A host only this machine reaches: the one place the server runs without an API key. */
export function isLoopbackHost(host: string): boolean {
  return host === 'localhost' || host === '::1' || host === '[::1]' || /^127\.\d+\.\d+\.\d+$/.test(host);
}

/** Why `policy serve` will not start on `host` without an API key, or undefined when it may. */
export function openHostRefusal(host: string, apiKey: string | undefined): string | undefined {
  if (isLoopbackHost(host) || apiKey) return undefined;
  return `Serving on ${host} lets other machines drive the policy, so it needs --api-key KEY (or $TANDEM_POLICY_API_KEY); without one, serve on 127.0.0.1.`;
}

export interface RunningPolicyServer {
  readonly port: number;
  readonly url: string;
  /** Inferences answered since start. */
  readonly served: () => number;
  close(): Promise<void>;
}

const ERROR_CLOSE_REASON = 'Internal server error. Traceback included in previous frame.';

export function keyMatches(header: string | undefined, key: string): boolean {
  const want = Buffer.from(`Api-Key ${key}`);
  const got = Buffer.from(header ?? '');
  return got.length === want.length && timingSafeEqual(got, want);
}

export async function startPolicyServer(opts: PolicyServerOptions): Promise<RunningPolicyServer> {
  const { policy } = opts;
  const log = opts.log ?? (() => {});
  const refusal = openHostRefusal(opts.host ?? '127.0.0.1', opts.apiKey);
  if (refusal) throw new Error(refusal);
  const allowedOrigins = new Set(opts.allowedOrigins ?? []);
  if (opts.resetContext) await policy.reset(opts.resetContext);
  const info = policy.info;
  const metadata: Record<string, WireValue> = {
    policy_name: info.name,
    checkpoint_sha256: info.checkpointSha256,
    action_horizon: info.actionHorizon,
    cameras: [...info.cameras],
    server: 'tandem',
    ...opts.metadata,
  };
  const metadataBytes = packOpenpi(metadata);
  let served = 0;
  // One model, many connections: inferences run one at a time, in arrival order.
  let modelQueue: Promise<unknown> = Promise.resolve();

  const http: Server = createServer((req, res) => {
    if (req.method === 'GET' && (req.url === '/healthz' || req.url?.startsWith('/healthz?'))) {
      res.writeHead(200, { 'content-type': 'text/plain' }).end('OK\n');
      return;
    }
    res
      .writeHead(426, { 'content-type': 'text/plain' })
      .end('This is an openpi policy server: connect with a websocket, or GET /healthz.\n');
  });
  const maxImageSide = opts.maxImageSide ?? DEFAULT_MAX_IMAGE_SIDE;
  const maxPayload = maxRequestBytes(maxImageSide);
  const wss = new WebSocketServer({ noServer: true, perMessageDeflate: false, maxPayload });

  http.on('upgrade', (req: IncomingMessage, socket: Duplex, head: Buffer) => {
    socket.on('error', () => {});
    const origin = req.headers.origin;
    if (origin !== undefined && !allowedOrigins.has(origin)) {
      log(
        `refused a connection from ${req.socket.remoteAddress ?? '?'}: a page from ${origin} may not use this policy server`,
      );
      socket.end(
        `HTTP/1.1 403 Forbidden\r\nContent-Type: text/plain\r\nConnection: close\r\n\r\nThis policy server refuses pages from ${origin.slice(0, 200)}.\n`,
      );
      return;
    }
    if (opts.apiKey !== undefined && !keyMatches(req.headers.authorization, opts.apiKey)) {
      log(`refused a connection from ${req.socket.remoteAddress ?? '?'}: wrong or missing API key`);
      socket.end(
        'HTTP/1.1 401 Unauthorized\r\nContent-Type: text/plain\r\nConnection: close\r\n\r\nMissing or wrong Authorization: Api-Key header.\n',
      );
      return;
    }
    wss.handleUpgrade(req, socket, head, (ws) => wss.emit('connection', ws, req));
  });

  wss.on('connection', (ws: WebSocket, req: IncomingMessage) => {
    const peer = `${req.socket.remoteAddress ?? '?'}:${req.socket.remotePort ?? '?'}`;
    log(`connection from ${peer}`);
    ws.send(metadataBytes, { binary: true });
    let prevTotalMs: number | undefined;
    let chain: Promise<void> = Promise.resolve();
    let failed = false;
    const fail = (message: string): void => {
      if (failed) return;
      failed = true;
      log(`error for ${peer}: ${message}`);
      if (ws.readyState === WebSocket.OPEN) {
        ws.send(message);
        ws.close(1011, ERROR_CLOSE_REASON);
      }
      // Read again (a waiting request paused the socket): the client's answering close frame must
      // reach us, or both ends wait out ws's 30 s close timeout before the connection ends.
      ws.resume();
    };
    // Fair share under load: a connection is read no further while a request of its own waits, so
    // a client that floods large frames holds one request in memory, not all it sent, and takes
    // its turn at the model like every other connection.
    let waiting = 0;
    ws.on('message', (data: WebSocket.RawData, isBinary: boolean) => {
      const receivedAt = performance.now();
      const bytes = Array.isArray(data)
        ? Buffer.concat(data)
        : data instanceof ArrayBuffer
          ? new Uint8Array(data)
          : data;
      waiting += 1;
      if (waiting === 1) ws.pause();
      // Strict request/response per connection: handle messages in order.
      chain = chain.then(async () => {
        if (failed) return;
        try {
          if (!isBinary) throw new Error('expected a binary msgpack observation, got a text frame');
          const obs = decodeObservation(bytes, { maxImageSide });
          const inferStart = performance.now();
          const job = modelQueue.then(async () => {
            const chunk = await policy.infer(obs);
            if (opts.addedLatencyMs) await new Promise((r) => setTimeout(r, opts.addedLatencyMs));
            return chunk;
          });
          modelQueue = job.catch(() => {});
          const chunk = await job;
          const serverInferMs = performance.now() - inferStart;
          const out = encodeResult(chunk, {
            policyInferMs: (chunk.timing?.modelMs ?? serverInferMs) + (opts.addedLatencyMs ?? 0),
            serverInferMs,
            prevTotalMs,
          });
          if (ws.readyState !== WebSocket.OPEN) return;
          ws.send(out, { binary: true });
          served += 1;
          prevTotalMs = performance.now() - receivedAt;
        } catch (e) {
          fail(
            `tandem policy server: ${e instanceof WireFormatError ? `the observation could not be read: ${e.message}.` : (e as Error).message}`,
          );
        } finally {
          waiting -= 1;
          if (waiting === 0 && ws.readyState === WebSocket.OPEN) ws.resume();
        }
      });
    });
    ws.on('close', () => log(`connection from ${peer} closed`));
    ws.on('error', (e) => {
      // ws closes with 1009 itself when a message exceeds maxPayload, before buffering it.
      if ((e as NodeJS.ErrnoException).code === 'WS_ERR_UNSUPPORTED_MESSAGE_LENGTH')
        log(
          `refused a message from ${peer} larger than ${maxPayload} bytes (the most an observation with ${maxImageSide}-pixel images needs)`,
        );
      else log(`connection from ${peer} failed: ${e.message}`);
    });
  });

  await new Promise<void>((resolve, reject) => {
    http.once('error', reject);
    http.listen(opts.port, opts.host ?? '127.0.0.1', () => {
      http.off('error', reject);
      resolve();
    });
  });
  const port = (http.address() as AddressInfo).port;
  const host = opts.host ?? '127.0.0.1';
  return {
    port,
    url: `ws://${host.includes(':') ? `[${host}]` : host}:${port}`,
    served: () => served,
    async close() {
      await closeWebSocketService(http, wss, 'policy server shutting down');
    },
  };
}
