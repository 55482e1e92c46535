/**
 * `tandem policy serve` under a flooding client: a connection is read no further while a request
 * of its own waits, so the server never holds more than that client's current request (and what
 * the kernel buffers), and the flood waits its turn instead of queueing inside the server. Seen
 * from the flooding client: its bytes are taken only as its answers come back.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import WebSocket from 'ws';
import { startPolicyServer } from '../../src/policy/openpi/server.js';
import { encodeObservation } from '../../src/policy/openpi/wire.js';
import { syntheticObservation } from '../../src/policy/observation.js';
import type { ActionChunk, Policy } from '../../src/policy/contract.js';
import { until } from '../helpers/until.js';

/** A policy that takes a little while per inference, as a real model does. */
const slowPolicy: Policy = {
  info: { name: 'slow', checkpointSha256: '0'.repeat(64), actionHorizon: 1, cameras: [], needsPrivilegedState: false },
  reset: () => Promise.resolve(),
  infer: () =>
    new Promise<ActionChunk>((resolve) => setTimeout(() => resolve({ horizon: 1, actions: new Float32Array(14) }), 20)),
};

test('a client that floods large requests is read only as it is answered, not buffered whole by the server', async (t) => {
  const server = await startPolicyServer({ policy: slowPolicy, port: 0 });
  t.after(() => server.close());
  const N = 16;
  // Three 512-pixel camera images: about 2.4 MB a request.
  const request = await encodeObservation(syntheticObservation({ size: 512 }), 512);
  assert.ok(request.length > 2e6, `${request.length} bytes`);
  const ws = new WebSocket(server.url, { perMessageDeflate: false });
  t.after(() => ws.terminate());
  let answers = 0;
  let metadata = false;
  ws.on('message', () => {
    if (!metadata) metadata = true;
    else answers += 1;
  });
  await until(() => metadata, 10_000);
  for (let i = 0; i < N; i++) ws.send(request);
  // The moment the last byte has left the client, the server has taken every request.
  await until(() => ws.bufferedAmount === 0, 60_000, 1);
  const answeredThen = answers;
  t.diagnostic(`all ${N} requests taken by the server after ${answeredThen} answers`);
  // Only what the kernel's socket buffers hold (a few requests) may be taken ahead of its answers.
  assert.ok(
    answeredThen >= N - 6,
    `the server took all ${N} requests after only ${answeredThen} answers: it buffers a flood`,
  );
  await until(() => answers === N, 60_000);
});
