/**
 * Every request body the API takes, checked field by field into its typed shape; anything else is
 * a 400 with one sentence naming the field. Unknown fields are refused too: a typo must not pass
 * silently as the default.
 */
import { TASK_IDS } from '../tasks/types.js';
import { RIG_COMMANDS, type RigCommandRequest, type RunRolloutRequest, type SampleLayoutSetRequest } from './api-types.js';
import { ApiRefusal } from './request-checks.js';

function objectBody(body: unknown, what: string): Record<string, unknown> {
  if (typeof body !== 'object' || body === null || Array.isArray(body)) throw new ApiRefusal(400, `${what} must be a JSON object.`);
  return body as Record<string, unknown>;
}

function onlyFields(o: Record<string, unknown>, allowed: readonly string[], what: string): void {
  const extra = Object.keys(o).filter((k) => !allowed.includes(k));
  if (extra.length > 0) throw new ApiRefusal(400, `${what} has unknown field${extra.length > 1 ? 's' : ''} ${extra.map((k) => `'${k}'`).join(', ')}; it takes ${allowed.join(', ')}.`);
}

export function parseRigCommand(body: unknown): RigCommandRequest {
  const o = objectBody(body, 'A rig command');
  onlyFields(o, ['command'], 'A rig command');
  if (typeof o.command !== 'string' || !(RIG_COMMANDS as readonly string[]).includes(o.command)) {
    throw new ApiRefusal(400, `A rig command's 'command' must be one of ${RIG_COMMANDS.join(', ')}, not ${JSON.stringify(o.command ?? null)}.`);
  }
  return { command: o.command as RigCommandRequest['command'] };
}

const RUN_FIELDS = ['policy', 'layoutSet', 'layout', 'seconds', 'seed', 'scoreFromCell'] as const;

function integerIn(o: Record<string, unknown>, key: string, lo: number, hi: number): number | undefined {
  const v = o[key];
  if (v === undefined) return undefined;
  if (typeof v !== 'number' || !Number.isInteger(v) || v < lo || v > hi) throw new ApiRefusal(400, `'${key}' must be a whole number from ${lo} to ${hi}, not ${JSON.stringify(v)}.`);
  return v;
}

export function parseRunRollout(body: unknown): RunRolloutRequest {
  const o = objectBody(body, 'A rollout request');
  onlyFields(o, RUN_FIELDS, 'A rollout request');
  if (typeof o.policy !== 'string' || o.policy.trim() === '' || o.policy.length > 500) {
    throw new ApiRefusal(400, "'policy' must be a policy spec such as code:hold or onnx:models/act.onnx (at most 500 characters).");
  }
  if (typeof o.layoutSet !== 'string' || !/^[0-9a-f]{64}$/.test(o.layoutSet)) throw new ApiRefusal(400, "'layoutSet' must be a layout set's SHA-256 (64 hex digits), as GET /api/layout-sets lists them.");
  const layout = integerIn(o, 'layout', 0, 1_000_000);
  if (layout === undefined) throw new ApiRefusal(400, "'layout' (the layout's index in its set, from 0) is missing.");
  let seconds: number | undefined;
  if (o.seconds !== undefined) {
    if (typeof o.seconds !== 'number' || !Number.isFinite(o.seconds) || o.seconds < 0.1 || o.seconds > 3600) throw new ApiRefusal(400, `'seconds' must be from 0.1 to 3600, not ${JSON.stringify(o.seconds)}.`);
    seconds = o.seconds;
  }
  const seed = integerIn(o, 'seed', 0, 2 ** 31 - 1);
  if (o.scoreFromCell !== undefined && typeof o.scoreFromCell !== 'boolean') throw new ApiRefusal(400, "'scoreFromCell' must be true or false.");
  return {
    policy: o.policy.trim(),
    layoutSet: o.layoutSet,
    layout,
    ...(seconds !== undefined ? { seconds } : {}),
    ...(seed !== undefined ? { seed } : {}),
    ...(o.scoreFromCell !== undefined ? { scoreFromCell: o.scoreFromCell as boolean } : {}),
  };
}

/** A body that must carry nothing: `{}` (the action is the path). */
export function parseEmptyBody(body: unknown, what: string): void {
  onlyFields(objectBody(body, what), [], what);
}

/** A layout set's SHA-256 from a URL. */
export function parseLayoutSetSha(text: string): string {
  if (!/^[0-9a-f]{64}$/.test(text)) throw new ApiRefusal(400, `'${text.slice(0, 80)}' is not a layout set's SHA-256 (64 hex digits), as GET /api/layout-sets lists them.`);
  return text;
}

/** A positive integer id from a URL path segment. */
export function parseId(text: string, what: string): number {
  if (!/^[1-9][0-9]{0,15}$/.test(text)) throw new ApiRefusal(400, `'${text}' is not a ${what} id (a whole number from 1).`);
  return Number(text);
}

export function parseSampleLayoutSet(body: unknown): SampleLayoutSetRequest {
  const o = objectBody(body, 'A layout-set request');
  onlyFields(o, ['task', 'tiers', 'perTier', 'seed'], 'A layout-set request');
  if (typeof o.task !== 'string' || !(TASK_IDS as readonly string[]).includes(o.task)) throw new ApiRefusal(400, `'task' must be one of ${TASK_IDS.join(', ')}, not ${JSON.stringify(o.task ?? null)}.`);
  if (!Array.isArray(o.tiers) || o.tiers.length === 0 || o.tiers.length > 5 || !o.tiers.every((t) => Number.isInteger(t) && t >= 1 && t <= 5)) {
    throw new ApiRefusal(400, "'tiers' must be a list of tiers from 1 to 5, e.g. [1, 2].");
  }
  const perTier = integerIn(o, 'perTier', 1, 100);
  if (perTier === undefined) throw new ApiRefusal(400, "'perTier' (layouts per tier, 1 to 100) is missing.");
  const seed = integerIn(o, 'seed', 0, 2 ** 31 - 1);
  if (seed === undefined) throw new ApiRefusal(400, "'seed' (a whole number; record it to reproduce the set) is missing.");
  return { task: o.task, tiers: [...new Set(o.tiers as number[])].sort((a, b) => a - b), perTier, seed };
}
