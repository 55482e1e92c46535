/**
 * The env server's requests, checked at the boundary: each bad request is one sentence for the
 * client (what was wrong, what to send instead), never a crash.
 */
import { describeWireValue, NdArray, type WireValue } from '../../policy/openpi/msgpack-numpy.js';
import { STATE_DIM } from '../../rig/contract.js';
import { LAYOUT_SET_FORMAT, parseLayoutSet } from '../../layouts/layout-set.js';
import { LayoutSetError } from '../../layouts/errors.js';
import type { Layout, TaskDefinition } from '../../tasks/types.js';

export class EnvProtocolError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'EnvProtocolError';
  }
}

export interface ResetRequest {
  readonly type: 'reset';
  readonly seed: number;
  readonly tier?: number;
  readonly layout?: Layout;
  readonly episodeSeconds?: number;
}

export interface StepRequest {
  readonly type: 'step';
  /** float32[N × 14], C order. */
  readonly actions: Float32Array;
}

export type EnvRequest = ResetRequest | StepRequest;

const isMap = (v: unknown): v is Record<string, WireValue> =>
  v !== null && typeof v === 'object' && !Array.isArray(v) && !(v instanceof NdArray) && !(v instanceof Uint8Array);

/** The request a decoded message is, for a server of `envs` environments of `task`. */
export function parseEnvRequest(msg: WireValue, task: TaskDefinition, envs: number): EnvRequest {
  if (!isMap(msg)) throw new EnvProtocolError('A request is a msgpack map with a "type" of "reset" or "step".');
  if (msg.type === 'reset') return parseReset(msg, task);
  if (msg.type === 'step') return parseStep(msg, envs);
  throw new EnvProtocolError(`Unknown request type ${describeWireValue(msg.type)}; send "reset" or "step".`);
}

function parseReset(msg: Record<string, WireValue>, task: TaskDefinition): ResetRequest {
  const seed = msg.seed;
  if (typeof seed !== 'number' || !Number.isSafeInteger(seed) || seed < 0 || seed > 2 ** 32)
    throw new EnvProtocolError(`reset needs "seed", a whole number from 0 to 2^32, not ${describeWireValue(seed)}.`);
  const tiers = task.tiers.map((t) => t.tier);
  let tier: number | undefined;
  if (msg.tier !== undefined && msg.tier !== null) {
    if (typeof msg.tier !== 'number' || !tiers.includes(msg.tier))
      throw new EnvProtocolError(
        `Unknown tier ${describeWireValue(msg.tier)} for ${task.id}; its tiers are ${tiers.join(', ')} (or leave "tier" out to draw one per episode).`,
      );
    tier = msg.tier;
  }
  let layout: Layout | undefined;
  if (msg.layout !== undefined && msg.layout !== null) layout = parseLayout(msg.layout, task);
  let episodeSeconds: number | undefined;
  const options = msg.options;
  if (options !== undefined && options !== null) {
    if (!isMap(options)) throw new EnvProtocolError('reset "options" is a map, e.g. {"episode_seconds": 30}.');
    for (const k of Object.keys(options))
      if (k !== 'episode_seconds')
        throw new EnvProtocolError(
          `Unknown reset option ${describeWireValue(k)}; the one option is "episode_seconds".`,
        );
    const s = options.episode_seconds;
    if (s !== undefined) {
      if (typeof s !== 'number' || !(s >= 0.02 && s <= 3600))
        throw new EnvProtocolError(`"episode_seconds" must be from 0.02 to 3600 s, not ${describeWireValue(s)}.`);
      episodeSeconds = s;
    }
  }
  return {
    type: 'reset',
    seed,
    ...(tier !== undefined ? { tier } : {}),
    ...(layout ? { layout } : {}),
    ...(episodeSeconds !== undefined ? { episodeSeconds } : {}),
  };
}

/** A hand-built layout, checked as one layout of a layout set is (kinds, poses, tiers). */
function parseLayout(v: WireValue, task: TaskDefinition): Layout {
  if (!isMap(v))
    throw new EnvProtocolError(
      'reset "layout" is a layout map as in a layout set: {"index", "tier", "fixtures", "objects"}.',
    );
  const text = JSON.stringify({
    format: LAYOUT_SET_FORMAT,
    task: task.id,
    version: 1,
    seed: 0,
    tiers: task.tiers.map((t) => t.tier),
    layouts: [v],
  });
  try {
    return parseLayoutSet(text, "the reset's layout", { checkHash: false }).layouts[0];
  } catch (e) {
    if (e instanceof LayoutSetError) throw new EnvProtocolError(e.message);
    throw e;
  }
}

function parseStep(msg: Record<string, WireValue>, envs: number): StepRequest {
  const a = msg.actions;
  if (!(a instanceof NdArray))
    throw new EnvProtocolError(
      `step needs "actions", a float32 array of shape [${envs}, ${STATE_DIM}] (numpy via msgpack_numpy).`,
    );
  if (a.dtype !== '<f4' && a.dtype !== '<f8')
    throw new EnvProtocolError(
      `"actions" has dtype ${a.dtype}; send float32 (or float64) of shape [${envs}, ${STATE_DIM}].`,
    );
  if (a.shape.length !== 2 || a.shape[0] !== envs || a.shape[1] !== STATE_DIM)
    throw new EnvProtocolError(
      `"actions" has shape [${a.shape.join(', ')}]; this server runs ${envs} environments of ${STATE_DIM} joint targets each, so send shape [${envs}, ${STATE_DIM}].`,
    );
  const actions = a.toFloat32();
  for (let i = 0; i < actions.length; i++) {
    if (!Number.isFinite(actions[i]))
      throw new EnvProtocolError(
        `"actions" has a non-finite value (${actions[i]}) at env ${Math.floor(i / STATE_DIM)}, entry ${i % STATE_DIM}; nothing was stepped.`,
      );
  }
  return { type: 'step', actions };
}
