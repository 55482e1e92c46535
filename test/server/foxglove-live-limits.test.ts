/**
 * What no Foxglove client can do to the station: connect from a web page that is not a Foxglove or
 * Lichtblick app, turn one request into thousands of replies, or make the station buffer without
 * bound by not reading. Real `ws` clients against a real FoxgloveLiveServer fed by a real RigHost.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import type { Socket } from 'node:net';
import WebSocket from 'ws';
import { MirrorRig } from '../../src/rig/mirror-rig.js';
import { yamRigModel } from '../../src/rig/yam.js';
import { RigHost, type RigParts } from '../../src/server/rig-host.js';
import { FoxgloveLiveServer, type FoxgloveLiveOptions } from '../../src/server/foxglove-live.js';
import { FoxgloveTestClient } from '../helpers/foxglove-client.js';
import { until } from '../helpers/until.js';

/** A mirror rig on a table with `objects` objects: /tf grows with them (a busy scene). */
function parts(objects: number): RigParts {
  const bodies = Array.from({ length: objects }, (_, i) => ({
    id: `object-${i}`,
    kind: 'bottle',
    position: [i / 1000, 0, 0.02] as [number, number, number],
    quaternion: [0, 0, 0, 1] as [number, number, number, number],
  }));
  return {
    type: 'mirror',
    create: ({ clock }) =>
      Promise.resolve({
        rig: new MirrorRig({ model: yamRigModel(), clock, initialPosition: new Array(14).fill(0.1) }),
        services: undefined,
      }),
    motors: () => [],
    cell: () => null,
    bodies: () => bodies,
  };
}

async function serve(
  t: { after(fn: () => Promise<void>): void },
  objects: number,
  o: Partial<FoxgloveLiveOptions> = {},
): Promise<FoxgloveLiveServer> {
  const host = new RigHost(parts(objects));
  await host.start();
  const live = new FoxgloveLiveServer({ source: host, port: 0, ...o });
  await live.listen();
  t.after(async () => {
    await live.close();
    await host.close();
  });
  return live;
}

function upgradeStatus(url: string, headers: Record<string, string>): Promise<number> {
  return new Promise((resolve, reject) => {
    const ws = new WebSocket(url, ['foxglove.websocket.v1'], { headers });
    ws.once('open', () => {
      resolve(101);
      ws.close();
    });
    ws.once('unexpected-response', (_req, res) => {
      resolve(res.statusCode ?? 0);
      ws.terminate();
    });
    ws.once('error', reject);
  });
}

test('only the Foxglove and Lichtblick apps, file:// pages and clients without an Origin connect; more origins are configurable', async (t) => {
  const live = await serve(t, 0, {
    allowedOrigins: ['file://', 'https://app.foxglove.dev', 'https://viz.example.org'],
  });
  assert.equal(await upgradeStatus(live.url, { origin: 'http://evil.example' }), 403, 'any other web page is refused');
  assert.equal(await upgradeStatus(live.url, { origin: 'http://127.0.0.1:8420' }), 403, 'even one on this machine');
  assert.equal(await upgradeStatus(live.url, {}), 101, 'the desktop apps and scripts send no Origin');
  assert.equal(await upgradeStatus(live.url, { origin: 'https://app.foxglove.dev' }), 101);
  assert.equal(await upgradeStatus(live.url, { origin: 'file://' }), 101);
  assert.equal(await upgradeStatus(live.url, { origin: 'https://viz.example.org' }), 101, 'a configured origin');
  const defaults = await serve(t, 0);
  assert.equal(await upgradeStatus(defaults.url, { origin: 'https://lichtblick-suite.github.io' }), 101);
  assert.equal(await upgradeStatus(defaults.url, { origin: 'https://viz.example.org' }), 403);
});

test('an unsubscribe naming thousands of unknown ids gets one status reply, not one per id', async (t) => {
  const live = await serve(t, 0);
  const client = await FoxgloveTestClient.connect(live.url);
  t.after(() => client.close());
  await client.channels();
  const statuses = (): { op: string; message?: unknown }[] => client.json.filter((m) => m.op === 'status');
  client.ws.send(
    JSON.stringify({ op: 'unsubscribe', subscriptionIds: Array.from({ length: 5000 }, (_, i) => i + 1000) }),
  );
  client.ws.send(
    JSON.stringify({
      op: 'subscribe',
      subscriptions: Array.from({ length: 2000 }, (_, i) => ({ id: i, channelId: 99 })),
    }),
  );
  // (Each request stays under the live view's 64 KiB request limit.) A request after them: its
  // reply comes after theirs on the one ordered connection.
  client.ws.send(JSON.stringify({ op: 'marker' }));
  await until(() => statuses().some((m) => /does not offer 'marker'/.test(String(m.message))), 5000);
  assert.equal(
    statuses().length,
    3,
    `${statuses().length} status replies, the first: ${statuses()
      .slice(0, 3)
      .map((m) => String(m.message).slice(0, 80))
      .join(' | ')}`,
  );
  assert.match(
    String(statuses()[0].message),
    /^There was no subscription 1000, 1001, 1002, 1003, 1004 and 4995 more to end\.$/,
  );
  assert.match(
    String(statuses()[1].message),
    /^Ignored 2000 of 2000 subscriptions: there is no channel 99 .* and 1995 more\.$/,
  );
});

test('a client that stops reading while flooding requests is disconnected once it owes the station its send budget', async (t) => {
  const budget = 256 * 1024;
  // A busy table (/tf about 100 kB a message at 100 Hz) so the client's unread bytes build up fast.
  const live = await serve(t, 1200, { rateHz: 100, sendBudgetBytes: budget });
  const client = await FoxgloveTestClient.connect(live.url);
  t.after(() => client.ws.terminate());
  const channels = await client.channels();
  client.subscribe(1, channels.find((c) => c.topic === '/tf')!.id);
  await client.next(1);
  // It stops reading — its socket is paused, so the kernel's buffers fill and then the station's —
  // and floods unsubscribes of ids that do not exist (each 60 kB, under the 64 kB request limit).
  (client.ws as unknown as { _socket: Socket })._socket.pause();
  const flood = JSON.stringify({
    op: 'unsubscribe',
    subscriptionIds: Array.from({ length: 7000 }, (_, i) => 100_000 + i),
  });
  let sent = 0;
  while (live.clientCounts.droppedSlow === 0 && sent < 2000) {
    await new Promise<void>((resolve) => client.ws.send(flood, () => resolve()));
    sent += 1;
    if (sent % 20 === 0) await new Promise((r) => setTimeout(r, 10));
  }
  await until(() => live.clientCounts.droppedSlow === 1 && live.clientCounts.connected === 0, 30_000);
  t.diagnostic(`disconnected after ${sent} flood requests (${((sent * flood.length) / 1e6).toFixed(1)} MB sent)`);
  // Another viewer is served as before.
  const next = await FoxgloveTestClient.connect(live.url);
  t.after(() => next.close());
  const again = await next.channels();
  next.subscribe(7, again.find((c) => c.topic === '/joint_states')!.id);
  await next.next(7);
});
