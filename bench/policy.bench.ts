/**
 * Policy runtime benchmark (npm run bench -- policy).
 *  1. Client overhead per inference: openpi msgpack encode of 3 × 224×224 images + state, and
 *     decode of a 50×14 answer — beside a same-run baseline (JSON of the same observation, and a
 *     bare copy of the same bytes).
 *  2. Round trip against `tandem policy serve` (a child process) on loopback: total minus the
 *     model's own time. Goal: < 2 ms beyond the model.
 *  3. Idle control cycles at chunk boundaries, 50 Hz loop on the wall clock, a 100 ms model
 *     (the server's --added-latency-ms), open loop vs prefetch. Goal: zero with prefetch. The
 *     prefetch must cover the latency's tail, not its median: two leads are shown.
 */
import { spawn } from 'node:child_process';
import { connect } from 'node:net';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { cpus, loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { createChunkExecutor, type ChunkExecutionOptions } from '../src/policy/chunk-executor.js';
import type { Observation, Policy } from '../src/policy/contract.js';
import { syntheticObservation } from '../src/policy/observation.js';
import { OnnxPolicy } from '../src/policy/onnx/onnx-policy.js';
import { OpenpiClientPolicy } from '../src/policy/openpi/client.js';
import { startPolicyServer } from '../src/policy/openpi/server.js';
import { decodeObservation, decodeResult, encodeObservation, encodeResult } from '../src/policy/openpi/wire.js';
import { yamRigModel } from '../src/rig/yam.js';
import { buildLinearPolicyModel } from '../test/policy/onnx-model.js';

const ROOT = fileURLToPath(new URL('..', import.meta.url));
const median = (xs: number[]): number => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];
const ms = (x: number): string => `${x.toFixed(3)} ms`;

async function time(n: number, f: () => unknown): Promise<number[]> {
  const out: number[] = [];
  for (let i = 0; i < n; i++) {
    const t0 = performance.now();
    await f();
    out.push(performance.now() - t0);
  }
  return out;
}

async function codec(): Promise<void> {
  console.log('\n-- 1. client codec, 3 × 224×224 RGB + 14-d state, 50×14 answer (median of runs) --');
  const obs = syntheticObservation({ size: 224 });
  const answer = encodeResult(
    { horizon: 50, actions: new Float32Array(50 * 14).fill(0.25) },
    { policyInferMs: 1, serverInferMs: 1 },
  );
  await time(20, () => encodeObservation(obs)); // warm-up
  const enc = median(await time(200, () => encodeObservation(obs)));
  const dec = median(await time(2000, () => decodeResult(answer)));
  const request = await encodeObservation(obs);
  const serverDec = median(await time(200, () => decodeObservation(request)));
  const copy = median(
    await time(200, () =>
      Buffer.concat([
        obs.images.cam_high!.data,
        obs.images.cam_left_wrist!.data,
        obs.images.cam_right_wrist!.data,
        new Uint8Array(obs.state.buffer),
      ]),
    ),
  );
  const asJson = () =>
    JSON.stringify({
      state: Array.from(obs.state),
      images: Object.fromEntries(Object.entries(obs.images).map(([k, v]) => [k, Array.from(v!.data)])),
      prompt: obs.prompt,
    });
  const json = median(await time(10, asJson));
  console.log(`request size                 ${(request.length / 1024).toFixed(1)} KiB`);
  console.log(`client encode (msgpack)      ${ms(enc)}`);
  console.log(`client decode (50×14)        ${ms(dec)}`);
  console.log(`client overhead enc+dec      ${ms(enc + dec)}`);
  const serverEnc = median(
    await time(2000, () =>
      encodeResult({ horizon: 50, actions: new Float32Array(50 * 14) }, { policyInferMs: 1, serverInferMs: 1 }),
    ),
  );
  console.log(`server decode of the request ${ms(serverDec)}`);
  console.log(`server encode of the answer  ${ms(serverEnc)}`);
  const compute = enc + dec + serverDec + serverEnc;
  console.log(
    `protocol compute per inference (client + server)  ${ms(compute)}   goal < 2 ms: ${compute < 2 ? 'met' : 'MISSED'}`,
  );
  console.log(`baseline: bare copy of bytes ${ms(copy)}   (encode is ${(enc / copy).toFixed(1)}× a copy)`);
  console.log(`baseline: JSON.stringify     ${ms(json)}   (encode is ${(json / enc).toFixed(0)}× faster than JSON)`);
}

interface Served {
  url: string;
  stop(): Promise<void>;
}

function serve(modelPath: string, addedLatencyMs: number): Promise<Served> {
  const child = spawn(
    process.execPath,
    [
      join(ROOT, 'bin/tandem.js'),
      'policy',
      'serve',
      '--policy',
      `onnx:${modelPath}`,
      '--port',
      '0',
      '--added-latency-ms',
      String(addedLatencyMs),
    ],
    {
      stdio: ['ignore', 'pipe', 'pipe'],
    },
  );
  const exited = new Promise<void>((r) => child.on('close', () => r()));
  let out = '';
  return new Promise((resolve, reject) => {
    child.stdout.setEncoding('utf8').on('data', (d: string) => {
      out += d;
      const m = /on (ws:\/\/\S+)/.exec(out);
      if (m) resolve({ url: m[1], stop: async () => void (child.kill('SIGINT'), await exited) });
    });
    void exited.then(() => reject(new Error('policy server exited early')));
  });
}

/**
 * The machine's floor: a raw TCP round trip on loopback to a child process carrying the same
 * bytes (request out, answer back) — what any transport pays here, before websocket or msgpack.
 */
async function rawTcpRoundTrip(requestBytes: number, answerBytes: number, n: number): Promise<number[]> {
  const script = `const net = require('node:net');
const s = net.createServer((c) => { c.setNoDelay(true); let got = 0; c.on('data', (d) => { got += d.length; if (got >= ${requestBytes}) { got -= ${requestBytes}; c.write(Buffer.alloc(${answerBytes})); } }); });
s.listen(0, '127.0.0.1', () => console.log(s.address().port));
process.on('SIGINT', () => process.exit(0));`;
  const child = spawn(process.execPath, ['-e', script], { stdio: ['ignore', 'pipe', 'inherit'] });
  const exited = new Promise((r) => child.on('close', r));
  const port = await new Promise<number>((resolve) =>
    child.stdout.setEncoding('utf8').once('data', (d: string) => resolve(Number(d.trim()))),
  );
  const c = connect(port, '127.0.0.1');
  c.setNoDelay(true);
  await new Promise((r) => c.once('connect', r));
  const payload = Buffer.alloc(requestBytes, 1);
  const out = await time(
    n,
    () =>
      new Promise<void>((resolve) => {
        let got = 0;
        const on = (d: Buffer): void => {
          got += d.length;
          if (got >= answerBytes) {
            c.off('data', on);
            resolve();
          }
        };
        c.on('data', on);
        c.write(payload);
      }),
  );
  c.destroy();
  child.kill('SIGINT');
  await exited;
  return out;
}

async function roundTrip(modelPath: string): Promise<void> {
  console.log('\n-- 2. round trip to `tandem policy serve` on loopback (ONNX model, 3 cameras at 224×224, H = 50) --');
  const local = await OnnxPolicy.load(modelPath);
  const obs = syntheticObservation({ size: 224 });
  await time(10, () => local.infer(obs));
  const bare = await time(100, () => local.infer(obs));
  const bareModel: number[] = [];
  for (let i = 0; i < 100; i++) bareModel.push((await local.infer(obs)).timing!.modelMs!);
  await local.close();

  // In-process server with a policy that answers at once: the protocol and transport alone,
  // without a second process to wake up or a model thread pool to hop through.
  const instant: Policy = {
    info: {
      name: 'instant',
      checkpointSha256: '-',
      actionHorizon: 50,
      cameras: ['cam_high'],
      needsPrivilegedState: false,
    },
    reset: async () => {},
    infer: async () => ({ horizon: 50, actions: new Float32Array(50 * 14) }),
  };
  const inProc = await startPolicyServer({ policy: instant, port: 0 });
  const inProcClient = await OpenpiClientPolicy.connect({ url: inProc.url });
  const inProcOverhead: number[] = [];
  for (let i = 0; i < 400; i++) {
    const t = (await inProcClient.infer(obs)).timing!;
    if (i >= 100) inProcOverhead.push(t.totalMs - t.serverMs!);
  }
  await inProcClient.close();
  await inProc.close();

  const server = await serve(modelPath, 0);
  const client = await OpenpiClientPolicy.connect({ url: server.url });
  const rows: { total: number; encode: number; network: number; server: number; model: number; decode: number }[] = [];
  for (let i = 0; i < 400; i++) {
    const t = (await client.infer(obs)).timing!;
    if (i >= 100)
      rows.push({
        total: t.totalMs,
        encode: t.encodeMs!,
        network: t.networkMs!,
        server: t.serverMs!,
        model: t.modelMs!,
        decode: t.decodeMs!,
      });
  }
  await client.close();
  await server.stop();
  const m = (k: keyof (typeof rows)[0]) => median(rows.map((r) => r[k]));
  const requestBytes = (await encodeObservation(obs)).length;
  const answerBytes = encodeResult(
    { horizon: 50, actions: new Float32Array(50 * 14) },
    { policyInferMs: 1, serverInferMs: 1 },
  ).length;
  const tcp = median(await rawTcpRoundTrip(requestBytes, answerBytes, 200));
  const overheadVsPolicy = median(rows.map((r) => r.total - r.server));
  const overheadVsModel = median(rows.map((r) => r.total - r.model));
  console.log(`baseline: in-process policy.infer ${ms(median(bare))} (of which model run ${ms(median(bareModel))})`);
  console.log(
    `remote total                      ${ms(m('total'))}  = encode ${ms(m('encode'))} + network ${ms(m('network'))} + server ${ms(m('server'))} + decode ${ms(m('decode'))}`,
  );
  const p90 = (xs: number[]): number => [...xs].sort((a, b) => a - b)[Math.floor(xs.length * 0.9)];
  const p10 = (xs: number[]): number => [...xs].sort((a, b) => a - b)[Math.floor(xs.length * 0.1)];
  const childOverhead = rows.map((r) => r.total - r.server);
  console.log(
    `baseline: raw TCP round trip to a child process, same bytes  ${ms(tcp)}   (loopback floor here: ${(requestBytes / 1024).toFixed(0)} KiB out, ${(answerBytes / 1024).toFixed(1)} KiB back)`,
  );
  console.log(
    `overhead beyond the server's policy time, server in a child process  p10 ${ms(p10(childOverhead))}, median ${ms(overheadVsPolicy)}, p90 ${ms(p90(childOverhead))}   goal < 2 ms: ${overheadVsPolicy < 2 ? 'met' : 'MISSED'}`,
  );
  console.log(
    `  minus the raw TCP floor                                             ${ms(overheadVsPolicy - tcp)}   (${(overheadVsPolicy / tcp).toFixed(2)}× the floor)`,
  );
  console.log(
    `overhead beyond the policy, in-process server, instant policy       p10 ${ms(p10(inProcOverhead))}, median ${ms(median(inProcOverhead))}, p90 ${ms(p90(inProcOverhead))}   goal < 2 ms: ${median(inProcOverhead) < 2 ? 'met' : 'MISSED'}`,
  );
  console.log(
    `overhead beyond the bare model run        ${ms(overheadVsModel)}   (includes server-side image normalisation)`,
  );
  console.log(`remote / in-process ratio                 ${(m('total') / median(bare)).toFixed(2)}×`);
}

async function idleCycles(modelPath: string): Promise<void> {
  console.log(
    '\n-- 3. idle control cycles at chunk boundaries: 50 Hz wall-clock loop, 100 ms model (server --added-latency-ms 100), H = 50, 25 rows per chunk --',
  );
  const server = await serve(modelPath, 100);
  const hz = 50;
  const periodMs = 1000 / hz;
  const frame = syntheticObservation({ size: 224 });
  const observe = (s: number) => async (): Promise<Observation> => ({ ...frame, timeS: s / hz });
  const runs: [string, ChunkExecutionOptions][] = [
    ['open loop (openpi reference)', { replanEverySteps: 25, prefetchSteps: 0 }],
    ['prefetch 10 steps (200 ms)', { replanEverySteps: 25, prefetchSteps: 10 }],
    ['prefetch 15 steps (300 ms)', { replanEverySteps: 25, prefetchSteps: 15 }],
  ];
  const steps = 250; // 5 s, 10 chunk boundaries
  for (const [label, opts] of runs) {
    const policy: Policy = await OpenpiClientPolicy.connect({ url: server.url });
    const exec = createChunkExecutor(policy, opts);
    await exec.reset({ seed: 0, prompt: frame.prompt, rigModel: yamRigModel(), controlHz: hz });
    let slot = performance.now();
    let atBoundaries = 0;
    let elsewhere = 0;
    for (let s = 0; s < steps; s++) {
      const wait = slot - performance.now();
      if (wait > 0) await new Promise((r) => setTimeout(r, wait));
      await exec.step(s, s / hz, observe(s));
      const idle = Math.max(0, Math.floor((performance.now() - slot) / periodMs));
      // Idle because of the policy: a takeover step whose chunk was not there yet. Anything
      // else (a late timer, a descheduled process) is the machine's jitter, counted apart.
      const last = exec.chunks().at(-1)!;
      if (s > 0 && last.adoptedStep === s && !last.readyAtTakeover) atBoundaries += idle;
      else if (s > 0) elsewhere += idle;
      slot += (idle + 1) * periodMs;
    }
    const boundaries = exec.chunks().length - 1;
    const lat = median(
      exec
        .chunks()
        .slice(1)
        .map((c) => c.latencyMs),
    );
    console.log(
      `${label.padEnd(28)} idle cycles waiting for the policy at ${boundaries} boundaries: ${atBoundaries} (${(atBoundaries / boundaries).toFixed(1)} per boundary); other late cycles (machine jitter): ${elsewhere}; median inference ${ms(lat)}`,
    );
    await policy.close?.();
  }
  await server.stop();
}

console.log(
  `machine: ${cpus().length} cores, load average ${loadavg()
    .map((x) => x.toFixed(1))
    .join(' ')} (wall-clock figures below include waiting for a core)`,
);
const dir = mkdtempSync(join(tmpdir(), 'tandem-policy-bench-'));
try {
  const cam = (camera: 'cam_high' | 'cam_left_wrist' | 'cam_right_wrist') => ({
    name: camera,
    camera,
    layout: 'chw' as const,
    dtype: 'float32' as const,
    size: 224,
  });
  const modelPath = join(dir, 'linear-3cam.onnx');
  writeFileSync(
    modelPath,
    buildLinearPolicyModel({ horizon: 50, cameras: [cam('cam_high'), cam('cam_left_wrist'), cam('cam_right_wrist')] })
      .bytes,
  );
  await codec();
  await roundTrip(modelPath);
  await idleCycles(modelPath);
} finally {
  rmSync(dir, { recursive: true, force: true });
}
