import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { WebSocket } from 'ws';
import { runTandem } from '../helpers/cli.js';
import { createChunkExecutor } from '../../src/policy/chunk-executor.js';
import { OpenpiClientPolicy } from '../../src/policy/openpi/client.js';
import { PolicyUnavailableError, type Observation } from '../../src/policy/contract.js';
import { syntheticObservation } from '../../src/policy/observation.js';
import { yamRigModel } from '../../src/rig/yam.js';
import { buildLinearPolicyModel } from './onnx-model.js';
import { hostileRequests, sendOneRequest, startFakeOpenpiServer, type Behaviour } from './openpi-fakes.js';
import { startServeProcess } from './serve-process.js';

const dir = mkdtempSync(join(tmpdir(), 'tandem-policy-cli-'));
const modelPath = join(dir, 'policy.onnx');
writeFileSync(
  modelPath,
  buildLinearPolicyModel({
    horizon: 16,
    seed: 2,
    cameras: [{ name: 'cam_high', camera: 'cam_high', layout: 'chw', dtype: 'float32', size: 224 }],
  }).bytes,
);
test.after(() => rmSync(dir, { recursive: true, force: true }));

const noStack = (s: string): void => assert.doesNotMatch(s, /\bat .*\.ts:\d+/);

test('serve an ONNX model, probe it over the openpi protocol and directly, stop with Ctrl-C', async () => {
  const server = await startServeProcess(['--policy', `onnx:${modelPath}`, '--port', '0']);
  try {
    assert.match(
      server.stdout(),
      /Serving onnx:policy\.onnx \(checkpoint [0-9a-f]{12}, horizon 16\) on ws:\/\/127\.0\.0\.1:\d+/,
    );
    const remote = await runTandem(['policy', 'probe', server.url, '--json']);
    assert.equal(remote.code, 0, remote.stderr);
    const r = JSON.parse(remote.stdout);
    assert.deepEqual(r.actionShape, [16, 14]);
    assert.equal(r.metadata.policy_name, 'onnx:policy.onnx');
    assert.equal(r.metadata.action_horizon, 16);
    for (const k of ['total', 'encode', 'network', 'server', 'model', 'decode'])
      assert.equal(typeof r.latencyMs[k], 'number', k);

    // The same model probed locally: same checkpoint, the model's own time printed.
    const local = await runTandem(['policy', 'probe', `onnx:${modelPath}`]);
    assert.equal(local.code, 0, local.stderr);
    assert.match(local.stdout, new RegExp(`Checkpoint ${r.metadata.checkpoint_sha256}`));
    assert.match(
      local.stdout,
      /Actions {4}\[16, 14\]\nLatency {4}[\d.]+ ms \(encode [\d.]+, model [\d.]+, decode [\d.]+\)/,
    );
    assert.equal((await fetch(`${server.url.replace('ws:', 'http:')}/healthz`)).status, 200);
  } finally {
    server.child.kill('SIGINT');
  }
  assert.equal(await server.exited, 0);
  assert.match(server.stdout(), /Stopped after 1 inference\./);
});

test('tandem policy serve: forged and oversized requests get one sentence and close 1011, the server keeps serving', async () => {
  const server = await startServeProcess(['--policy', `onnx:${modelPath}`, '--port', '0', '--max-image-side', '512']);
  try {
    const forged = await sendOneRequest(server.url, hostileRequests.forgedImage);
    assert.equal(forged.closeCode, 1011);
    assert.match(forged.text ?? '', /^tandem policy server: [^\n]*'images\.cam_high'[^\n]*\.$/);
    const wide = await sendOneRequest(server.url, hostileRequests.wideImage);
    assert.equal(wide.closeCode, 1011);
    assert.match(
      wide.text ?? '',
      /'images\.cam_high' is 600×4 pixels \(height × width\); this server takes sides from 1 to 512 \(--max-image-side\)\./,
    );
    const after = await runTandem(['policy', 'probe', server.url]);
    assert.equal(after.code, 0, after.stderr);
    assert.match(server.stderr(), /error for 127\.0\.0\.1:\d+: tandem policy server: /);
  } finally {
    server.child.kill('SIGINT');
  }
  assert.equal(await server.exited, 0);
  assert.match(server.stdout(), /Stopped after 1 inference\./);
});

test('a server that requires an API key refuses a probe without it', async () => {
  const server = await startServeProcess(['--policy', `onnx:${modelPath}`, '--port', '0', '--api-key', 'k3y']);
  try {
    const without = await runTandem(['policy', 'probe', server.url]);
    assert.equal(without.code, 3);
    assert.match(without.stderr, /refused the API key \(HTTP 401\); pass the key the server was started with/);
    // A browser page (it sends an Origin) may not drive the policy, key or not.
    const fromPage = await new Promise<number>((resolve, reject) => {
      const ws = new WebSocket(server.url, {
        headers: { origin: 'http://evil.example', authorization: 'Api-Key k3y' },
      });
      ws.once('unexpected-response', (_req, res) => {
        resolve(res.statusCode ?? 0);
        ws.terminate();
      });
      ws.once('open', () => {
        resolve(101);
        ws.close();
      });
      ws.once('error', reject);
    });
    assert.equal(fromPage, 403);
    const busy = await runTandem([
      'policy',
      'serve',
      '--policy',
      `onnx:${modelPath}`,
      '--port',
      server.url.split(':').pop()!,
    ]);
    assert.equal(busy.code, 2);
    assert.match(busy.stderr, /Port \d+ on 127\.0\.0\.1 is already in use; pick another with --port\./);
  } finally {
    server.child.kill('SIGINT');
    await server.exited;
  }
});

test('serving off loopback without an API key is refused in one sentence, before anything listens', async () => {
  const r = await runTandem(['policy', 'serve', '--policy', `onnx:${modelPath}`, '--port', '0', '--host', '0.0.0.0'], {
    env: { TANDEM_POLICY_API_KEY: '' },
  });
  assert.equal(r.code, 2);
  assert.equal(
    r.stderr,
    'Serving on 0.0.0.0 lets other machines drive the policy, so it needs --api-key KEY (or $TANDEM_POLICY_API_KEY); without one, serve on 127.0.0.1.\n',
  );
  assert.equal(r.stdout, '');
});

async function probeFake(behaviour: Behaviour, extra: string[] = []) {
  const fake = await startFakeOpenpiServer(behaviour);
  try {
    return await runTandem(['policy', 'probe', fake.url, ...extra]);
  } finally {
    await fake.close();
  }
}

test('probe against broken servers: each a one-line reason, exit 3 (policy unavailable)', async () => {
  const hang = await probeFake('hang', ['--timeout-ms', '500']);
  assert.equal(hang.code, 3);
  assert.match(hang.stderr, /^Policy server ws:\/\/127\.0\.0\.1:\d+ did not answer within 500 ms\.\n$/);
  const garbage = await probeFake('garbage-answer');
  assert.equal(garbage.code, 3);
  assert.match(garbage.stderr, /answered something that is not an openpi action message: not valid msgpack/);
  const traceback = await probeFake('text-error');
  assert.equal(traceback.code, 3);
  assert.match(traceback.stderr, /reported an error: ValueError: Unknown camera: cam_top/);
  for (const r of [hang, garbage, traceback]) noStack(r.stderr);
});

test('probe against a server answering forged or BigInt arrays: one sentence, exit 3 as the help promises', async () => {
  for (const behaviour of ['forged-actions', 'bigint-dtype'] as const) {
    const r = await probeFake(behaviour);
    assert.equal(r.code, 3, `${behaviour}: ${r.stderr}`);
    assert.match(
      r.stderr,
      /^Policy server ws:\/\/127\.0\.0\.1:\d+ answered something that is not an openpi action message: [^\n]+\.\n$/,
      behaviour,
    );
    assert.doesNotMatch(r.stderr, /failed unexpectedly/);
  }
});

test('bad specs and files that are not models are one sentence, exit 2', async () => {
  const notOnnx = join(dir, 'readme.onnx');
  writeFileSync(notOnnx, 'hello');
  const r1 = await runTandem(['policy', 'probe', `onnx:${notOnnx}`]);
  assert.equal(r1.code, 2);
  assert.match(r1.stderr, /readme\.onnx is not an ONNX model onnxruntime can load/);
  const r2 = await runTandem(['policy', 'probe', 'pi0']);
  assert.equal(r2.code, 2);
  assert.match(
    r2.stderr,
    /Policy spec 'pi0' is not one the policy runtime opens; use onnx:path\/to\/model\.onnx or ws:\/\/host:port\./,
  );
  for (const r of [r1, r2]) noStack(r.stderr);
});

test('a served policy that dies mid-episode aborts the episode as policy unavailable', async () => {
  const server = await startServeProcess(['--policy', `onnx:${modelPath}`, '--port', '0', '--added-latency-ms', '150']);
  const policy = await OpenpiClientPolicy.connect({ url: server.url, connectTimeoutMs: 500 });
  const exec = createChunkExecutor(policy, { prefetchSteps: 4, replanEverySteps: 8 });
  const frame = syntheticObservation({ size: 224 });
  const observe = (s: number) => async (): Promise<Observation> => ({ ...frame, timeS: s / 50 });
  let failure: unknown;
  let steps = 0;
  try {
    await exec.reset({ seed: 0, prompt: frame.prompt, rigModel: yamRigModel(), controlHz: 50 });
    for (let s = 0; s < 200; s++) {
      if (s === 12) server.child.kill('SIGKILL'); // chunk 2 was requested at step 12 (8·2 − 4): it is in flight
      await exec.step(s, s / 50, observe(s));
      steps += 1;
    }
  } catch (e) {
    failure = e;
  } finally {
    await policy.close();
    server.child.kill('SIGKILL');
    await server.exited;
  }
  assert.ok(failure instanceof PolicyUnavailableError, String(failure));
  assert.equal(failure.reason, 'disconnected');
  assert.equal(steps, 16, 'the episode ran until the chunk from the dead server was due');
  assert.equal(exec.chunks().length, 2);
});
