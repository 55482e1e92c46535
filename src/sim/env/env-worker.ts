/**
 * One env-server worker thread: holds the environments the pool gives it (any connection's),
 * answers reset and step requests in arrival order, autoresets an env whose episode ended (the
 * next seed of that env is seed + 1_000_003 × episode, so a run is reproducible from the reset's
 * seed alone).
 */
import { parentPort, workerData } from 'node:worker_threads';
import { getTask } from '../../tasks/registry.js';
import { STATE_DIM } from '../../rig/contract.js';
import { parseRandomizationSpec } from '../randomization.js';
import { SceneError } from '../scene.js';
import { ChromiumRenderer } from '../render/chromium-renderer.js';
import { RendererUnavailableError } from '../render/renderer.js';
import { SimEnv, type EnvResetParams } from './sim-env.js';
import type { EnvImages, EnvWorkerInit, FromEnvWorker, ToEnvWorker, WorkerStep } from './env-worker-protocol.js';

/** Seeds of one env's successive episodes are this far apart (a prime, so envs' seeds never meet in practice). */
export const EPISODE_SEED_STRIDE = 1_000_003;

const init = workerData as EnvWorkerInit;
const port = parentPort!;
const post = (m: FromEnvWorker, transfer: ArrayBuffer[] = []): void => port.postMessage(m, transfer);
const task = getTask(init.taskId);
const randomization = init.randomizationJson
  ? parseRandomizationSpec(init.randomizationJson, "the server's --randomize")
  : undefined;
const cameras = init.cameras ?? [];
/** One browser per worker, started on the first image (its page holds one scene at a time, so the envs take turns). */
const renderer = cameras.length > 0 ? new ChromiumRenderer() : undefined;

/** The env's cameras as they see it now; none without --cameras. */
async function imagesOf(env: SimEnv): Promise<EnvImages | undefined> {
  if (!renderer) return undefined;
  const images = await renderer.render(env.snapshot(), cameras, env.look);
  return images;
}

/** Buffers to move, not copy, to the main thread. */
function imageBuffers(images: readonly (EnvImages | undefined)[]): ArrayBuffer[] {
  const out = new Set<ArrayBuffer>();
  for (const i of images)
    for (const img of Object.values(i ?? {}))
      if (img && img.data.byteOffset === 0 && img.data.byteLength === img.data.buffer.byteLength)
        out.add(img.data.buffer as ArrayBuffer);
  return [...out];
}

interface Held {
  readonly env: SimEnv;
  params: EnvResetParams;
  episodes: number;
  return: number;
  length: number;
}
const envs = new Map<string, Held>();

async function reset(m: Extract<ToEnvWorker, { type: 'reset' }>): Promise<void> {
  const states = new Float32Array(m.envs.length * STATE_DIM);
  const infos = [];
  const images: EnvImages[] = [];
  try {
    for (let i = 0; i < m.envs.length; i++) {
      const r = m.envs[i];
      let held = envs.get(r.key);
      if (!held) {
        held = {
          env: new SimEnv({ task, controlHz: init.controlHz, randomization }),
          params: r,
          episodes: 0,
          return: 0,
          length: 0,
        };
        envs.set(r.key, held);
      }
      held.params = r;
      held.episodes = 0;
      held.return = 0;
      held.length = 0;
      const out = await held.env.reset(r);
      states.set(out.state, i * STATE_DIM);
      infos.push(out.info);
      const shot = await imagesOf(held.env);
      if (shot) images.push(shot);
    }
  } catch (e) {
    if (e instanceof SceneError || e instanceof RendererUnavailableError) {
      post({ type: 'error', id: m.id, message: e.message });
      return;
    }
    throw e;
  }
  post({ type: 'reset', id: m.id, states, infos, ...(renderer ? { images } : {}) }, [
    states.buffer,
    ...imageBuffers(images),
  ]);
}

async function step(m: Extract<ToEnvWorker, { type: 'step' }>): Promise<void> {
  try {
    await stepEnvs(m);
  } catch (e) {
    if (!(e instanceof RendererUnavailableError)) throw e;
    post({ type: 'error', id: m.id, message: e.message });
  }
}

async function stepEnvs(m: Extract<ToEnvWorker, { type: 'step' }>): Promise<void> {
  const results: WorkerStep[] = [];
  for (let i = 0; i < m.keys.length; i++) {
    const held = envs.get(m.keys[i]);
    if (!held) {
      post({ type: 'error', id: m.id, message: `Environment ${m.keys[i]} was not reset; send a reset first.` });
      return;
    }
    const r = held.env.step(m.actions.subarray(i * STATE_DIM, (i + 1) * STATE_DIM));
    held.return += r.reward;
    held.length += 1;
    if (!r.terminated && !r.truncated) {
      const shot = await imagesOf(held.env);
      results.push(shot ? { ...r, images: shot } : r);
      continue;
    }
    const ended = { episode: held.env.episode!, return: held.return, length: held.length, finalState: r.state };
    held.episodes += 1;
    held.return = 0;
    held.length = 0;
    const next = await held.env.reset({ ...held.params, seed: held.params.seed + EPISODE_SEED_STRIDE * held.episodes });
    const shot = await imagesOf(held.env);
    results.push({ ...r, state: next.state, ended, next: next.info, ...(shot ? { images: shot } : {}) });
  }
  post({ type: 'step', id: m.id, results }, imageBuffers(results.map((r) => r.images)));
}

let queue: Promise<void> = Promise.resolve();
port.on('message', (m: ToEnvWorker) => {
  const fail = (e: unknown): void => post({ type: 'fatal', message: e instanceof Error ? e.message : String(e) });
  switch (m.type) {
    case 'reset':
      queue = queue.then(() => reset(m)).catch(fail);
      break;
    case 'step':
      queue = queue.then(() => step(m)).catch(fail);
      break;
    case 'free':
      queue = queue.then(() => {
        for (const k of m.keys) {
          envs.get(k)?.env.free();
          envs.delete(k);
        }
      });
      break;
    case 'close':
      void queue.then(async () => {
        for (const h of envs.values()) h.env.free();
        await renderer?.close();
        port.close();
      });
      break;
  }
});
post({ type: 'ready' });
