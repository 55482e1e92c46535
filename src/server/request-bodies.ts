/**
 * Every request body the API takes, checked field by field into its typed shape; anything else is
 * a 400 with one sentence naming the field. Unknown fields are refused too: a typo must not pass
 * silently as the default.
 */
import { TASK_IDS } from '../tasks/types.js';
import {
  RIG_COMMANDS,
  type RigCommandRequest,
  type RunRolloutRequest,
  type SampleLayoutSetRequest,
  type SessionAnswer,
  type SessionAnswerRequest,
  type StartSessionRequest,
  type StartTeleopRequest,
  type ResumeTeleopRequest,
  TELEOP_CONTROLS,
  TELEOP_LEADERS,
  type TeleopControlName,
} from './api-types.js';
import { ApiRefusal } from './request-checks.js';

/** A value as a sentence quotes it: its JSON cut to 60 characters; one too deeply nested to print is named, not printed. */
function quoted(v: unknown): string {
  let s: string | undefined;
  try {
    s = JSON.stringify(v);
  } catch {
    return Array.isArray(v) ? 'a list nested too deeply to show' : 'an object nested too deeply to show';
  }
  if (s === undefined) return String(v);
  return s.length > 60 ? `${s.slice(0, 57)}…` : s;
}

/** A field name as a sentence quotes it: cut to 40 characters. */
function named(k: string): string {
  return k.length > 40 ? `${k.slice(0, 37)}…` : k;
}

function objectBody(body: unknown, what: string): Record<string, unknown> {
  if (typeof body !== 'object' || body === null || Array.isArray(body))
    throw new ApiRefusal(400, `${what} must be a JSON object.`);
  return body as Record<string, unknown>;
}

function onlyFields(o: Record<string, unknown>, allowed: readonly string[], what: string): void {
  const extra = Object.keys(o).filter((k) => !allowed.includes(k));
  if (extra.length > 0)
    throw new ApiRefusal(
      400,
      `${what} has unknown field${extra.length > 1 ? 's' : ''} ${extra
        .slice(0, 3)
        .map((k) => `'${named(k)}'`)
        .join(', ')}${extra.length > 3 ? ` and ${extra.length - 3} more` : ''}; it takes ${allowed.join(', ')}.`,
    );
}

export function parseRigCommand(body: unknown): RigCommandRequest {
  const o = objectBody(body, 'A rig command');
  onlyFields(o, ['command'], 'A rig command');
  if (typeof o.command !== 'string' || !(RIG_COMMANDS as readonly string[]).includes(o.command)) {
    throw new ApiRefusal(
      400,
      `A rig command's 'command' must be one of ${RIG_COMMANDS.join(', ')}, not ${quoted(o.command ?? null)}.`,
    );
  }
  return { command: o.command as RigCommandRequest['command'] };
}

const RUN_FIELDS = ['policy', 'layoutSet', 'layout', 'seconds', 'seed', 'scoreFromCell'] as const;

function integerIn(o: Record<string, unknown>, key: string, lo: number, hi: number): number | undefined {
  const v = o[key];
  if (v === undefined) return undefined;
  if (typeof v !== 'number' || !Number.isInteger(v) || v < lo || v > hi)
    throw new ApiRefusal(400, `'${key}' must be a whole number from ${lo} to ${hi}, not ${quoted(v)}.`);
  return v;
}

export function parseRunRollout(body: unknown): RunRolloutRequest {
  const o = objectBody(body, 'A rollout request');
  onlyFields(o, RUN_FIELDS, 'A rollout request');
  if (typeof o.policy !== 'string' || o.policy.trim() === '' || o.policy.length > 500) {
    throw new ApiRefusal(
      400,
      "'policy' must be a policy spec such as code:hold or onnx:models/act.onnx (at most 500 characters).",
    );
  }
  if (typeof o.layoutSet !== 'string' || !/^[0-9a-f]{64}$/.test(o.layoutSet))
    throw new ApiRefusal(
      400,
      "'layoutSet' must be a layout set's SHA-256 (64 hex digits), as GET /api/layout-sets lists them.",
    );
  const layout = integerIn(o, 'layout', 0, 1_000_000);
  if (layout === undefined) throw new ApiRefusal(400, "'layout' (the layout's index in its set, from 0) is missing.");
  let seconds: number | undefined;
  if (o.seconds !== undefined) {
    if (typeof o.seconds !== 'number' || !Number.isFinite(o.seconds) || o.seconds < 0.1 || o.seconds > 3600)
      throw new ApiRefusal(400, `'seconds' must be from 0.1 to 3600, not ${quoted(o.seconds)}.`);
    seconds = o.seconds;
  }
  const seed = integerIn(o, 'seed', 0, 2 ** 31 - 1);
  if (o.scoreFromCell !== undefined && typeof o.scoreFromCell !== 'boolean')
    throw new ApiRefusal(400, "'scoreFromCell' must be true or false.");
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
  if (!/^[0-9a-f]{64}$/.test(text))
    throw new ApiRefusal(
      400,
      `'${text.slice(0, 80)}' is not a layout set's SHA-256 (64 hex digits), as GET /api/layout-sets lists them.`,
    );
  return text;
}

/** A positive integer id from a URL path segment. */
export function parseId(text: string, what: string): number {
  if (!/^[1-9][0-9]{0,15}$/.test(text))
    throw new ApiRefusal(400, `'${text}' is not a ${what} id (a whole number from 1).`);
  return Number(text);
}

export function parseSampleLayoutSet(body: unknown): SampleLayoutSetRequest {
  const o = objectBody(body, 'A layout-set request');
  onlyFields(o, ['task', 'tiers', 'perTier', 'seed'], 'A layout-set request');
  if (typeof o.task !== 'string' || !(TASK_IDS as readonly string[]).includes(o.task))
    throw new ApiRefusal(400, `'task' must be one of ${TASK_IDS.join(', ')}, not ${quoted(o.task ?? null)}.`);
  if (
    !Array.isArray(o.tiers) ||
    o.tiers.length === 0 ||
    o.tiers.length > 5 ||
    !o.tiers.every((t) => Number.isInteger(t) && t >= 1 && t <= 5)
  ) {
    throw new ApiRefusal(400, "'tiers' must be a list of tiers from 1 to 5, e.g. [1, 2].");
  }
  const perTier = integerIn(o, 'perTier', 1, 100);
  if (perTier === undefined) throw new ApiRefusal(400, "'perTier' (layouts per tier, 1 to 100) is missing.");
  const seed = integerIn(o, 'seed', 0, 2 ** 31 - 1);
  if (seed === undefined)
    throw new ApiRefusal(400, "'seed' (a whole number; record it to reproduce the set) is missing.");
  return { task: o.task, tiers: [...new Set(o.tiers as number[])].sort((a, b) => a - b), perTier, seed };
}

const START_SESSION_FIELDS = [
  'layoutSet',
  'policies',
  'perLayout',
  'blind',
  'minutes',
  'seed',
  'seconds',
  'layouts',
  'breakMinutes',
  'operator',
  'requestId',
  'analysis',
  'stopEarly',
] as const;

function numberIn(o: Record<string, unknown>, key: string, lo: number, hi: number, unit: string): number | undefined {
  const v = o[key];
  if (v === undefined) return undefined;
  if (typeof v !== 'number' || !Number.isFinite(v) || v < lo || v > hi)
    throw new ApiRefusal(400, `'${key}' must be from ${lo} to ${hi} ${unit}, not ${quoted(v)}.`);
  return v;
}

/** A start request's pre-registered analysis: the fields' types here; their ranges are the plan's to refuse. */
function parseAnalysisRequest(v: unknown): StartSessionRequest['analysis'] {
  if (v === undefined) return undefined;
  if (v === null || typeof v !== 'object' || Array.isArray(v))
    throw new ApiRefusal(
      400,
      '\'analysis\' must be an object like {"metric": "task-progress", "alpha": 0.05, "margin": 0.1, "stoppingRule": "difference-or-no-difference"}.',
    );
  const a = v as Record<string, unknown>;
  onlyFields(a, ['metric', 'alpha', 'margin', 'stoppingRule'] as const, "The request's 'analysis'");
  if (a.metric !== undefined && a.metric !== 'task-progress' && a.metric !== 'full-success')
    throw new ApiRefusal(400, "'analysis.metric' must be task-progress or full-success.");
  if (
    a.stoppingRule !== undefined &&
    a.stoppingRule !== 'difference' &&
    a.stoppingRule !== 'difference-or-no-difference'
  )
    throw new ApiRefusal(400, "'analysis.stoppingRule' must be difference or difference-or-no-difference.");
  for (const k of ['alpha', 'margin'] as const)
    if (a[k] !== undefined && (typeof a[k] !== 'number' || !Number.isFinite(a[k])))
      throw new ApiRefusal(400, `'analysis.${k}' must be a number.`);
  return a as NonNullable<StartSessionRequest['analysis']>;
}

export function parseStartSession(body: unknown): StartSessionRequest {
  const o = objectBody(body, 'A session request');
  onlyFields(o, START_SESSION_FIELDS, 'A session request');
  if (typeof o.layoutSet !== 'string' || !/^[0-9a-f]{64}$/.test(o.layoutSet))
    throw new ApiRefusal(
      400,
      "'layoutSet' must be a layout set's SHA-256 (64 hex digits), as GET /api/layout-sets lists them.",
    );
  if (
    !Array.isArray(o.policies) ||
    o.policies.length === 0 ||
    o.policies.length > 26 ||
    !o.policies.every((p) => typeof p === 'string' && p.trim() !== '' && p.length <= 500)
  ) {
    throw new ApiRefusal(
      400,
      "'policies' must be a list of 1 to 26 policy specs such as code:hold or onnx:models/act.onnx.",
    );
  }
  const perLayout = integerIn(o, 'perLayout', 1, 1000);
  if (perLayout === undefined)
    throw new ApiRefusal(400, "'perLayout' (rollouts of each policy on each layout) is missing.");
  if (typeof o.blind !== 'boolean')
    throw new ApiRefusal(400, '\'blind\' must be true (the operator sees "policy A", "policy B") or false.');
  let layouts: number[] | undefined;
  if (o.layouts !== undefined) {
    if (
      !Array.isArray(o.layouts) ||
      o.layouts.length === 0 ||
      o.layouts.length > 10_000 ||
      !o.layouts.every((i) => Number.isInteger(i) && i >= 0)
    )
      throw new ApiRefusal(400, "'layouts' must be a list of layout indices from 0.");
    layouts = o.layouts as number[];
  }
  if (o.operator !== undefined && (typeof o.operator !== 'string' || o.operator.length > 100))
    throw new ApiRefusal(400, "'operator' must be a name of at most 100 characters.");
  const minutes = numberIn(o, 'minutes', 1, 24 * 60, 'minutes');
  const seconds = numberIn(o, 'seconds', 0.1, 3600, 's');
  const breakMinutes = numberIn(o, 'breakMinutes', 0.01, 24 * 60, 'minutes');
  const seed = integerIn(o, 'seed', 0, 2 ** 31 - 1);
  const analysis = parseAnalysisRequest(o.analysis);
  if (o.stopEarly !== undefined && typeof o.stopEarly !== 'boolean')
    throw new ApiRefusal(400, "'stopEarly' must be true or false.");
  if (o.stopEarly === true && !analysis)
    throw new ApiRefusal(
      400,
      "'stopEarly' needs a pre-registered analysis plan: add 'analysis' (e.g. {\"alpha\": 0.05}).",
    );
  return {
    ...(analysis ? { analysis } : {}),
    ...(o.stopEarly === true ? { stopEarly: true } : {}),
    layoutSet: o.layoutSet,
    policies: (o.policies as string[]).map((p) => p.trim()),
    perLayout,
    blind: o.blind,
    ...(minutes !== undefined ? { minutes } : {}),
    ...(seed !== undefined ? { seed } : {}),
    ...(seconds !== undefined ? { seconds } : {}),
    ...(layouts ? { layouts } : {}),
    ...(breakMinutes !== undefined ? { breakMinutes } : {}),
    ...(typeof o.operator === 'string' ? { operator: o.operator } : {}),
    ...optionalRequestId(o),
  };
}

/** A page's id for one click of a start or resume: the same id twice is one request, not two. */
function optionalRequestId(o: Record<string, unknown>): { requestId?: string } {
  if (o.requestId === undefined) return {};
  if (typeof o.requestId !== 'string' || !/^[A-Za-z0-9_-]{8,64}$/.test(o.requestId))
    throw new ApiRefusal(
      400,
      "'requestId' must be 8 to 64 letters, digits, '-' or '_' (the page makes one per click).",
    );
  return { requestId: o.requestId };
}

/** A resume request: {} or {"requestId"}. */
export function parseResumeSession(body: unknown): { requestId?: string } {
  const o = objectBody(body, 'A resume request');
  onlyFields(o, ['requestId'], 'A resume request');
  return optionalRequestId(o);
}

/** Ending a session that is not running: the operator's reason, journalled. */
export function parseEndSession(body: unknown): { reason: string } {
  const o = objectBody(body, 'An end-session request');
  onlyFields(o, ['reason'], 'An end-session request');
  if (typeof o.reason !== 'string' || o.reason.trim().length < 3 || o.reason.length > 500)
    throw new ApiRefusal(400, "'reason' must say in 3 to 500 characters why the session ends here (it is journalled).");
  return { reason: o.reason.trim() };
}

const ANSWER_FIELDS: Readonly<Record<SessionAnswer['action'], readonly string[]>> = {
  confirm: [],
  pause: [],
  stop: [],
  score: ['endStates', 'note'],
  'score-count': ['count', 'note'],
  redo: ['reason'],
  done: [],
  close: [],
  'carry-on': [],
};

function noteOf(a: Record<string, unknown>): { note?: string } {
  if (a.note === undefined || a.note === '') return {};
  if (typeof a.note !== 'string' || a.note.length > 2000)
    throw new ApiRefusal(400, "A score's 'note' must be text of at most 2000 characters.");
  return { note: a.note };
}

export function parseSessionAnswer(body: unknown): SessionAnswerRequest {
  const o = objectBody(body, 'An answer');
  onlyFields(o, ['prompt', 'answer'], 'An answer');
  const prompt = integerIn(o, 'prompt', 1, Number.MAX_SAFE_INTEGER);
  if (prompt === undefined)
    throw new ApiRefusal(400, "An answer's 'prompt' (the id of the step it answers) is missing.");
  const a = objectBody(o.answer, "An answer's 'answer'");
  const action = a.action as SessionAnswer['action'];
  if (typeof action !== 'string' || !Object.hasOwn(ANSWER_FIELDS, action))
    throw new ApiRefusal(
      400,
      `An answer's 'action' must be one of ${Object.keys(ANSWER_FIELDS).join(', ')}, not ${quoted(a.action ?? null)}.`,
    );
  onlyFields(a, ['action', ...ANSWER_FIELDS[action]], `A '${action}' answer`);
  switch (action) {
    case 'score': {
      if (!Array.isArray(a.endStates) || a.endStates.length > 200)
        throw new ApiRefusal(400, "A score's 'endStates' must be a list with one entry per object.");
      const endStates = a.endStates.map((e: unknown, i) => {
        const x = objectBody(e, `End state ${i + 1}`);
        onlyFields(x, ['id', 'region', 'upright', 'offTable'], `End state ${i + 1}`);
        if (typeof x.id !== 'string' || x.id.length === 0 || x.id.length > 100)
          throw new ApiRefusal(400, `End state ${i + 1} needs the object's 'id'.`);
        if (x.region !== undefined && (typeof x.region !== 'string' || x.region.length > 100))
          throw new ApiRefusal(400, `${x.id}'s 'region' must be a region's id.`);
        if (x.upright !== undefined && typeof x.upright !== 'boolean')
          throw new ApiRefusal(400, `${x.id}'s 'upright' must be true or false.`);
        if (x.offTable !== undefined && typeof x.offTable !== 'boolean')
          throw new ApiRefusal(400, `${x.id}'s 'offTable' must be true or false.`);
        return {
          id: x.id,
          ...(typeof x.region === 'string' ? { region: x.region } : {}),
          ...(typeof x.upright === 'boolean' ? { upright: x.upright } : {}),
          ...(x.offTable === true ? { offTable: true } : {}),
        };
      });
      return { prompt, answer: { action, endStates, ...noteOf(a) } };
    }
    case 'score-count':
      // Any number reaches the engine, which says what a count must be for this layout.
      if (typeof a.count !== 'number') throw new ApiRefusal(400, "A count score's 'count' must be a number.");
      return { prompt, answer: { action, count: a.count, ...noteOf(a) } };
    case 'redo':
      if (a.reason === undefined) return { prompt, answer: { action } };
      if (typeof a.reason !== 'string' || a.reason.length > 500)
        throw new ApiRefusal(400, "A redo's 'reason' must be text of at most 500 characters.");
      return { prompt, answer: { action, reason: a.reason } };
    default:
      return { prompt, answer: { action } as SessionAnswer };
  }
}

export function parseStartTeleop(body: unknown): StartTeleopRequest {
  const o = objectBody(body, 'A teleop request');
  onlyFields(
    o,
    ['task', 'episodes', 'seconds', 'resetSeconds', 'cameras', 'leader', 'layoutSet', 'layout'],
    'A teleop request',
  );
  if (typeof o.task !== 'string' || o.task.trim() === '' || o.task.length > 300)
    throw new ApiRefusal(
      400,
      "'task' must be a task id (bottles-in-the-bin, …) or the prompt itself, at most 300 characters.",
    );
  const episodes = integerIn(o, 'episodes', 1, 10_000);
  if (episodes === undefined) throw new ApiRefusal(400, "'episodes' (takes to keep) is missing.");
  const seconds = numberIn(o, 'seconds', 0.5, 3600, 's');
  if (seconds === undefined) throw new ApiRefusal(400, "'seconds' (each take's length) is missing.");
  const resetSeconds = numberIn(o, 'resetSeconds', 0, 3600, 's');
  if (typeof o.cameras !== 'string' || !/^(none|cell|testsrc:[1-8])$/.test(o.cameras))
    throw new ApiRefusal(400, "'cameras' must be none, cell (the emulated cell's three) or testsrc:N (1 to 8).");
  if (typeof o.leader !== 'string' || !(TELEOP_LEADERS as readonly string[]).includes(o.leader))
    throw new ApiRefusal(400, `'leader' must be one of ${TELEOP_LEADERS.join(', ')}.`);
  if ((o.layoutSet === undefined) !== (o.layout === undefined))
    throw new ApiRefusal(
      400,
      "A teleop request names a table layout with both 'layoutSet' and 'layout' (its index), or neither for the cell's default table.",
    );
  if (o.layoutSet !== undefined && (typeof o.layoutSet !== 'string' || !/^[0-9a-f]{64}$/.test(o.layoutSet)))
    throw new ApiRefusal(
      400,
      "'layoutSet' must be a layout set's SHA-256 (64 hex digits), as GET /api/layout-sets lists them.",
    );
  const layout = integerIn(o, 'layout', 0, 1_000_000);
  return {
    task: o.task.trim(),
    episodes,
    seconds,
    ...(resetSeconds !== undefined ? { resetSeconds } : {}),
    cameras: o.cameras,
    leader: o.leader as StartTeleopRequest['leader'],
    ...(layout !== undefined ? { layoutSet: o.layoutSet as string, layout } : {}),
  };
}

export function parseResumeTeleop(body: unknown): ResumeTeleopRequest {
  const o = objectBody(body, 'A teleop resume');
  onlyFields(o, ['sessionId', 'episodes'], 'A teleop resume');
  const sessionId = integerIn(o, 'sessionId', 1, Number.MAX_SAFE_INTEGER);
  if (sessionId === undefined)
    throw new ApiRefusal(
      400,
      "'sessionId' (the stopped teleop session, as GET /api/teleop/resumable names it) is missing.",
    );
  const episodes = integerIn(o, 'episodes', 1, 10_000);
  return { sessionId, ...(episodes !== undefined ? { episodes } : {}) };
}

export function parseTeleopControl(body: unknown): TeleopControlName {
  const o = objectBody(body, 'A teleop control');
  onlyFields(o, ['action'], 'A teleop control');
  if (typeof o.action !== 'string' || !(TELEOP_CONTROLS as readonly string[]).includes(o.action))
    throw new ApiRefusal(
      400,
      `A teleop control's 'action' must be one of ${TELEOP_CONTROLS.join(', ')}, not ${quoted(o.action ?? null)}.`,
    );
  return o.action as TeleopControlName;
}

/** POST /api/rollouts/ID/score: {"endStates": [{"id", "region"?, "upright"?}, …] | "count": N, "reason"?, "operator"?}. */
export function parseRolloutScore(body: unknown): {
  endStates?: { id: string; region?: string; upright?: boolean }[];
  count?: number;
  reason?: string;
  operator?: string;
} {
  const o = objectBody(body, 'A score');
  onlyFields(o, ['endStates', 'count', 'reason', 'operator'], 'A score');
  if ((o.endStates === undefined) === (o.count === undefined))
    throw new ApiRefusal(
      400,
      `A score gives either 'endStates' (each object) or 'count' (objects in the region, or upright), not ${o.count === undefined ? 'neither' : 'both'}.`,
    );
  const count = integerIn(o, 'count', 0, 1000);
  let endStates: { id: string; region?: string; upright?: boolean }[] | undefined;
  if (o.endStates !== undefined) {
    if (!Array.isArray(o.endStates) || o.endStates.length > 1000)
      throw new ApiRefusal(
        400,
        `A score's 'endStates' must be a list of objects like {"id": "bottle-1", "region": "bin"}.`,
      );
    endStates = o.endStates.map((e: unknown, i) => {
      if (typeof e !== 'object' || e === null || Array.isArray(e))
        throw new ApiRefusal(400, `endStates[${i}] must be an object like {"id": "bottle-1", "region": "bin"}.`);
      const x = e as Record<string, unknown>;
      onlyFields(x, ['id', 'region', 'upright'], `endStates[${i}]`);
      if (typeof x.id !== 'string' || x.id === '' || x.id.length > 100)
        throw new ApiRefusal(400, `endStates[${i}] needs the object's 'id' (e.g. "bottle-1").`);
      if (x.region !== undefined && (typeof x.region !== 'string' || x.region.length > 100))
        throw new ApiRefusal(400, `endStates[${i}].region must be a region name such as "bin".`);
      if (x.upright !== undefined && typeof x.upright !== 'boolean')
        throw new ApiRefusal(400, `endStates[${i}].upright must be true or false.`);
      return {
        id: x.id,
        ...(x.region !== undefined ? { region: x.region as string } : {}),
        ...(x.upright !== undefined ? { upright: x.upright as boolean } : {}),
      };
    });
  }
  for (const k of ['reason', 'operator'] as const) {
    if (o[k] !== undefined && (typeof o[k] !== 'string' || (o[k] as string).length > 500))
      throw new ApiRefusal(400, `A score's '${k}' must be text (at most 500 characters).`);
  }
  return {
    ...(endStates ? { endStates } : {}),
    ...(count !== undefined ? { count } : {}),
    ...(typeof o.reason === 'string' ? { reason: o.reason } : {}),
    ...(typeof o.operator === 'string' ? { operator: o.operator } : {}),
  };
}
