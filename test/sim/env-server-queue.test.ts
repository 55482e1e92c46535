import { test } from 'node:test';
import assert from 'node:assert/strict';
import WebSocket from 'ws';
import { Redis } from 'ioredis';
import { NdArray, packOpenpi, unpackOpenpi, type WireValue } from '../../src/policy/openpi/msgpack-numpy.js';
import { startEnvServer } from '../../src/sim/env/env-server.js';
import { runEnvWorkerHost } from '../../src/sim/env/env-worker-host.js';
import { SimEnv } from '../../src/sim/env/sim-env.js';
import { parseQueueUrl } from '../../src/sim/queue/connection.js';
import { idleSlotsKey } from '../../src/sim/env/env-queue-keys.js';
import { SORT_FROM_TOTE } from '../../src/tasks/index.js';
import { HOME_START_POSITION } from '../../src/sim/scene.js';
import { startRedisServer } from '../helpers/redis-server.js';

// serve-env --queue against a real redis-server: the environments run on an env worker host's
// threads (here in this process, reached only through Redis), step for step the same as the sim
// in-process; a closed server's slot is offered again and a second server claims it; a host
// that stops mid-connection costs the trainer one error, not a hang.

type Msg = Record<string, WireValue>;

async function open(url: string): Promise<{ ask(m: Record<string, unknown>): Promise<Msg>; close(): Promise<void> }> {
  const ws = new WebSocket(url);
  const inbox: Msg[] = [];
  let waiting: ((m: Msg) => void) | undefined;
  ws.on('message', (d: Buffer) => {
    const m = unpackOpenpi(new Uint8Array(d)) as Msg;
    if (waiting) {
      const w = waiting;
      waiting = undefined;
      w(m);
    } else inbox.push(m);
  });
  const closed = new Promise<void>((resolve) => ws.on('close', () => resolve()));
  await new Promise((resolve, reject) => {
    ws.once('open', resolve);
    ws.once('error', reject);
  });
  const next = (): Promise<Msg> =>
    inbox.length > 0 ? Promise.resolve(inbox.shift()!) : new Promise((resolve) => (waiting = resolve));
  assert.equal((await next()).type, 'hello');
  return {
    ask(m) {
      ws.send(packOpenpi(m as WireValue));
      return next();
    },
    async close() {
      ws.close();
      await closed;
    },
  };
}

/** Left shoulder turned and lowered into the tote, sweeping: moves the arm and the parts. */
function sweep(n: number, k: number): Float32Array {
  const a = new Float32Array(n * 14);
  for (let i = 0; i < n; i++) {
    a.set(HOME_START_POSITION, i * 14);
    a[i * 14 + 0] = Math.sin(k / 10) * 0.6;
    a[i * 14 + 1] = 1.2;
    a[i * 14 + 2] = 0.6;
  }
  return a;
}

test('serve-env --queue: envs step on an env worker host through Redis exactly as in-process; a freed slot is claimed again; a stopped host is one error', async () => {
  const redis = await startRedisServer();
  const address = parseQueueUrl(redis.url);
  const stopHost = new AbortController();
  const hostLog: string[] = [];
  const ended: (() => void)[] = [];
  const host = runEnvWorkerHost({
    address,
    slots: 1,
    signal: stopHost.signal,
    log: (l) => {
      hostLog.push(l);
      if (l.includes('session ended')) ended.shift()?.();
    },
  });
  const peek = new Redis(redis.url);
  try {
    const serverLog: string[] = [];
    const server = await startEnvServer({
      task: SORT_FROM_TOTE,
      envs: 1,
      port: 0,
      workers: 1,
      controlHz: 50,
      queue: address,
      log: (l) => serverLog.push(l),
    });
    const served: number[][] = [];
    const rewards: number[] = [];
    try {
      const c = await open(server.url);
      const reset = await c.ask({ type: 'reset', seed: 11, tier: 1 });
      assert.equal(reset.type, 'reset', JSON.stringify(reset));
      served.push(Array.from(((reset.obs as Msg).state as NdArray).toFloat32()));
      for (let k = 0; k < 15; k++) {
        const s = await c.ask({ type: 'step', actions: NdArray.float32(sweep(1, k), [1, 14]) });
        assert.equal(s.type, 'step', JSON.stringify(s));
        served.push(Array.from(((s.obs as Msg).state as NdArray).toFloat32()));
        rewards.push(...Array.from((s.reward as NdArray).toFloat32()));
      }
      await c.close();
    } finally {
      const slotFree = new Promise<void>((r) => ended.push(r));
      await server.close();
      await slotFree;
    }
    assert.equal(
      hostLog.filter((l) => /serving sort-from-tote/.test(l)).length,
      1,
      `the host's slot served the server:\n${hostLog.join('\n')}`,
    );
    assert.equal(serverLog.filter((l) => /claimed env worker/.test(l)).length, 1);

    // The same seeds and actions in this process.
    const env = new SimEnv({ task: SORT_FROM_TOTE, controlHz: 50 });
    const expected: number[][] = [Array.from((await env.reset({ seed: 11, tier: 1 })).state)];
    const expectedRewards: number[] = [];
    for (let k = 0; k < 15; k++) {
      const r = env.step(sweep(1, k));
      expected.push(Array.from(r.state));
      expectedRewards.push(r.reward);
    }
    env.free();
    assert.deepEqual(served, expected, "every observation is the in-process sim's, to the bit");
    assert.deepEqual(rewards, expectedRewards);
    assert.notDeepEqual(served[0], served[15], 'the arms moved');

    // Closed, the slot is offered again: a second server claims it; the host then stops mid-connection.
    const second = await startEnvServer({
      task: SORT_FROM_TOTE,
      envs: 1,
      port: 0,
      workers: 1,
      controlHz: 50,
      queue: address,
    });
    try {
      const c = await open(second.url);
      assert.equal((await c.ask({ type: 'reset', seed: 3, tier: 1 })).type, 'reset');
      stopHost.abort();
      const s = await c.ask({ type: 'step', actions: NdArray.float32(sweep(1, 0), [1, 14]) });
      assert.equal(s.type, 'error');
      assert.match(String(s.message), /env worker failed: its env worker on .* was stopped/);
      await c.close();
    } finally {
      await second.close();
    }
    assert.deepEqual(await host, { sessions: 2 });
    assert.equal(await peek.llen(idleSlotsKey()), 0, 'a stopped host takes its slots off the list');
  } finally {
    stopHost.abort();
    await host.catch(() => undefined);
    peek.disconnect();
    await redis.stop();
  }
});
