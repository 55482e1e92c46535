/**
 * A busy station's main thread, for benchmarks that measure what it does to something else running
 * in the same process (the motor loop): the station's own code serving the loads an operator's day
 * brings, with the clients in a thread of their own (as they would be in other processes):
 *
 *   Foxglove flood  the live view (FoxgloveLiveServer fed by a RigHost, a table of 200 objects on
 *                   /tf) with a viewer that subscribes, stops reading and floods unsubscribes of
 *                   unknown ids (60 kB each); once the send budget disconnects it, it comes back
 *   upload          a 10 MiB ONNX policy POSTed to the station's upload path (readUpload →
 *                   storeUpload: size limit, onnxruntime check in its capped worker, hash, store),
 *                   one after another
 *   report          a paired report (3 policies × 24 layouts, the default 4 000 bootstrap resamples) built and
 *                   rendered to HTML on this thread every 1.5 s — the worst case: the station itself
 *                   builds reports in its report thread
 */
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Worker } from 'node:worker_threads';
import { MirrorRig } from '../src/rig/mirror-rig.js';
import { yamRigModel } from '../src/rig/yam.js';
import { RigHost } from '../src/server/rig-host.js';
import { FoxgloveLiveServer } from '../src/server/foxglove-live.js';
import { readUpload, storeUpload } from '../src/server/uploads.js';
import { openStore } from '../src/store/store.js';
import { buildPairedReport, type ReportRollout } from '../src/analysis/paired-report.js';
import { renderReportHtml } from '../src/analysis/report-html.js';
import { sampleLayoutSet } from '../src/layouts/layout-set.js';
import { getTask } from '../src/tasks/registry.js';
import { buildLinearPolicyModel } from '../test/policy/onnx-model.js';

export interface BusyStation {
  /** What the station served so far. */
  counts(): { floodRequests: number; floodReconnects: number; uploads: number; reports: number };
  stop(): Promise<void>;
}

/** The viewer and the uploader: plain `ws` and `http` in a worker, so their own work is not on the station's thread. */
const CLIENTS = `
const { workerData, parentPort } = require('node:worker_threads');
const http = require('node:http');
const WebSocket = require('ws');
const { foxgloveUrl, uploadUrl, upload } = workerData;
let stopped = false;
let floodRequests = 0, floodReconnects = 0, uploads = 0;
const flood = JSON.stringify({ op: 'unsubscribe', subscriptionIds: Array.from({ length: 7000 }, (_, i) => 100000 + i) });
function viewer() {
  if (stopped) return;
  const ws = new WebSocket(foxgloveUrl, ['foxglove.websocket.v1']);
  ws.on('error', () => {});
  ws.on('close', () => { if (!stopped) { floodReconnects++; setTimeout(viewer, 50); } });
  ws.on('message', (data, isBinary) => {
    if (isBinary) return;
    const m = JSON.parse(data.toString());
    if (m.op !== 'advertise') return;
    const tf = m.channels.find((c) => c.topic === '/tf');
    ws.send(JSON.stringify({ op: 'subscribe', subscriptions: [{ id: 1, channelId: tf.id }] }));
    setTimeout(() => {
      ws._socket.pause();
      const more = () => {
        if (stopped || ws.readyState !== WebSocket.OPEN) return;
        ws.send(flood, () => { floodRequests++; setTimeout(more, 2); });
      };
      more();
    }, 100);
  });
}
function uploader() {
  if (stopped) return;
  const req = http.request(uploadUrl, { method: 'POST', headers: { 'content-length': upload.length } }, (res) => {
    res.resume();
    res.on('end', () => { uploads++; setTimeout(uploader, 200); });
  });
  req.on('error', () => setTimeout(uploader, 200));
  req.end(Buffer.from(upload));
}
viewer();
uploader();
parentPort.on('message', (m) => {
  if (m === 'counts') parentPort.postMessage({ floodRequests, floodReconnects, uploads });
  if (m === 'stop') { stopped = true; parentPort.postMessage({ floodRequests, floodReconnects, uploads }); }
});
`;

function reportInput() {
  const task = getTask('bottles-in-the-bin');
  const set = sampleLayoutSet({ task: task.id, tiers: [1, 5], perTier: 12, seed: 3 });
  const rollouts: ReportRollout[] = [];
  let id = 1;
  const level = { good: 0.9, mid: 0.6, poor: 0.3 } as const;
  for (const p of ['good', 'mid', 'poor'] as const) {
    for (let i = 0; i < set.layouts.length; i++) {
      const s = Math.min(1, Math.max(0, level[p] + (i % 3) * 0.05 - 0.05));
      const row = (kind: 'sim' | 'real', progress: number): ReportRollout => ({
        id: id++,
        kind,
        policy: p,
        layoutIndex: i,
        tier: set.layouts[i].tier,
        status: 'valid',
        outcome: 'completed',
        progress,
        calibration: kind === 'sim' ? 'a'.repeat(64) : '',
        durationS: kind === 'sim' ? 4 : 60,
        episodeSeconds: 60,
      });
      rollouts.push(row('sim', s), row('sim', s), row('real', Math.max(0, s - 0.1)));
    }
  }
  return {
    task,
    layoutSet: set,
    policies: ['good', 'mid', 'poor'].map((k) => ({ key: k, label: k, spec: `code:${k}`, checkpointSha256: null })),
    rollouts,
  };
}

export async function startBusyStation(): Promise<BusyStation> {
  const dir = mkdtempSync(join(tmpdir(), 'tandem-busy-station-'));
  const bodies = Array.from({ length: 200 }, (_, i) => ({
    id: `object-${i}`,
    kind: 'bottle',
    position: [i / 1000, 0, 0.02] as [number, number, number],
    quaternion: [0, 0, 0, 1] as [number, number, number, number],
  }));
  const host = new RigHost({
    type: 'mirror',
    create: ({ clock }) =>
      Promise.resolve({ rig: new MirrorRig({ model: yamRigModel(), clock }), services: undefined }),
    motors: () => [],
    cell: () => null,
    bodies: () => bodies,
  });
  await host.start();
  const live = new FoxgloveLiveServer({ source: host, port: 0 });
  await live.listen();

  const store = openStore(join(dir, 'station.sqlite'));
  let uploadsServed = 0;
  const uploadServer: Server = createServer((req, res) => {
    void (async () => {
      try {
        const body = await readUpload(req, 'policy');
        const r = await storeUpload(store, dir, 'policy', 'big.onnx', body);
        uploadsServed++;
        res.writeHead(r.inserted ? 201 : 200).end(JSON.stringify(r));
      } catch (e) {
        res.writeHead(400).end((e as Error).message);
      }
    })();
  });
  await new Promise<void>((resolve) => uploadServer.listen(0, '127.0.0.1', resolve));
  const uploadUrl = `http://127.0.0.1:${(uploadServer.address() as AddressInfo).port}/api/uploads/policy?name=big.onnx`;
  // 12 600 rows × 14 × 14 weights: a 10 MiB model onnxruntime loads.
  const upload = buildLinearPolicyModel({ horizon: 12_600, cameras: [] }).bytes;

  const input = reportInput();
  let reports = 0;
  const reporter = setInterval(() => {
    renderReportHtml(buildPairedReport(input), {
      generatedAt: new Date(0).toISOString(),
      tandemVersion: 'bench',
      store: 'busy station',
    });
    reports++;
  }, 1500);

  const clients = new Worker(CLIENTS, { eval: true, workerData: { foxgloveUrl: live.url, uploadUrl, upload } });
  const ask = (m: 'counts' | 'stop') =>
    new Promise<{ floodRequests: number; floodReconnects: number; uploads: number }>((resolve) => {
      clients.once('message', resolve);
      clients.postMessage(m);
    });
  let last = { floodRequests: 0, floodReconnects: 0, uploads: 0 };
  return {
    counts: () => ({ ...last, uploads: uploadsServed, reports }),
    async stop() {
      clearInterval(reporter);
      last = await ask('stop');
      await clients.terminate();
      await live.close();
      await host.close();
      await new Promise<void>((resolve) => {
        uploadServer.closeAllConnections();
        uploadServer.close(() => resolve());
      });
      store.close();
      rmSync(dir, { recursive: true, force: true });
    },
  };
}
