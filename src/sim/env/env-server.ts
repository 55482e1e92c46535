/**
 * `tandem sim serve-env`: the sim served as N parallel RL environments over a WebSocket, msgpack
 * messages with arrays in openpi's msgpack_numpy encoding (docs/env-server.md). Each connection
 * gets its own N environments on the shared worker threads; requests are strictly one at a time
 * per connection. A bad request is one error message on its socket and the connection stays
 * usable; a client that goes quiet too long, or stops reading its answers, gets one error message
 * and is closed, its environments freed. No client can stop the server or touch another's envs,
 * and no browser page can connect (any Origin is refused).
 */
import { createServer, type IncomingMessage, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import WebSocket, { WebSocketServer } from 'ws';
import {
  NdArray,
  packOpenpi,
  unpackOpenpi,
  WireFormatError,
  type WireValue,
} from '../../policy/openpi/msgpack-numpy.js';
import { closeWebSocketService } from '../../policy/openpi/ws-shutdown.js';
import { keyMatches } from '../../policy/openpi/server.js';
import { STATE_DIM } from '../../rig/contract.js';
import type { TaskDefinition } from '../../tasks/types.js';
import type { CameraName } from '../../policy/contract.js';
import type { EnvImages } from './env-worker-protocol.js';
import { yamRigModel } from '../../rig/yam.js';
import { EnvPool, EnvRequestError, type PoolStep } from './env-pool.js';
import { EnvProtocolError, parseEnvRequest, type ResetRequest } from './env-requests.js';
import type { EnvEpisodeInfo } from './sim-env.js';
import type { QueueAddress } from '../queue/connection.js';

export const ENV_PROTOCOL = 'tandem.env/1';

export interface EnvServerOptions {
  readonly task: TaskDefinition;
  readonly envs: number;
  readonly port: number;
  /** Default 127.0.0.1. */
  readonly host?: string;
  /** When set, a connection must send 'Authorization: Api-Key KEY' (required off loopback by `sim serve-env`). */
  readonly apiKey?: string;
  /** Worker threads (default min(envs, 2)). */
  readonly workers?: number;
  readonly controlHz: number;
  /** Canonical JSON of a randomization spec (--randomize). */
  readonly randomizationJson?: string;
  readonly randomizationSha256?: string;
  /** Cameras drawn into every observation (obs.images), in the sim's chromium renderer; none: state only. */
  readonly cameras?: readonly CameraName[];
  /** A connection with no request for this long is closed (default 300 s). */
  readonly idleSeconds?: number;
  /** A connection with more unread answer bytes than this is closed (default 64 MiB). */
  readonly maxUnreadBytes?: number;
  /** Run the workers on `tandem sim env-worker` hosts reached through this Redis instead of on threads here. */
  readonly queue?: QueueAddress;
  /** Stops waiting for remote workers (--queue). */
  readonly signal?: AbortSignal;
  readonly log?: (line: string) => void;
}

export interface RunningEnvServer {
  readonly port: number;
  readonly url: string;
  readonly workers: number;
  close(): Promise<void>;
}

/** A request message is at most this big: [N, 14] float64 actions plus a layout of a few hundred objects. */
const maxRequestBytes = (envs: number): number => 1 * 2 ** 20 + envs * STATE_DIM * 8;

export async function startEnvServer(opts: EnvServerOptions): Promise<RunningEnvServer> {
  const log = opts.log ?? (() => {});
  const workers = opts.workers ?? Math.min(opts.envs, 2);
  const cameras = opts.cameras ?? [];
  const pool = await EnvPool.start({
    taskId: opts.task.id,
    controlHz: opts.controlHz,
    workers,
    cameras,
    ...(opts.randomizationJson ? { randomizationJson: opts.randomizationJson } : {}),
    ...(opts.queue ? { queue: opts.queue } : {}),
    ...(opts.signal ? { signal: opts.signal } : {}),
    log,
  });
  const idleMs = (opts.idleSeconds ?? 300) * 1000;
  const maxUnread = opts.maxUnreadBytes ?? 64 * 2 ** 20;
  const hello = packOpenpi({
    type: 'hello',
    protocol: ENV_PROTOCOL,
    task: opts.task.id,
    envs: opts.envs,
    state_dim: STATE_DIM,
    action_dim: STATE_DIM,
    control_hz: opts.controlHz,
    tiers: opts.task.tiers.map((t) => t.tier),
    episode_seconds: opts.task.episodeSeconds,
    randomization_sha256: opts.randomizationSha256 ?? null,
    cameras: [...cameras],
    // Per action entry (policy order: 6 joints then the gripper, 0 closed to 1 open, per arm).
    action_low: yamRigModel().arms.flatMap((a) => [...a.joints.map((j) => j.minRad), 0]),
    action_high: yamRigModel().arms.flatMap((a) => [...a.joints.map((j) => j.maxRad), 1]),
  });
  const http: Server = createServer((req, res) => {
    if (req.method === 'GET' && req.url === '/healthz') {
      res.writeHead(200, { 'content-type': 'text/plain' }).end('OK\n');
      return;
    }
    res
      .writeHead(426, { 'content-type': 'text/plain' })
      .end('This is a tandem env server: connect with a websocket (docs/env-server.md), or GET /healthz.\n');
  });
  const wss = new WebSocketServer({
    server: http,
    perMessageDeflate: false,
    maxPayload: maxRequestBytes(opts.envs),
    // Trainers are programs and send no Origin; a browser page always does, and may not drive the sims.
    verifyClient: (
      info: { origin?: string; req: IncomingMessage },
      done: (ok: boolean, code?: number, message?: string) => void,
    ) => {
      if (info.origin !== undefined) {
        log(
          `refused a connection from ${info.req.socket.remoteAddress ?? '?'}: a page from ${info.origin.slice(0, 200)} may not use this env server`,
        );
        return done(false, 403, 'This env server refuses browser pages.');
      }
      if (opts.apiKey !== undefined && !keyMatches(info.req.headers.authorization, opts.apiKey)) {
        log(`refused a connection from ${info.req.socket.remoteAddress ?? '?'}: no valid API key`);
        return done(false, 401, 'This env server needs its API key: send Authorization: Api-Key KEY.');
      }
      done(true);
    },
  });
  let nextConnection = 1;

  wss.on('connection', (ws: WebSocket, req: IncomingMessage) => {
    const owner = `c${nextConnection++}`;
    const peer = `${req.socket.remoteAddress ?? '?'}:${req.socket.remotePort ?? '?'}`;
    log(`connection ${owner} from ${peer}`);
    let busy = false;
    let hasEnvs = false;
    let closed = false;
    let idle: NodeJS.Timeout | undefined;
    const send = (value: Record<string, unknown>): void => {
      if (closed || ws.readyState !== WebSocket.OPEN) return;
      if (ws.bufferedAmount > maxUnread) {
        drop(
          `it left ${bytesInWords(ws.bufferedAmount)} of answers unread (at most ${bytesInWords(maxUnread)}); read each answer before sending the next request`,
        );
        return;
      }
      ws.send(packOpenpi(value), { binary: true });
    };
    const error = (message: string): void => {
      log(`${owner}: ${message}`);
      send({ type: 'error', message });
    };
    /** One error message, then close: the connection cannot go on. */
    const drop = (why: string): void => {
      if (closed) return;
      const message = `The env server closed this connection: ${why}.`;
      log(`${owner}: ${message}${hasEnvs ? `; its ${opts.envs} environments were freed` : ''}`);
      if (ws.readyState === WebSocket.OPEN) ws.send(packOpenpi({ type: 'error', message }), { binary: true });
      closed = true;
      ws.close(1008, 'closed by the env server');
      release();
    };
    const release = (): void => {
      clearTimeout(idle);
      if (hasEnvs) pool.free(owner, opts.envs);
      hasEnvs = false;
    };
    const armIdle = (): void => {
      clearTimeout(idle);
      // A long step is not the client's silence: the limit counts from the last answer.
      idle = setTimeout(() => (busy ? armIdle() : drop(`no request for ${idleMs / 1000} s`)), idleMs);
      idle.unref();
    };
    armIdle();
    ws.send(hello, { binary: true });

    ws.on('message', (data: WebSocket.RawData, isBinary: boolean) => {
      if (closed) return;
      armIdle();
      if (busy) {
        error(
          'A request arrived before the answer to the previous one; send one request, wait for its answer, then send the next.',
        );
        return;
      }
      const bytes = Array.isArray(data)
        ? Buffer.concat(data)
        : data instanceof ArrayBuffer
          ? new Uint8Array(data)
          : data;
      let request;
      try {
        if (!isBinary) throw new EnvProtocolError('Expected a binary msgpack message, got a text frame.');
        request = parseEnvRequest(unpackOpenpi(bytes, { maxBytes: maxRequestBytes(opts.envs) }), opts.task, opts.envs);
      } catch (e) {
        if (e instanceof EnvProtocolError) return error(e.message);
        if (e instanceof WireFormatError) return error(`The request could not be read: ${e.message}.`);
        throw e;
      }
      if (request.type === 'step' && !hasEnvs) return error('step before reset: send a reset first.');
      busy = true;
      const work =
        request.type === 'reset'
          ? reset(request)
          : pool.step(owner, opts.envs, request.actions).then((s) => send(stepAnswer(s)));
      work
        .catch((e: unknown) => {
          if (e instanceof EnvRequestError) error(e.message);
          else {
            log(`${owner}: ${(e as Error).stack ?? String(e)}`);
            error(`The env server failed on this request: ${(e as Error).message}.`);
          }
        })
        .finally(() => {
          busy = false;
          if (!closed) armIdle();
        });
    });

    async function reset(r: ResetRequest): Promise<void> {
      hasEnvs = true;
      const { states, infos, images } = await pool.reset(owner, opts.envs, (i) => ({
        seed: r.seed + i,
        ...(r.tier !== undefined ? { tier: r.tier } : {}),
        ...(r.layout ? { layout: r.layout } : {}),
        ...(r.episodeSeconds !== undefined ? { episodeSeconds: r.episodeSeconds } : {}),
      }));
      send({ type: 'reset', obs: observation(states, images), info: { episode: infos.map(episodeInfo) } });
    }

    ws.on('close', () => {
      if (!closed && hasEnvs) log(`${owner} disconnected mid-episode; its ${opts.envs} environments were freed`);
      else log(`${owner} closed`);
      closed = true;
      release();
    });
    ws.on('error', (e) => log(`${owner} failed: ${e.message}`));
  });

  /** The policy contract's observation for N envs: state [N, 14] and, with cameras, each camera's images uint8 [N, H, W, 3]. */
  function observation(states: Float32Array, images: readonly (EnvImages | undefined)[]): Record<string, WireValue> {
    const obs: Record<string, WireValue> = { state: NdArray.float32(states, [opts.envs, STATE_DIM]) };
    if (cameras.length === 0) return obs;
    const byCamera: Record<string, WireValue> = {};
    for (const cam of cameras) {
      const first = images[0]?.[cam];
      if (!first) throw new Error(`camera ${cam} drew no image`);
      const size = first.width * first.height * 3;
      const all = new Uint8Array(opts.envs * size);
      images.forEach((i, k) => {
        const img = i?.[cam];
        if (!img || img.data.length !== size)
          throw new Error(`camera ${cam} of env ${k} drew no ${first.width}×${first.height} image`);
        all.set(img.data, k * size);
      });
      byCamera[cam] = new NdArray('|u1', [opts.envs, first.height, first.width, 3], all);
    }
    obs.images = byCamera;
    return obs;
  }

  function stepAnswer(s: PoolStep): Record<string, unknown> {
    const n = opts.envs;
    const reward = new Float32Array(n);
    const terminated = new Uint8Array(n);
    const truncated = new Uint8Array(n);
    const finalState = new Float32Array(n * STATE_DIM);
    const events: WireValue[] = [];
    const final: WireValue[] = [];
    const invalid: WireValue[] = [];
    s.results.forEach((r, i) => {
      reward[i] = r.reward;
      terminated[i] = r.terminated ? 1 : 0;
      truncated[i] = r.truncated ? 1 : 0;
      events.push(r.events as unknown as WireValue);
      invalid.push(r.invalid ?? null);
      if (r.ended) {
        finalState.set(r.ended.finalState, i * STATE_DIM);
        final.push({
          episode: episodeInfo(r.ended.episode),
          return: r.ended.return,
          length: r.ended.length,
          next: episodeInfo(r.next!),
        });
      } else final.push(null);
    });
    return {
      type: 'step',
      obs: observation(
        s.states,
        s.results.map((r) => r.images),
      ),
      reward: NdArray.float32(reward, [n]),
      terminated: new NdArray('|b1', [n], terminated),
      truncated: new NdArray('|b1', [n], truncated),
      info: { events, final, final_obs: { state: NdArray.float32(finalState, [n, STATE_DIM]) }, invalid },
    };
  }

  await new Promise<void>((resolve, reject) => {
    http.once('error', reject);
    http.listen(opts.port, opts.host ?? '127.0.0.1', () => {
      http.off('error', reject);
      resolve();
    });
  }).catch(async (e: unknown) => {
    await pool.close();
    throw e;
  });
  const port = (http.address() as AddressInfo).port;
  const host = opts.host ?? '127.0.0.1';
  return {
    port,
    url: `ws://${host.includes(':') ? `[${host}]` : host}:${port}`,
    workers,
    async close() {
      await closeWebSocketService(http, wss, 'env server shutting down');
      await pool.close();
    },
  };
}

/** A byte count in the unit that keeps it readable: 256 KiB, not 0 MiB. */
function bytesInWords(bytes: number): string {
  return bytes >= 2 ** 20 ? `${(bytes / 2 ** 20).toFixed(0)} MiB` : `${(bytes / 2 ** 10).toFixed(0)} KiB`;
}

function episodeInfo(e: EnvEpisodeInfo): WireValue {
  return { seed: e.seed, tier: e.tier, parts: e.parts, episode_steps: e.episode_steps };
}
