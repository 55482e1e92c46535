/**
 * A client for openpi-compatible policy servers (openpi's `serve_policy.py`, or `tandem policy serve`).
 * Protocol as openpi's `websocket_client_policy.py`: no compression, no size limit, optional
 * `Authorization: Api-Key <key>`; the server sends one metadata message first, then strict
 * request/response. A text frame from the server is an error report (followed by close 1011).
 *
 * Unlike openpi's client, connecting and every inference have deadlines, and a connection
 * lost between inferences is reopened on the next call (a lost request is never retried:
 * the rollout must decide, because the arm has moved on).
 */
import WebSocket from 'ws';
import {
  CAMERA_NAMES,
  PolicyUnavailableError,
  type ActionChunk,
  type CameraName,
  type EpisodeContext,
  type Observation,
  type Policy,
  type PolicyInfo,
} from '../contract.js';
import { validateObservation } from '../observation.js';
import { NdArray, NpGeneric, unpackOpenpi, WireFormatError, type WireValue } from './msgpack-numpy.js';
import { decodeResult, encodeObservation, MAX_METADATA_BYTES, MAX_RESPONSE_BYTES, OPENPI_IMAGE_SIZE } from './wire.js';

export interface OpenpiClientOptions {
  /** ws://host:port or wss://host:port (a path is kept). */
  readonly url: string;
  readonly apiKey?: string;
  /** Opening the socket and receiving the metadata, including retries while the server starts. Default 5000. */
  readonly connectTimeoutMs?: number;
  /** From sending an observation to receiving its actions. Default 10000. */
  readonly inferenceTimeoutMs?: number;
  /** Images are resized (with padding) to this square size before sending; undefined sends them as they are. Default 224. */
  readonly imageSize?: number | null;
}

type Pending = { resolve: (bytes: Uint8Array) => void; reject: (e: Error) => void };

const RETRY_DELAY_MS = 200;

const NO_ANSWER = 'no answer';

function describe(e: unknown): string {
  const err = e as NodeJS.ErrnoException;
  if (err?.code === 'ECONNREFUSED') return 'connection refused';
  if (err?.code === 'ENOTFOUND') return 'host not found';
  if (err?.code === 'WS_ERR_UNSUPPORTED_MESSAGE_LENGTH')
    return `it sent a message larger than the ${MAX_RESPONSE_BYTES} bytes any openpi answer needs`;
  return err?.message ?? String(e);
}

/** Text of a server error frame, shortened to its last line (a Python traceback ends with the exception). */
function lastLine(text: string): string {
  const lines = text
    .trim()
    .split('\n')
    .map((l) => l.trim())
    .filter(Boolean);
  return (lines[lines.length - 1] ?? '(empty message)').slice(0, 500);
}

export class OpenpiClientPolicy implements Policy {
  /** The server's metadata message (openpi: e.g. {reset_pose: [...]}; tandem adds policy name, checkpoint, horizon). */
  metadata: Record<string, WireValue> = {};
  /** The full text of the last error frame the server sent, for logs. */
  lastServerError: string | undefined;
  private ws: WebSocket | undefined;
  private pending: Pending | undefined;
  private horizonSeen = 0;
  private queue: Promise<unknown> = Promise.resolve();
  private readonly connectTimeoutMs: number;
  private readonly inferenceTimeoutMs: number;
  private readonly imageSize: number | undefined;

  private constructor(private readonly opts: OpenpiClientOptions) {
    this.connectTimeoutMs = opts.connectTimeoutMs ?? 5000;
    this.inferenceTimeoutMs = opts.inferenceTimeoutMs ?? 10_000;
    this.imageSize = opts.imageSize === null ? undefined : (opts.imageSize ?? OPENPI_IMAGE_SIZE);
  }

  /** Connects and reads the metadata; throws PolicyUnavailableError (timeout, disconnected, server-error, bad-response). */
  static async connect(opts: OpenpiClientOptions): Promise<OpenpiClientPolicy> {
    const client = new OpenpiClientPolicy(opts);
    await client.ensureConnected();
    return client;
  }

  get url(): string {
    return this.opts.url;
  }

  get info(): PolicyInfo {
    const m = this.metadata;
    const listed = Array.isArray(m.cameras)
      ? m.cameras.filter(
          (c): c is CameraName => typeof c === 'string' && (CAMERA_NAMES as readonly string[]).includes(c),
        )
      : [...CAMERA_NAMES];
    // The openpi wire always carries cam_high (inferNow requires it), even for a model that reads no image.
    const cams: CameraName[] = listed.includes('cam_high') ? listed : ['cam_high', ...listed];
    return {
      name: typeof m.policy_name === 'string' ? m.policy_name : `openpi ${this.opts.url}`,
      checkpointSha256: typeof m.checkpoint_sha256 === 'string' ? m.checkpoint_sha256 : 'unreported',
      actionHorizon: this.horizonSeen || (typeof m.action_horizon === 'number' ? m.action_horizon : 0),
      cameras: cams,
      needsPrivilegedState: false,
    };
  }

  async reset(_ctx: EpisodeContext): Promise<void> {
    // openpi has no reset message; a new episode only needs a live connection.
    await this.ensureConnected();
  }

  /** Strict request/response: concurrent calls (e.g. a relay serving several workers) wait their turn. */
  infer(obs: Observation): Promise<ActionChunk> {
    const run = this.queue.then(() => this.inferNow(obs));
    this.queue = run.catch(() => {});
    return run;
  }

  private async inferNow(obs: Observation): Promise<ActionChunk> {
    const t0 = performance.now();
    // openpi needs cam_high; missing wrist cameras are filled with black by the server.
    validateObservation(obs, ['cam_high']);
    const request = await encodeObservation(obs, this.imageSize);
    const t1 = performance.now();
    await this.ensureConnected();
    const t2 = performance.now();
    const response = await this.roundTrip(request);
    const t3 = performance.now();
    let decoded;
    try {
      decoded = decodeResult(response);
    } catch (e) {
      if (e instanceof WireFormatError) {
        this.drop();
        throw new PolicyUnavailableError(
          `Policy server ${this.opts.url} answered something that is not an openpi action message: ${e.message}.`,
          'bad-response',
        );
      }
      throw e;
    }
    const t4 = performance.now();
    this.horizonSeen = decoded.chunk.horizon;
    const roundTripMs = t3 - t2;
    const serverMs = decoded.serverInferMs;
    return {
      ...decoded.chunk,
      timing: {
        totalMs: t4 - t0,
        encodeMs: t1 - t0,
        networkMs: serverMs === undefined ? roundTripMs : Math.max(0, roundTripMs - serverMs),
        serverMs,
        modelMs: decoded.policyInferMs,
        decodeMs: t4 - t3,
      },
    };
  }

  async close(): Promise<void> {
    const ws = this.ws;
    this.ws = undefined;
    this.pending?.reject(
      new PolicyUnavailableError(`The connection to ${this.opts.url} was closed by tandem.`, 'disconnected'),
    );
    this.pending = undefined;
    if (!ws || ws.readyState === WebSocket.CLOSED) return;
    await new Promise<void>((resolve) => {
      const timer = setTimeout(() => {
        ws.terminate();
        resolve();
      }, 1000);
      ws.once('close', () => {
        clearTimeout(timer);
        resolve();
      });
      ws.close(1000);
    });
  }

  private drop(): void {
    const ws = this.ws;
    this.ws = undefined;
    ws?.terminate();
  }

  private roundTrip(request: Uint8Array): Promise<Uint8Array> {
    const ws = this.ws;
    if (!ws) throw new PolicyUnavailableError(`Not connected to ${this.opts.url}.`, 'disconnected');
    return new Promise<Uint8Array>((resolve, reject) => {
      const timer = setTimeout(() => {
        this.pending = undefined;
        // A late answer would pair with the next request: this connection is finished.
        this.drop();
        reject(
          new PolicyUnavailableError(
            `Policy server ${this.opts.url} did not answer within ${this.inferenceTimeoutMs} ms.`,
            'timeout',
          ),
        );
      }, this.inferenceTimeoutMs);
      this.pending = {
        resolve: (b) => {
          clearTimeout(timer);
          resolve(b);
        },
        reject: (e) => {
          clearTimeout(timer);
          reject(e);
        },
      };
      ws.send(request, { binary: true }, (err) => {
        if (err && this.pending) {
          const p = this.pending;
          this.pending = undefined;
          p.reject(
            new PolicyUnavailableError(
              `Could not send the observation to ${this.opts.url}: ${describe(err)}.`,
              'disconnected',
            ),
          );
        }
      });
    });
  }

  private async ensureConnected(): Promise<void> {
    if (this.ws && this.ws.readyState === WebSocket.OPEN) return;
    this.drop();
    const deadline = performance.now() + this.connectTimeoutMs;
    let lastError = NO_ANSWER;
    for (;;) {
      const left = deadline - performance.now();
      if (left <= 0) break;
      try {
        await this.openOnce(left);
        return;
      } catch (e) {
        // Refused connections are retried (the server may be starting, as openpi's client waits too);
        // anything the server said is final.
        if (e instanceof PolicyUnavailableError && e.reason !== 'disconnected') throw e;
        const reason = e instanceof PolicyUnavailableError ? e.message : describe(e);
        // The last attempt gets only what is left of the deadline, so under load it can time out before the
        // refusal arrives; a timeout then says less than the refusal heard before it, which is kept.
        if (!/handshake has timed out/.test(reason) || lastError === NO_ANSWER) lastError = reason;
      }
      await new Promise((r) => setTimeout(r, Math.min(RETRY_DELAY_MS, Math.max(0, deadline - performance.now()))));
    }
    throw new PolicyUnavailableError(
      `Could not connect to policy server ${this.opts.url} within ${this.connectTimeoutMs} ms (${lastError}). Is the server running and reachable?`,
      'disconnected',
    );
  }

  private openOnce(timeoutMs: number): Promise<void> {
    const url = this.opts.url;
    return new Promise<void>((resolve, reject) => {
      const headers: Record<string, string> = {};
      if (this.opts.apiKey) headers.Authorization = `Api-Key ${this.opts.apiKey}`;
      // maxPayload: ws refuses (close 1009) a larger message before buffering it.
      const ws = new WebSocket(url, {
        perMessageDeflate: false,
        maxPayload: MAX_RESPONSE_BYTES,
        headers,
        handshakeTimeout: Math.max(1, Math.round(timeoutMs)),
      });
      let settled = false;
      const finish = (err?: Error): void => {
        if (settled) return;
        settled = true;
        clearTimeout(timer);
        if (err) {
          ws.removeAllListeners();
          ws.on('error', () => {});
          ws.terminate();
          reject(err);
        } else resolve();
      };
      const timer = setTimeout(
        () =>
          finish(
            new PolicyUnavailableError(
              `Policy server ${url} accepted the connection but sent no metadata within ${Math.round(timeoutMs)} ms.`,
              'timeout',
            ),
          ),
        timeoutMs,
      );
      ws.on('unexpected-response', (_req, res) => {
        const code = res.statusCode ?? 0;
        finish(
          new PolicyUnavailableError(
            code === 401 || code === 403
              ? `Policy server ${url} refused the API key (HTTP ${code}); pass the key the server was started with (--api-key).`
              : `Policy server ${url} answered HTTP ${code} instead of opening a websocket; is this an openpi policy server?`,
            'server-error',
          ),
        );
      });
      ws.on('error', (e) => {
        if (!settled)
          finish(new PolicyUnavailableError(`Could not connect to ${url}: ${describe(e)}.`, 'disconnected'));
        else this.onSocketGone(ws, `Connection to policy server ${url} failed: ${describe(e)}.`);
      });
      ws.on('close', (code, reason) => {
        if (!settled)
          finish(
            new PolicyUnavailableError(
              `Policy server ${url} closed the connection before sending metadata (code ${code}).`,
              'disconnected',
            ),
          );
        else
          this.onSocketGone(
            ws,
            `Policy server ${url} closed the connection (code ${code}${reason.length ? `: ${reason.toString()}` : ''}).`,
          );
      });
      ws.on('message', (data: WebSocket.RawData, isBinary: boolean) => {
        const bytes = Array.isArray(data)
          ? Buffer.concat(data)
          : data instanceof ArrayBuffer
            ? new Uint8Array(data)
            : data;
        if (!settled) {
          if (!isBinary) {
            this.lastServerError = bytes.toString();
            finish(
              new PolicyUnavailableError(
                `Policy server ${url} reported an error instead of its metadata: ${lastLine(this.lastServerError)}`,
                'server-error',
              ),
            );
            return;
          }
          try {
            const meta = unpackOpenpi(bytes, { maxBytes: MAX_METADATA_BYTES });
            if (
              meta === null ||
              typeof meta !== 'object' ||
              Array.isArray(meta) ||
              meta instanceof Uint8Array ||
              meta instanceof NdArray ||
              meta instanceof NpGeneric
            ) {
              throw new WireFormatError('the metadata is not a map');
            }
            this.metadata = meta as Record<string, WireValue>;
          } catch (e) {
            finish(
              new PolicyUnavailableError(
                `Policy server ${url} sent metadata that is not openpi msgpack: ${(e as Error).message}.`,
                'bad-response',
              ),
            );
            return;
          }
          this.ws = ws;
          finish();
          return;
        }
        const p = this.pending;
        this.pending = undefined;
        if (!isBinary) {
          this.lastServerError = bytes.toString();
          p?.reject(
            new PolicyUnavailableError(
              `Policy server ${url} reported an error: ${lastLine(this.lastServerError)}`,
              'server-error',
            ),
          );
          this.drop();
          return;
        }
        if (!p) {
          // Unasked-for data breaks request/response pairing: drop the connection.
          this.drop();
          return;
        }
        p.resolve(bytes);
      });
    });
  }

  private onSocketGone(ws: WebSocket, message: string): void {
    if (this.ws === ws) this.ws = undefined;
    const p = this.pending;
    if (p && (this.ws === undefined || this.ws === ws)) {
      this.pending = undefined;
      p.reject(new PolicyUnavailableError(message, 'disconnected'));
    }
  }
}
