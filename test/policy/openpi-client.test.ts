import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import WebSocket from 'ws';
import { OnnxPolicy } from '../../src/policy/onnx/onnx-policy.js';
import { OpenpiClientPolicy } from '../../src/policy/openpi/client.js';
import { startPolicyServer, type RunningPolicyServer } from '../../src/policy/openpi/server.js';
import { PolicyUnavailableError } from '../../src/policy/contract.js';
import { syntheticObservation } from '../../src/policy/observation.js';
import { unpackOpenpi } from '../../src/policy/openpi/msgpack-numpy.js';
import { resizeWithPad } from '../../src/policy/image.js';
import { buildLinearPolicyModel } from './onnx-model.js';
import { startFakeOpenpiServer, type Behaviour } from './openpi-fakes.js';
import { until } from '../helpers/until.js';

const dir = mkdtempSync(join(tmpdir(), 'tandem-openpi-'));
const modelPath = join(dir, 'policy.onnx');
writeFileSync(modelPath, buildLinearPolicyModel({ horizon: 12, seed: 11 }).bytes);
test.after(() => rmSync(dir, { recursive: true, force: true }));

async function withServer(
  opts: { apiKey?: string },
  body: (server: RunningPolicyServer, local: OnnxPolicy) => Promise<void>,
): Promise<void> {
  const served = await OnnxPolicy.load(modelPath);
  const local = await OnnxPolicy.load(modelPath);
  const server = await startPolicyServer({ policy: served, port: 0, apiKey: opts.apiKey });
  try {
    await body(server, local);
  } finally {
    await server.close();
    await served.close();
    await local.close();
  }
}

const isUnavailable = (reason: PolicyUnavailableError['reason'], text: RegExp) => (e: unknown) =>
  e instanceof PolicyUnavailableError && e.reason === reason && text.test(e.message);

test('through the tandem server a policy answers exactly what it answers locally, with metadata and a latency split', async () => {
  await withServer({}, async (server, local) => {
    const client = await OpenpiClientPolicy.connect({ url: server.url });
    try {
      assert.equal(client.metadata.policy_name, 'onnx:policy.onnx');
      assert.equal(client.info.checkpointSha256, local.info.checkpointSha256);
      assert.equal(client.info.actionHorizon, 12);
      const obs = syntheticObservation({ size: 224, seed: 4 });
      const remote = await client.infer(obs);
      const direct = await local.infer(obs);
      assert.equal(remote.horizon, 12);
      assert.deepEqual(Array.from(remote.actions), Array.from(direct.actions));
      const t = remote.timing!;
      for (const k of ['encodeMs', 'networkMs', 'serverMs', 'modelMs', 'decodeMs'] as const)
        assert.ok(typeof t[k] === 'number' && t[k]! >= 0, k);
      assert.ok(t.totalMs >= t.encodeMs! + t.decodeMs!);
      // A second inference on the same connection works (strict request/response).
      assert.equal((await client.infer(obs)).horizon, 12);
      assert.equal(server.served(), 2);
    } finally {
      await client.close();
    }
    const health = await fetch(`http://127.0.0.1:${server.port}/healthz`);
    assert.equal(health.status, 200);
    assert.equal(await health.text(), 'OK\n');
  });
});

test('with an API key, the server refuses clients without it and serves those with it', async () => {
  await withServer({ apiKey: 's3cret' }, async (server) => {
    await assert.rejects(
      OpenpiClientPolicy.connect({ url: server.url }),
      isUnavailable('server-error', /refused the API key \(HTTP 401\)/),
    );
    await assert.rejects(OpenpiClientPolicy.connect({ url: server.url, apiKey: 'wrong' }), /refused the API key/);
    const client = await OpenpiClientPolicy.connect({ url: server.url, apiKey: 's3cret' });
    assert.equal((await client.infer(syntheticObservation())).horizon, 12);
    await client.close();
    assert.equal((await fetch(`http://127.0.0.1:${server.port}/healthz`)).status, 200);
  });
});

test('the server answers a bad request as openpi does: a text frame, then close 1011', async () => {
  await withServer({}, async (server) => {
    const ws = new WebSocket(server.url, { perMessageDeflate: false });
    const frames: { text: boolean; data: Buffer }[] = [];
    const closed = new Promise<number>((resolve) => ws.on('close', (code) => resolve(code)));
    ws.on('message', (data: Buffer, isBinary: boolean) => {
      frames.push({ text: !isBinary, data });
      if (frames.length === 1) ws.send(Buffer.from([0x92, 0x01, 0x02]), { binary: true }); // msgpack, but not an observation map
    });
    assert.equal(await closed, 1011);
    assert.equal(frames.length, 2);
    assert.equal(frames[0].text, false);
    assert.equal((unpackOpenpi(frames[0].data) as Record<string, unknown>).server, 'tandem');
    assert.equal(frames[1].text, true);
    assert.match(frames[1].data.toString(), /observation is not a map/);
  });
});

async function withFake(
  behaviour: Behaviour,
  body: (url: string, connections: () => number, closed: () => number) => Promise<void>,
): Promise<void> {
  const fake = await startFakeOpenpiServer(behaviour);
  try {
    await body(fake.url, fake.connections, fake.closedConnections);
  } finally {
    await fake.close();
  }
}

test('a server that never answers is a timeout, and the next inference reconnects', async () => {
  await withFake('hang', async (url, connections) => {
    const client = await OpenpiClientPolicy.connect({ url, inferenceTimeoutMs: 300 });
    assert.deepEqual(client.metadata.reset_pose, [0, -1.5, 1.5, 0, 0, 0]);
    await assert.rejects(
      client.infer(syntheticObservation()),
      isUnavailable('timeout', /did not answer within 300 ms/),
    );
    await assert.rejects(client.infer(syntheticObservation()), isUnavailable('timeout', /did not answer/));
    assert.equal(connections(), 2);
    await client.close();
  });
});

test('a server error frame, a closed socket and garbage are each told apart', async () => {
  await withFake('text-error', async (url) => {
    const client = await OpenpiClientPolicy.connect({ url });
    await assert.rejects(
      client.infer(syntheticObservation()),
      isUnavailable('server-error', /reported an error: ValueError: Unknown camera: cam_top/),
    );
    assert.match(client.lastServerError ?? '', /Traceback/);
    await client.close();
  });
  await withFake('close-mid-inference', async (url) => {
    const client = await OpenpiClientPolicy.connect({ url });
    await assert.rejects(client.infer(syntheticObservation()), isUnavailable('disconnected', /closed the connection/));
    await client.close();
  });
  await withFake('garbage-answer', async (url) => {
    const client = await OpenpiClientPolicy.connect({ url });
    await assert.rejects(
      client.infer(syntheticObservation()),
      isUnavailable('bad-response', /not an openpi action message: not valid msgpack/),
    );
    await client.close();
  });
  await withFake('garbage-metadata', async (url) => {
    await assert.rejects(
      OpenpiClientPolicy.connect({ url }),
      isUnavailable('bad-response', /sent metadata that is not openpi msgpack/),
    );
  });
});

test('a connection closed between inferences is reopened on the next one', async () => {
  await withFake('answer-once-then-close', async (url, connections, closed) => {
    const client = await OpenpiClientPolicy.connect({ url });
    assert.equal((await client.infer(syntheticObservation())).horizon, 10);
    await until(() => closed() === 1, 5000); // the server closes after its answer; the client has heard it
    assert.equal((await client.infer(syntheticObservation())).horizon, 10);
    assert.equal(connections(), 2);
    await client.close();
  });
});

test('nobody listening is one sentence after the connect timeout', async () => {
  const fake = await startFakeOpenpiServer('hang');
  const url = fake.url;
  await fake.close(); // the port is now closed
  // That refused attempts are retried up to the deadline (≈ 400 ms) is measured in bench/policy-deadlines.bench.ts.
  await assert.rejects(
    OpenpiClientPolicy.connect({ url, connectTimeoutMs: 400 }),
    isUnavailable('disconnected', /Could not connect to policy server .* within 400 ms \(.*connection refused.*\)/),
  );
});

test('concurrent inferences on one client are answered in turn, each with its own actions', async () => {
  await withServer({}, async (server, local) => {
    const client = await OpenpiClientPolicy.connect({ url: server.url });
    try {
      const a = syntheticObservation({ size: 64, seed: 1 });
      const b = syntheticObservation({ size: 64, seed: 2 });
      const [ra, rb] = await Promise.all([client.infer(a), client.infer(b)]);
      // The client resizes to 224 before sending; the local policy resizes straight to the model size.
      const viaWire = async (o: typeof a) =>
        (await local.infer({ ...o, images: { cam_high: await resizeWithPad(o.images.cam_high!, 224, 224) } })).actions;
      assert.deepEqual(Array.from(ra.actions), Array.from(await viaWire(a)));
      assert.deepEqual(Array.from(rb.actions), Array.from(await viaWire(b)));
      assert.notDeepEqual(Array.from(ra.actions), Array.from(rb.actions));
    } finally {
      await client.close();
    }
  });
});
