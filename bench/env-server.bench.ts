/**
 * Env-server throughput: sort-from-tote environment steps per second per core at the policy rate
 * (50 Hz: one env step = 20 ms of sim = 5 physics steps), with 1 and 2 worker threads, beside a
 * same-run baseline of one SimEnv stepped in-process (no threads, no socket). The breakdown
 * names the bottleneck: physics alone (the rig holding, no task events), the task events
 * (sightings: regions and finger contacts), and what the server adds (msgpack, WebSocket, thread
 * hops).
 *
 *   npm run bench -- env-server
 *
 * Sizes (env): ENV_BENCH_ENVS (envs per connection, default 8), ENV_BENCH_STEPS (steps per row,
 * default 300), ENV_BENCH_TIER (default 3: 15 parts in the tote), ENV_BENCH_MAX_WORKERS (the "N
 * workers" row, default max(4, cores): more threads than cores shows where the cores run out),
 * ENV_BENCH_CAMERA_STEPS (steps of the rows with cam_high drawn for every env, default 40; 0 skips
 * them). Camera rows count chromium's CPU only through its wall time: the browser is another
 * process, so their steps/s per core is this process's share and the wall rate is what a trainer
 * gets.
 * "Per core" = env steps ÷ CPU seconds of this process, all its threads (process.cpuUsage), so a
 * busy machine does not flatter or punish it; wall-clock rates are printed too.
 */
import os from 'node:os';
import { performance } from 'node:perf_hooks';
import WebSocket from 'ws';
import { NdArray, packOpenpi, unpackOpenpi, type WireValue } from '../src/policy/openpi/msgpack-numpy.js';
import { SORT_FROM_TOTE } from '../src/tasks/index.js';
import { startEnvServer } from '../src/sim/env/env-server.js';
import { SimEnv } from '../src/sim/env/sim-env.js';
import { HOME_START_POSITION } from '../src/sim/scene.js';
import type { CameraName } from '../src/policy/contract.js';

const ENVS = Number(process.env.ENV_BENCH_ENVS ?? 8);
const STEPS = Number(process.env.ENV_BENCH_STEPS ?? 300);
const TIER = Number(process.env.ENV_BENCH_TIER ?? 3);
const MAX_WORKERS = Number(process.env.ENV_BENCH_MAX_WORKERS ?? Math.max(4, os.cpus().length));
const CAMERA_STEPS = Number(process.env.ENV_BENCH_CAMERA_STEPS ?? 40);
const HZ = 50;

/** Seeded actions: the left arm sweeping through the tote (parts move, events happen), the right holding. */
function actionsAt(k: number, n: number): Float32Array {
  const a = new Float32Array(n * 14);
  for (let i = 0; i < n; i++) {
    a.set(HOME_START_POSITION, i * 14);
    a[i * 14] = Math.sin((k + 7 * i) / 15) * 0.6;
    a[i * 14 + 1] = 1.1;
    a[i * 14 + 2] = 0.7;
  }
  return a;
}

interface Row {
  readonly name: string;
  readonly envSteps: number;
  readonly wallS: number;
  readonly cpuS: number;
}
const rows: Row[] = [];
function measure<T>(name: string, envSteps: number, body: () => Promise<T>): Promise<T> {
  return (async () => {
    const c0 = process.cpuUsage();
    const t0 = performance.now();
    const out = await body();
    const wallS = (performance.now() - t0) / 1000;
    const c = process.cpuUsage(c0);
    const cpuS = (c.user + c.system) / 1e6;
    rows.push({ name, envSteps, wallS, cpuS });
    console.log(
      `${name.padEnd(44)} ${(envSteps / cpuS).toFixed(0).padStart(7)} steps/s/core ${(envSteps / wallS).toFixed(0).padStart(7)} steps/s wall  (${envSteps} steps, ${cpuS.toFixed(1)} CPU s, ${wallS.toFixed(1)} s)`,
    );
    return out;
  })();
}

/** One in-process env: physics only (sightings skipped by stepping the rig directly) and the full step. */
async function inProcess(): Promise<void> {
  const env = new SimEnv({ task: SORT_FROM_TOTE, controlHz: HZ });
  await env.reset({ seed: 1, tier: TIER });
  const steps = STEPS * 2;
  await measure('in-process SimEnv.step (physics + events)', steps, async () => {
    for (let k = 0; k < steps; k++) {
      const r = env.step(actionsAt(k, 1));
      if (r.terminated || r.truncated) await env.reset({ seed: 1 + k, tier: TIER });
    }
  });
  await env.reset({ seed: 1, tier: TIER });
  await measure('in-process physics only (no events)', steps, async () => {
    for (let k = 0; k < steps; k++) env.stepPhysicsOnly(actionsAt(k, 1));
  });
  env.free();
}

async function served(workers: number, cameras: readonly CameraName[] = []): Promise<Row | undefined> {
  const steps = cameras.length > 0 ? CAMERA_STEPS : STEPS;
  if (steps === 0) return undefined;
  const server = await startEnvServer({ task: SORT_FROM_TOTE, envs: ENVS, port: 0, workers, controlHz: HZ, cameras });
  try {
    const ws = new WebSocket(server.url);
    const inbox: ((m: Record<string, WireValue>) => void)[] = [];
    ws.on('message', (d: Buffer) => inbox.shift()?.(unpackOpenpi(new Uint8Array(d)) as Record<string, WireValue>));
    const next = (): Promise<Record<string, WireValue>> => new Promise((resolve) => inbox.push(resolve));
    const hello = next();
    await new Promise((resolve) => ws.once('open', resolve));
    await hello;
    const ask = (m: Record<string, unknown>): Promise<Record<string, WireValue>> => {
      const p = next();
      ws.send(packOpenpi(m as WireValue));
      return p;
    };
    const reset = await ask({ type: 'reset', seed: 1, tier: TIER });
    if (reset.type !== 'reset') throw new Error(JSON.stringify(reset));
    // The first step draws in a fresh browser (start-up): measured rows start after it.
    if (cameras.length > 0) await ask({ type: 'step', actions: NdArray.float32(actionsAt(0, ENVS), [ENVS, 14]) });
    await measure(
      `server, ${ENVS} envs, ${workers} worker${workers === 1 ? '' : 's'}${cameras.length > 0 ? `, ${cameras.join('+')}` : ''}`,
      ENVS * steps,
      async () => {
        for (let k = 0; k < steps; k++) {
          const s = await ask({ type: 'step', actions: NdArray.float32(actionsAt(k, ENVS), [ENVS, 14]) });
          if (s.type !== 'step') throw new Error(JSON.stringify(s));
        }
      },
    );
    ws.close();
    return rows[rows.length - 1];
  } finally {
    await server.close();
  }
}

console.log(
  `sort-from-tote tier ${TIER}, ${HZ} Hz policy rate; ${os.cpus().length} cores, load ${os
    .loadavg()
    .map((l) => l.toFixed(1))
    .join(' ')}`,
);
await inProcess();
const [full, physics] = rows;
const one = (await served(1))!;
const two = os.cpus().length >= 2 ? await served(2) : undefined;
const many = MAX_WORKERS > 2 ? await served(MAX_WORKERS) : undefined;
const camOne = await served(1, ['cam_high']);
const camTwo = os.cpus().length >= 2 ? await served(2, ['cam_high']) : undefined;
const eventsShare = 1 - full.envSteps / full.cpuS / (physics.envSteps / physics.cpuS);
console.log(
  `\nper env step: ${((full.cpuS / full.envSteps) * 1000).toFixed(2)} ms CPU in-process, of which physics ${((physics.cpuS / physics.envSteps) * 1000).toFixed(2)} ms and task events ${(eventsShare * 100).toFixed(0)} %`,
);
console.log(
  `server overhead per env step (1 worker): ${((one.cpuS / one.envSteps - full.cpuS / full.envSteps) * 1000).toFixed(2)} ms CPU (msgpack, socket, thread hops)`,
);
if (two)
  console.log(
    `2 workers vs 1: ${(two.envSteps / two.wallS / (one.envSteps / one.wallS)).toFixed(2)}× wall throughput, ${(two.envSteps / two.cpuS / (one.envSteps / one.cpuS)).toFixed(2)}× per core`,
  );
if (many)
  console.log(
    `${MAX_WORKERS} workers vs 2 on ${os.cpus().length} cores: ${(many.envSteps / many.wallS / ((two ?? one).envSteps / (two ?? one).wallS)).toFixed(2)}× wall throughput`,
  );
if (camOne)
  console.log(
    `with cam_high (224 px) for every env: ${(camOne.envSteps / camOne.wallS).toFixed(0)} steps/s wall on 1 worker (${((camOne.envSteps / camOne.wallS / (one.envSteps / one.wallS)) * 100).toFixed(0)} % of without), ${((camOne.wallS / camOne.envSteps - one.wallS / one.envSteps) * 1000).toFixed(1)} ms wall more per env step${camTwo ? `; 2 workers ${(camTwo.envSteps / camTwo.wallS).toFixed(0)} steps/s wall` : ''}`,
  );
console.log(`real-time factor per core: ${(full.envSteps / HZ / full.cpuS).toFixed(1)}× (sim seconds per CPU second)`);
