import { test } from 'node:test';
import assert from 'node:assert/strict';
import WebSocket from 'ws';
import { NdArray, packOpenpi, unpackOpenpi, type WireValue } from '../../src/policy/openpi/msgpack-numpy.js';
import type { RunningEnvServer } from '../../src/sim/env/env-server.js';
import { importAsBin } from '../helpers/cli.js';
import { SORT_FROM_TOTE } from '../../src/tasks/index.js';
import { HOME_START_POSITION } from '../../src/sim/scene.js';

// The server's sim threads start from build/ when it is fresh, as under bin/tandem.js: ≈ 1 CPU-s less each.
const { startEnvServer } = await importAsBin(
  'src/sim/env/env-server.js',
  () => import('../../src/sim/env/env-server.js'),
);

// The env server over a real WebSocket: reset → obs, steps with autoreset and the task's events,
// the same run for the same seed, and each kind of bad input one error message on its own socket
// while another client's episode goes on.

type Msg = Record<string, WireValue>;

class Client {
  private readonly inbox: Msg[] = [];
  private waiting: ((m: Msg) => void) | undefined;
  closed: Promise<number>;
  private constructor(readonly ws: WebSocket) {
    ws.on('message', (d: Buffer) => {
      const m = unpackOpenpi(new Uint8Array(d)) as Msg;
      if (this.waiting) {
        const w = this.waiting;
        this.waiting = undefined;
        w(m);
      } else this.inbox.push(m);
    });
    this.closed = new Promise((resolve) => ws.on('close', (code) => resolve(code)));
  }
  static async open(url: string): Promise<{ client: Client; hello: Msg }> {
    const ws = new WebSocket(url);
    const client = new Client(ws);
    await new Promise((resolve, reject) => {
      ws.once('open', resolve);
      ws.once('error', reject);
    });
    return { client, hello: await client.next() };
  }
  /** Every message received and not yet read (after the socket closed: all it got). */
  drain(): Msg[] {
    return this.inbox.splice(0);
  }
  next(): Promise<Msg> {
    const m = this.inbox.shift();
    if (m) return Promise.resolve(m);
    return new Promise((resolve) => (this.waiting = resolve));
  }
  send(m: Record<string, unknown>): void {
    this.ws.send(packOpenpi(m as WireValue));
  }
  async ask(m: Record<string, unknown>): Promise<Msg> {
    this.send(m);
    return this.next();
  }
}

const home = (n: number): NdArray => {
  const a = new Float32Array(n * 14);
  for (let i = 0; i < n; i++) a.set(HOME_START_POSITION, i * 14);
  return NdArray.float32(a, [n, 14]);
};
/** Left shoulder turned and lowered into the tote, sweeping: knocks parts about. */
const sweep = (n: number, k: number): NdArray => {
  const a = new Float32Array(n * 14);
  for (let i = 0; i < n; i++) {
    a.set(HOME_START_POSITION, i * 14);
    a[i * 14 + 0] = Math.sin(k / 10) * 0.6;
    a[i * 14 + 1] = 1.2;
    a[i * 14 + 2] = 0.6;
  }
  return NdArray.float32(a, [n, 14]);
};
const floats = (v: WireValue): number[] => Array.from((v as NdArray).toFloat32());

async function withServer(
  opts: { envs: number; idleSeconds?: number; maxUnreadBytes?: number; onLog?: (line: string) => void },
  body: (s: RunningEnvServer, logs: string[]) => Promise<void>,
): Promise<void> {
  const logs: string[] = [];
  const log = (l: string): void => {
    logs.push(l);
    opts.onLog?.(l);
  };
  const server = await startEnvServer({
    task: SORT_FROM_TOTE,
    envs: opts.envs,
    port: 0,
    workers: 1,
    controlHz: 50,
    idleSeconds: opts.idleSeconds,
    maxUnreadBytes: opts.maxUnreadBytes,
    log,
  });
  try {
    await body(server, logs);
  } finally {
    await server.close();
  }
}

test('reset then steps: obs [N,14], reward [N], flags [N], autoreset with the ended episode in info; the same seed and actions give the same run', async () => {
  await withServer({ envs: 2 }, async (server) => {
    const runs: { obs: number[][]; rewards: number[]; ended: WireValue[] }[] = [];
    for (let run = 0; run < 2; run++) {
      const { client, hello } = await Client.open(server.url);
      assert.equal(hello.type, 'hello');
      assert.equal(hello.envs, 2);
      assert.equal(hello.action_dim, 14);
      const reset = await client.ask({ type: 'reset', seed: 7, tier: 1, options: { episode_seconds: 0.2 } });
      assert.equal(reset.type, 'reset', JSON.stringify(reset));
      const state = (reset.obs as Msg).state as NdArray;
      assert.deepEqual(state.shape, [2, 14]);
      const episodes = (reset.info as Msg).episode as Msg[];
      assert.deepEqual(
        episodes.map((e) => [e.seed, e.tier, e.parts, e.episode_steps]),
        [
          [7, 1, 4, 10],
          [8, 1, 4, 10],
        ],
      );
      const obs: number[][] = [floats(state)];
      const rewards: number[] = [];
      const ended: WireValue[] = [];
      for (let k = 0; k < 12; k++) {
        const s = await client.ask({ type: 'step', actions: sweep(2, k) });
        assert.equal(s.type, 'step', JSON.stringify(s));
        assert.deepEqual((s.reward as NdArray).shape, [2]);
        assert.equal((s.terminated as NdArray).dtype, '|b1');
        obs.push(floats((s.obs as Msg).state));
        rewards.push(...floats(s.reward));
        const trunc = floats(s.truncated);
        const final = (s.info as Msg).final as WireValue[];
        if (k === 9) {
          assert.deepEqual(trunc, [1, 1], 'the 10th step of a 0.2 s episode at 50 Hz is its last');
          ended.push(...final);
          assert.equal(
            ((final[0] as Msg).next as Msg).seed,
            7 + 1_000_003,
            'the next episode of env 0 has the next seed of its stream',
          );
        } else {
          assert.deepEqual(trunc, [0, 0]);
          assert.deepEqual(final, [null, null]);
        }
      }
      runs.push({ obs, rewards, ended });
      client.ws.close();
      await client.closed;
    }
    assert.deepEqual(runs[0], runs[1], 'two connections with the same seed and actions see the same run');
    assert.notDeepEqual(runs[0].obs[0], runs[0].obs[5], 'the arm moved');
  });
});

test('bad input: one error message each, the connection stays usable, and another client stepping meanwhile is unaffected', async () => {
  await withServer({ envs: 2 }, async (server, logs) => {
    const { client: other } = await Client.open(server.url);
    const { client: bad } = await Client.open(server.url);
    assert.equal((await other.ask({ type: 'reset', seed: 3, tier: 1 })).type, 'reset');
    const otherSteps: Promise<Msg>[] = [];
    const errors: string[] = [];
    const expectError = async (m: Record<string, unknown>, pattern: RegExp): Promise<void> => {
      otherSteps.push(other.ask({ type: 'step', actions: home(2) }));
      const a = await bad.ask(m);
      assert.equal(a.type, 'error', `${JSON.stringify(m).slice(0, 80)} → ${JSON.stringify(a).slice(0, 120)}`);
      assert.match(a.message as string, pattern);
      errors.push(a.message as string);
      await Promise.all(otherSteps.splice(0));
    };
    await expectError({ type: 'step', actions: home(2) }, /step before reset: send a reset first/);
    await expectError(
      { type: 'reset', seed: 1, tier: 9 },
      /Unknown tier 9 for sort-from-tote; its tiers are 1, 2, 3, 4, 5/,
    );
    assert.equal((await bad.ask({ type: 'reset', seed: 1, tier: 1 })).type, 'reset');
    await expectError(
      { type: 'step', actions: home(3) },
      /"actions" has shape \[3, 14\]; this server runs 2 environments/,
    );
    await expectError({ type: 'step', actions: NdArray.float32(new Float32Array(28), [28]) }, /shape \[28\]/);
    const nan = new Float32Array(28);
    nan[17] = Number.NaN;
    await expectError(
      { type: 'step', actions: NdArray.float32(nan, [2, 14]) },
      /non-finite value \(NaN\) at env 1, entry 3; nothing was stepped/,
    );
    await expectError({ type: 'step' }, /step needs "actions"/);
    await expectError({ type: 'jump' }, /Unknown request type "jump"/);
    await expectError({ type: 'reset', seed: -1 }, /reset needs "seed"/);
    // A value named in an error is described in a few words, never echoed: a 1 MB field must not come back (and into the server's log) as a 1–6 MB "sentence".
    const big = new Uint8Array(2 ** 20).fill(7);
    const long = 'x'.repeat(100_000);
    await expectError(
      { type: 'reset', seed: big },
      /^reset needs "seed", a whole number from 0 to 2\^32, not 1048576 raw bytes\.$/,
    );
    await expectError({ type: 'reset', seed: 1, tier: big }, /^Unknown tier 1048576 raw bytes for sort-from-tote/);
    await expectError(
      { type: 'reset', seed: 1, options: { episode_seconds: long } },
      /^"episode_seconds" must be from 0\.02 to 3600 s, not "x{40}…"\.$/,
    );
    await expectError(
      { type: 'reset', seed: 1, options: { [long]: 1 } },
      /^Unknown reset option "x{40}…"; the one option is "episode_seconds"\.$/,
    );
    await expectError({ type: long }, /^Unknown request type "x{40}…"; send "reset" or "step"\.$/);
    await expectError(
      {
        type: 'reset',
        seed: 1,
        layout: {
          index: 0,
          tier: 1,
          fixtures: [],
          objects: [{ id: 'x', kind: 'bottle-500ml', posture: 'upright', pose: { x: 0, y: 0, yawRad: 0 } }],
        },
      },
      /bottle-500ml/,
    );
    bad.ws.send('hello', { binary: false });
    const text = await bad.next();
    assert.match(text.message as string, /Expected a binary msgpack message/);
    // Two requests without waiting: the second is refused, the first answered.
    bad.send({ type: 'step', actions: home(2) });
    bad.send({ type: 'step', actions: home(2) });
    const answers = [await bad.next(), await bad.next()];
    assert.deepEqual(answers.map((a) => a.type).sort(), ['error', 'step']);
    assert.match(answers.find((a) => a.type === 'error')!.message as string, /before the answer to the previous one/);
    // The bad client's envs still work after all that.
    assert.equal((await bad.ask({ type: 'step', actions: home(2) })).type, 'step');
    // A client that disconnects mid-episode: the server frees its envs and goes on.
    bad.ws.terminate();
    await bad.closed;
    const after = await other.ask({ type: 'step', actions: home(2) });
    assert.equal(after.type, 'step');
    assert.ok(
      logs.some((l) => /disconnected mid-episode; its 2 environments were freed/.test(l)),
      logs.join('\n'),
    );
    assert.equal(
      errors.every((e) => !e.includes('\n') && !/at .*\.ts:\d+/.test(e)),
      true,
      'errors are one sentence, no stack',
    );
    assert.ok(
      errors.every((e) => e.length < 300),
      `errors are short: ${errors.map((e) => e.length).join(', ')}`,
    );
    assert.ok(
      logs.every((l) => l.length < 400),
      'log lines are short',
    );
    other.ws.close();
    await other.closed;
  });
});

test('a client that goes quiet past the idle limit gets one error message and is closed; the server serves the next; a browser page is refused', async () => {
  await withServer({ envs: 1, idleSeconds: 0.3 }, async (server, logs) => {
    // Any web page open in a browser on this machine could reach 127.0.0.1: it sends an Origin, a trainer does not.
    const page = new WebSocket(server.url, { headers: { origin: 'https://evil.example' } });
    const refused = await new Promise<number>((resolve) =>
      page.once('unexpected-response', (_req, res) => resolve(res.statusCode ?? 0)).once('open', () => resolve(101)),
    );
    page.on('error', () => {});
    page.terminate();
    assert.equal(refused, 403, 'a browser page was let in');
    assert.ok(
      logs.some((l) =>
        /refused a connection .*a page from https:\/\/evil\.example may not use this env server/.test(l),
      ),
      logs.join('\n'),
    );
    const { client } = await Client.open(server.url);
    assert.equal((await client.ask({ type: 'reset', seed: 1, tier: 1 })).type, 'reset');
    const msg = await client.next();
    assert.equal(msg.type, 'error');
    assert.match(msg.message as string, /closed this connection: no request for 0\.3 s/);
    assert.equal(await client.closed, 1008);
    const { client: next } = await Client.open(server.url);
    assert.equal((await next.ask({ type: 'reset', seed: 1, tier: 1 })).type, 'reset');
    next.ws.close();
    await next.closed;
  });
});

// ≈ 5 CPU-s: the kernel takes a few MiB of a non-reading client's answers before any stay unread
// in the server, so the slow client sends tens of thousands of small requests, each refused
// without touching the sim (NaN actions), while the other client steps once per round of them.
test('a slow client that stops reading its answers gets one error message and is closed when they pile up; its envs are freed; another client stepping meanwhile is unaffected', async () => {
  let dropped: () => void = () => {};
  const droppedLogged = new Promise<void>((resolve) => (dropped = resolve));
  await withServer(
    { envs: 1, maxUnreadBytes: 256 * 1024, onLog: (l) => /closed this connection: it left/.test(l) && dropped() },
    async (server, logs) => {
      const { client: other } = await Client.open(server.url);
      const { client: slow } = await Client.open(server.url);
      assert.equal((await other.ask({ type: 'reset', seed: 3, tier: 1 })).type, 'reset');
      assert.equal((await slow.ask({ type: 'reset', seed: 4, tier: 1 })).type, 'reset');
      slow.ws.pause();
      let stopped = false;
      void droppedLogged.then(() => (stopped = true));
      const nan = new Float32Array(14).fill(Number.NaN);
      const request = packOpenpi({ type: 'step', actions: NdArray.float32(nan, [1, 14]) });
      let rounds = 0;
      while (!stopped) {
        // ≈ 20 MiB of refusals: far past what the kernel buffers, so a server without the limit fails here instead of looping on.
        if (rounds === 200)
          assert.fail(
            `200 000 answers left unread and the server has not closed the connection: ${logs.slice(-2).join(' | ')}`,
          );
        for (let k = 0; k < 1000; k++) slow.ws.send(request);
        const s = await other.ask({ type: 'step', actions: home(1) });
        assert.equal(s.type, 'step', JSON.stringify(s).slice(0, 200));
        rounds += 1;
      }
      slow.ws.resume();
      assert.equal(await slow.closed, 1008);
      // What piled up: one refusal per request, then one error that says why it was closed.
      const got = slow.drain();
      assert.ok(got.slice(0, -1).every((m) => m.type === 'error' && /non-finite value/.test(m.message as string)));
      assert.match(
        got[got.length - 1].message as string,
        /^The env server closed this connection: it left \d+ KiB of answers unread \(at most 256 KiB\); read each answer before sending the next request\.$/,
      );
      assert.ok(
        logs.some((l) => /c2: The env server closed this connection: .*; its 1 environments were freed/.test(l)),
        logs.slice(-3).join('\n'),
      );
      assert.ok(rounds > 1, `the other client stepped during the flood (${rounds} rounds)`);
      assert.equal(
        (await other.ask({ type: 'step', actions: home(1) })).type,
        'step',
        'the other client steps on after the slow one was closed',
      );
      other.ws.close();
      await other.closed;
    },
  );
});
