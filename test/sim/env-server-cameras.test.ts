import { test } from 'node:test';
import assert from 'node:assert/strict';
import WebSocket from 'ws';
import { NdArray, packOpenpi, unpackOpenpi, type WireValue } from '../../src/policy/openpi/msgpack-numpy.js';
import { importAsBin } from '../helpers/cli.js';
import { DEFAULT_CAMERA_CALIBRATION } from '../../src/sim/render/camera-calibration.js';
import { HOME_START_POSITION } from '../../src/sim/scene.js';
import { SORT_FROM_TOTE } from '../../src/tasks/index.js';

// The server's sim threads start from build/ when it is fresh, as under bin/tandem.js: ≈ 1 CPU-s less each.
const { startEnvServer } = await importAsBin(
  'src/sim/env/env-server.js',
  () => import('../../src/sim/env/env-server.js'),
);

// `serve-env --cameras`: every observation carries each camera's images, uint8 [N, H, W, 3], drawn
// by the worker's headless chromium from the env's own scene — after an autoreset, the next
// episode's first view. Cost ≈ 4 CPU-s (one browser start, ≈ 10 renders of 224 px).

type Msg = Record<string, WireValue>;

async function open(
  url: string,
): Promise<{ ask(m: Record<string, unknown>): Promise<Msg>; hello: Msg; close(): Promise<void> }> {
  const ws = new WebSocket(url);
  const inbox: Msg[] = [];
  const waiting: ((m: Msg) => void)[] = [];
  ws.on('message', (d: Buffer) => {
    const m = unpackOpenpi(new Uint8Array(d)) as Msg;
    const w = waiting.shift();
    if (w) w(m);
    else inbox.push(m);
  });
  const next = (): Promise<Msg> =>
    inbox.length > 0 ? Promise.resolve(inbox.shift()!) : new Promise((resolve) => waiting.push(resolve));
  await new Promise((resolve, reject) => ws.once('open', resolve).once('error', reject));
  const hello = await next();
  return {
    hello,
    ask(m) {
      ws.send(packOpenpi(m as WireValue));
      return next();
    },
    close: () => new Promise((resolve) => ws.once('close', () => resolve()).close()),
  };
}

const images = (m: Msg): NdArray => ((m.obs as Msg).images as Msg).cam_high as NdArray;
/** Env i's image bytes of a [N, H, W, 3] array. */
const envImage = (a: NdArray, i: number): Buffer => {
  const size = a.shape[1] * a.shape[2] * 3;
  return Buffer.from(a.data.subarray(i * size, (i + 1) * size));
};
/** The left arm swung down over the tote: the overhead camera sees it move. */
const reach = (n: number): NdArray => {
  const a = new Float32Array(n * 14);
  for (let i = 0; i < n; i++) {
    a.set(HOME_START_POSITION, i * 14);
    a[i * 14] = 0.5;
    a[i * 14 + 1] = 1.2;
    a[i * 14 + 2] = 0.6;
  }
  return NdArray.float32(a, [n, 14]);
};

test("serve-env with cameras: obs.images per camera [N, H, W, 3] uint8 of each env's own scene, the same bytes for the same seed, and after an autoreset the next episode's first view", {
  timeout: 120_000,
}, async () => {
  const server = await startEnvServer({
    task: SORT_FROM_TOTE,
    envs: 2,
    port: 0,
    workers: 1,
    controlHz: 50,
    cameras: ['cam_high'],
  });
  try {
    const a = await open(server.url);
    assert.deepEqual(a.hello.cameras, ['cam_high']);
    const reset = await a.ask({ type: 'reset', seed: 7, tier: 1, options: { episode_seconds: 0.1 } });
    assert.equal(reset.type, 'reset', JSON.stringify(reset).slice(0, 200));
    const first = images(reset);
    const cam = DEFAULT_CAMERA_CALIBRATION.cameras.cam_high.intrinsics;
    assert.equal(first.dtype, '|u1');
    assert.deepEqual(first.shape, [2, cam.heightPx, cam.widthPx, 3]);
    assert.notDeepEqual(
      envImage(first, 0),
      envImage(first, 1),
      'two envs (seeds 7 and 8, two layouts) show two scenes',
    );
    assert.ok(new Set(envImage(first, 0)).size > 20, 'the image shows a scene, not a blank frame');
    let last: Msg | undefined;
    for (let k = 0; k < 5; k++) {
      last = await a.ask({ type: 'step', actions: reach(2) });
      assert.equal(last.type, 'step', JSON.stringify(last).slice(0, 200));
      assert.deepEqual(images(last).shape, [2, cam.heightPx, cam.widthPx, 3]);
      if (k === 3) assert.notDeepEqual(envImage(images(last), 0), envImage(first, 0), 'the arm moved in the picture');
    }
    // The 5th step of a 0.1 s episode ended it: obs is the next episode's (seed 7 + 1 000 003) first view.
    assert.deepEqual(Array.from((last!.truncated as NdArray).data), [1, 1]);
    const b = await open(server.url);
    const again = await b.ask({ type: 'reset', seed: 7, tier: 1 });
    assert.deepEqual(envImage(images(again), 0), envImage(first, 0), 'the same seed draws the same bytes');
    const nextEpisode = await b.ask({ type: 'reset', seed: 7 + 1_000_003, tier: 1 });
    assert.deepEqual(
      envImage(images(last!), 0),
      envImage(images(nextEpisode), 0),
      "after an autoreset the images are the next episode's first view",
    );
    await a.close();
    await b.close();
  } finally {
    await server.close();
  }
});
