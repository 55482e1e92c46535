/**
 * The send budget the station's event stream (and the Foxglove live view) keeps per WebSocket
 * client, over a real loopback WebSocket: a client that stops reading is disconnected once its
 * unsent bytes would pass the budget — the station's buffer for it never grows past that — while a
 * client that reads the same traffic stays connected.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import type { AddressInfo, Socket } from 'node:net';
import { WebSocket, WebSocketServer } from 'ws';
import { sendWithinBudget } from '../../src/server/send-budget.js';

const BUDGET = 256 * 1024;
const MESSAGE = 'x'.repeat(16 * 1024);

/** A server on loopback and one client connected to it; the server side's socket is handed back. */
async function pair(t: test.TestContext): Promise<{ server: WebSocket; client: WebSocket }> {
  const wss = new WebSocketServer({ host: '127.0.0.1', port: 0 });
  await new Promise<void>((resolve) => wss.once('listening', () => resolve()));
  const accepted = new Promise<WebSocket>((resolve) => wss.once('connection', (ws) => resolve(ws)));
  const client = new WebSocket(`ws://127.0.0.1:${(wss.address() as AddressInfo).port}`);
  // The server's close waits for its connections: end both sides first.
  t.after(async () => {
    client.terminate();
    for (const ws of wss.clients) ws.terminate();
    await new Promise<void>((resolve) => wss.close(() => resolve()));
  });
  await new Promise<void>((resolve, reject) => {
    client.once('open', () => resolve());
    client.once('error', reject);
  });
  return { server: await accepted, client };
}

/** Sends MESSAGE until the budget drops the client or `count` messages went; yields so the socket drains what it can. */
async function flood(
  ws: WebSocket,
  count: number,
  yieldEvery = 16,
): Promise<{ sent: number; dropped: boolean; maxBuffered: number }> {
  let dropped = false;
  let maxBuffered = 0;
  let sent = 0;
  for (; sent < count && !dropped; sent++) {
    if (!sendWithinBudget(ws, MESSAGE, BUDGET, () => (dropped = true))) break;
    maxBuffered = Math.max(maxBuffered, ws.bufferedAmount);
    if (sent % yieldEvery === yieldEvery - 1) await new Promise((r) => setImmediate(r));
  }
  return { sent, dropped, maxBuffered };
}

test('a client that stops reading is disconnected at its send budget; the buffer never passes it', {
  timeout: 15_000,
}, async (t) => {
  const { server, client } = await pair(t);
  (client as unknown as { _socket: Socket })._socket.pause();
  const closed = new Promise<void>((resolve) => server.once('close', () => resolve()));
  // 64 MiB offered: far past what the kernel's loopback buffers and the budget hold together.
  const r = await flood(server, 4096);
  assert.ok(
    r.dropped,
    `still connected after ${r.sent} messages (${((r.sent * MESSAGE.length) / 2 ** 20).toFixed(0)} MiB)`,
  );
  assert.ok(r.maxBuffered <= BUDGET, `the station buffered ${r.maxBuffered} bytes for it, budget ${BUDGET}`);
  await closed;
  assert.equal(sendWithinBudget(server, MESSAGE, BUDGET), false, 'nothing more is sent to a dropped client');
});

test('a client that reads keeps its connection through the same traffic', { timeout: 15_000 }, async (t) => {
  const { server, client } = await pair(t);
  let received = 0;
  client.on('message', () => received++);
  const r = await flood(server, 512, 4);
  assert.equal(r.dropped, false);
  await new Promise<void>((resolve) => {
    const check = (): void => void (received === r.sent ? resolve() : setTimeout(check, 5));
    check();
  });
  assert.equal(server.readyState, server.OPEN);
});
