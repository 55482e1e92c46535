/** openpi servers (real websockets on loopback) for client and CLI tests: one that answers, and misbehaving ones. */
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import WebSocket, { WebSocketServer } from 'ws';
import { Packr } from 'msgpackr';
import { packOpenpi } from '../../src/policy/openpi/msgpack-numpy.js';
import { encodeResult } from '../../src/policy/openpi/wire.js';

export type Behaviour =
  | 'answer' // answers every request at once with rows of 0.1 rad
  | 'hang' // metadata, then never answers
  | 'garbage-metadata' // first frame is not msgpack
  | 'garbage-answer' // answers with bytes that are not msgpack
  | 'text-error' // answers with a Python-style traceback text frame and close 1011
  | 'close-mid-inference' // closes the socket instead of answering
  | 'answer-once-then-close' // answers the first request, then closes the connection
  | 'nan-actions' // answers actions with a NaN
  | 'forged-actions' // answers an "actions" map that inherits a small real array through __proto__ and claims a huge shape
  | 'bigint-dtype'; // answers an "actions" array whose dtype is a uint64 (a BigInt once decoded)

export interface FakeServer {
  readonly url: string;
  readonly connections: () => number;
  /** Connections whose close handshake has finished (the client has heard the close). */
  readonly closedConnections: () => number;
  close(): Promise<void>;
}

const utf8 = new TextEncoder();
/** Packs Maps as msgpack maps with str or bin keys, as a hostile server can. */
const raw = new Packr({ useRecords: false, variableMapSize: true });
const ndMap = (dtype: unknown, shape: unknown, data: Uint8Array) =>
  new Map<unknown, unknown>([
    [utf8.encode('__ndarray__'), true],
    [utf8.encode('data'), data],
    [utf8.encode('dtype'), dtype],
    [utf8.encode('shape'), shape],
  ]);
const HOSTILE: Partial<Record<Behaviour, Uint8Array>> = {
  'forged-actions': raw.pack(
    new Map([
      [
        'actions',
        new Map<unknown, unknown>([
          ['__proto__', ndMap('<f4', [1, 14], new Uint8Array(56))],
          ['shape', [100_000, 14]],
          ['dtype', '<f8'],
        ]),
      ],
    ]),
  ),
  'bigint-dtype': raw.pack(new Map([['actions', ndMap(2n ** 64n - 1n, [1, 14], new Uint8Array(56))]])),
};

const TRACEBACK =
  'Traceback (most recent call last):\n  File "serve_policy.py", line 12, in infer\nValueError: Unknown camera: cam_top\n';

export async function startFakeOpenpiServer(behaviour: Behaviour, horizon = 10): Promise<FakeServer> {
  const http: Server = createServer((_req, res) => res.writeHead(200).end('OK\n'));
  const wss = new WebSocketServer({ server: http, perMessageDeflate: false });
  let connections = 0;
  let closedConnections = 0;
  wss.on('connection', (ws: WebSocket) => {
    connections += 1;
    ws.on('close', () => (closedConnections += 1));
    if (behaviour === 'garbage-metadata') {
      ws.send(Buffer.from([0xc1, 0xc1, 0xc1]), { binary: true });
      return;
    }
    ws.send(packOpenpi({ reset_pose: [0, -1.5, 1.5, 0, 0, 0] }), { binary: true });
    let answered = 0;
    ws.on('message', () => {
      if (behaviour === 'hang') return;
      if (behaviour === 'garbage-answer') ws.send(Buffer.from('not msgpack at all, just text bytes'), { binary: true });
      else if (HOSTILE[behaviour]) ws.send(HOSTILE[behaviour], { binary: true });
      else if (behaviour === 'text-error') {
        ws.send(TRACEBACK);
        ws.close(1011, 'Internal server error. Traceback included in previous frame.');
      } else if (behaviour === 'close-mid-inference') ws.terminate();
      else {
        const actions = new Float32Array(horizon * 14).fill(0.1);
        if (behaviour === 'nan-actions') actions[17] = NaN;
        ws.send(encodeResult({ horizon, actions }, { policyInferMs: 1, serverInferMs: 1 }), { binary: true });
        answered += 1;
        if (behaviour === 'answer-once-then-close' && answered === 1) setTimeout(() => ws.close(1000), 10);
      }
    });
  });
  await new Promise<void>((r) => http.listen(0, '127.0.0.1', r));
  const port = (http.address() as AddressInfo).port;
  return {
    url: `ws://127.0.0.1:${port}`,
    connections: () => connections,
    closedConnections: () => closedConnections,
    async close() {
      for (const c of wss.clients) c.terminate();
      await new Promise<void>((r) => wss.close(() => r()));
      http.closeAllConnections();
      await new Promise<void>((r) => http.close(() => r()));
    },
  };
}

/** Sends one request to a policy server (after its metadata) and returns the answer and how the connection closed. */
export async function sendOneRequest(
  url: string,
  request: Uint8Array,
): Promise<{ text?: string; binary?: Uint8Array; closeCode: number }> {
  const ws = new WebSocket(url, { perMessageDeflate: false });
  let first = true;
  let text: string | undefined;
  let binary: Uint8Array | undefined;
  return new Promise((resolve, reject) => {
    ws.on('error', reject);
    ws.on('message', (data: Buffer, isBinary: boolean) => {
      if (first) {
        first = false; // the metadata
        ws.send(request);
        return;
      }
      if (isBinary) {
        binary = data;
        ws.close();
      } else text = data.toString();
    });
    ws.on('close', (closeCode) => resolve({ text, binary, closeCode }));
  });
}

/** Hostile requests for server tests, as msgpack bytes. */
export const hostileRequests = {
  /** ~200 bytes: cam_high inherits a 3-byte image through __proto__ and claims [3, 8192, 8192]. */
  forgedImage: raw.pack(
    new Map<string, unknown>([
      ['state', ndMap('<f4', [14], new Uint8Array(56))],
      [
        'images',
        new Map([
          [
            'cam_high',
            new Map<unknown, unknown>([
              ['__proto__', ndMap('|u1', [3, 1, 1], new Uint8Array(3))],
              ['shape', [3, 8192, 8192]],
            ]),
          ],
        ]),
      ],
    ]),
  ),
  /** An honest array header for a 600×4 image: within 8192, but over a server started with --max-image-side 512. */
  wideImage: raw.pack(
    new Map<string, unknown>([
      ['state', ndMap('<f4', [14], new Uint8Array(56))],
      ['images', new Map([['cam_high', ndMap('|u1', [3, 600, 4], new Uint8Array(7200))]])],
    ]),
  ),
};
