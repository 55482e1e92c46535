/**
 * Every API body parser against bodies built from valid ones with JavaScript's own property names
 * (`__proto__`, `constructor`, `toString`, …) as keys and values, and with values nested as deep as
 * a 16 KiB body allows, parsed from JSON text as the server does: each is read or refused as a 400
 * ApiRefusal of one sentence — never another error, which the server would answer as a 500.
 * fast-check with a fixed seed, so a failure reproduces; a checked-in corpus in
 * test/fixtures/fuzz/api-bodies.json.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import fc from 'fast-check';
import { ApiRefusal } from '../../src/server/request-checks.js';
import {
  parseEmptyBody,
  parseId,
  parseLayoutSetSha,
  parseResumeTeleop,
  parseRigCommand,
  parseRunRollout,
  parseSampleLayoutSet,
  parseSessionAnswer,
  parseStartSession,
  parseStartTeleop,
  parseTeleopControl,
} from '../../src/server/request-bodies.js';
import { uploadName, UPLOAD_KINDS } from '../../src/server/uploads.js';
import { PROJECT_ROOT } from '../helpers/cli.js';

const SEED = 31;
const PROTO_NAMES = [
  '__proto__',
  'constructor',
  'prototype',
  'toString',
  'valueOf',
  'hasOwnProperty',
  'isPrototypeOf',
  'propertyIsEnumerable',
  'toLocaleString',
  '__defineGetter__',
  '__lookupGetter__',
] as const;
const SHA = 'a'.repeat(64);

/** Each parser with a body it accepts. */
const PARSERS: readonly { name: string; parse: (body: unknown) => unknown; valid: Record<string, unknown> }[] = [
  { name: 'rig command', parse: parseRigCommand, valid: { command: 'hold' } },
  {
    name: 'run rollout',
    parse: parseRunRollout,
    valid: { policy: 'code:hold', layoutSet: SHA, layout: 0, seconds: 5, seed: 1, scoreFromCell: false },
  },
  {
    name: 'sample layout set',
    parse: parseSampleLayoutSet,
    valid: { task: 'bottles-in-the-bin', tiers: [1, 2], perTier: 2, seed: 3 },
  },
  {
    name: 'start session',
    parse: parseStartSession,
    valid: {
      layoutSet: SHA,
      policies: ['code:hold'],
      perLayout: 1,
      blind: true,
      minutes: 10,
      seed: 1,
      seconds: 5,
      layouts: [0],
      breakMinutes: 1,
      operator: 'Ada',
    },
  },
  {
    name: 'session answer (score)',
    parse: parseSessionAnswer,
    valid: {
      prompt: 3,
      answer: { action: 'score', endStates: [{ id: 'bottle-1', region: 'bin', upright: true }], note: 'ok' },
    },
  },
  {
    name: 'session answer (count)',
    parse: parseSessionAnswer,
    valid: { prompt: 3, answer: { action: 'score-count', count: 2 } },
  },
  {
    name: 'session answer (redo)',
    parse: parseSessionAnswer,
    valid: { prompt: 3, answer: { action: 'redo', reason: 'bumped' } },
  },
  {
    name: 'start teleop',
    parse: parseStartTeleop,
    valid: {
      task: 'bottles-in-the-bin',
      episodes: 2,
      seconds: 10,
      resetSeconds: 2,
      cameras: 'none',
      leader: 'emulated-yam',
      layoutSet: SHA,
      layout: 0,
    },
  },
  { name: 'resume teleop', parse: parseResumeTeleop, valid: { sessionId: 4, episodes: 2 } },
  { name: 'teleop control', parse: parseTeleopControl, valid: { action: 'next' } },
  { name: 'empty body', parse: (b) => parseEmptyBody(b, 'A stop'), valid: {} },
];

function refusedAs400(name: string, body: unknown, f: () => unknown): void {
  try {
    f();
  } catch (e) {
    assert.ok(
      e instanceof ApiRefusal,
      `${name}: ${JSON.stringify(body)?.slice(0, 200)} threw ${(e as Error)?.name}: ${(e as Error)?.message} — the server would answer 500`,
    );
    assert.equal(e.status, 400, `${name}: ${e.message}`);
    assert.ok(
      !e.message.includes('\n') && e.message.length < 600,
      `${name}: not one short sentence: ${e.message.slice(0, 200)}`,
    );
  }
}

/** A JSON value in which prototype names show up as keys and as values, at any depth. */
const protoName = fc.constantFrom(...PROTO_NAMES);
const hostile: fc.Arbitrary<unknown> = fc.letrec((tie) => ({
  value: fc.oneof(
    { depthSize: 'small' },
    protoName,
    fc.integer(),
    fc.boolean(),
    fc.constant(null),
    fc.string({ maxLength: 8 }),
    fc.array(tie('value'), { maxLength: 3 }),
    tie('object'),
  ),
  object: fc.dictionary(fc.oneof(protoName, fc.string({ maxLength: 6 })), tie('value'), { maxKeys: 4 }),
})).value;

/** A valid body with keys swapped, added or revalued by prototype names (nested objects too). */
function mutated(valid: Record<string, unknown>): fc.Arbitrary<Record<string, unknown>> {
  const keys = Object.keys(valid);
  return fc
    .record({
      add: fc.array(fc.tuple(protoName, hostile), { maxLength: 3 }),
      revalue: fc.array(
        fc.tuple(keys.length ? fc.constantFrom(...keys) : fc.constant('x'), fc.oneof(protoName, hostile)),
        { maxLength: 3 },
      ),
      nested: fc.array(fc.tuple(protoName, fc.oneof(protoName, hostile)), { maxLength: 2 }),
      // The nested answer's own fields (its action first of all) revalued by prototype names.
      innerRevalue: fc.array(
        fc.tuple(fc.constantFrom('action', 'endStates', 'count', 'reason', 'note'), fc.oneof(protoName, hostile)),
        { maxLength: 2 },
      ),
    })
    .map(({ add, revalue, nested, innerRevalue }) => {
      const body: Record<string, unknown> = JSON.parse(JSON.stringify(valid)) as Record<string, unknown>;
      for (const [k, v] of revalue) body[k] = v;
      for (const [k, v] of [...nested, ...innerRevalue]) {
        const inner = body.answer;
        if (inner && typeof inner === 'object' && !Array.isArray(inner)) (inner as Record<string, unknown>)[k] = v;
      }
      // As JSON text, so `__proto__` becomes an own key (as JSON.parse makes it), not a prototype change.
      const text = `{${[...Object.entries(body).map(([k, v]) => `${JSON.stringify(k)}:${JSON.stringify(v) ?? 'null'}`), ...add.map(([k, v]) => `${JSON.stringify(k)}:${JSON.stringify(v) ?? 'null'}`)].join(',')}}`;
      return JSON.parse(text) as Record<string, unknown>;
    });
}

test('the checked-in corpus reads as recorded', () => {
  const corpus = JSON.parse(readFileSync(join(PROJECT_ROOT, 'test/fixtures/fuzz/api-bodies.json'), 'utf8')) as {
    name: string;
    parser: string;
    text: string;
    ok: boolean;
  }[];
  for (const c of corpus) {
    const parsers = PARSERS.filter((p) => p.name === c.parser || p.name.startsWith(`${c.parser} (`));
    assert.ok(parsers.length > 0, `${c.name}: no parser ${c.parser}`);
    const body = JSON.parse(c.text) as unknown;
    let ok = true;
    refusedAs400(c.name, c.text.slice(0, 80), () => {
      try {
        parsers[0].parse(body);
      } catch (e) {
        ok = false;
        throw e;
      }
    });
    assert.equal(ok, c.ok, c.name);
  }
});

test('every API body parser: a value nested as deep as a 16 KiB body allows is a 400, not a stack overflow (a 500)', () => {
  const deep = JSON.parse('['.repeat(8000) + ']'.repeat(8000)) as unknown;
  for (const p of PARSERS) {
    const valid = (): Record<string, unknown> => JSON.parse(JSON.stringify(p.valid)) as Record<string, unknown>;
    for (const key of Object.keys(p.valid))
      refusedAs400(`${p.name}, ${key} nested 8000 deep`, key, () => p.parse({ ...valid(), [key]: deep }));
    const inner = p.valid.answer as Record<string, unknown> | undefined;
    for (const innerKey of Object.keys(inner ?? {})) {
      refusedAs400(`${p.name}, answer.${innerKey} nested 8000 deep`, innerKey, () =>
        p.parse({ ...valid(), answer: { ...inner, [innerKey]: deep } }),
      );
    }
  }
});

test('every API body parser: valid bodies are read', () => {
  for (const p of PARSERS) assert.doesNotThrow(() => p.parse(JSON.parse(JSON.stringify(p.valid))), p.name);
});

test('every API body parser: prototype names as keys and values are read or refused with a 400 sentence, never another error', () => {
  for (const p of PARSERS) {
    fc.assert(
      fc.property(mutated(p.valid), (body) => refusedAs400(p.name, body, () => p.parse(body))),
      { seed: SEED, numRuns: 300 },
    );
    fc.assert(
      fc.property(hostile, (body) => refusedAs400(p.name, body, () => p.parse(body))),
      { seed: SEED, numRuns: 200 },
    );
  }
});

test('a session answer whose action is a prototype name is a 400 naming the actions, in one sentence', () => {
  for (const action of PROTO_NAMES) {
    const body = JSON.parse(`{"prompt": 1, "answer": {"action": ${JSON.stringify(action)}}}`) as unknown;
    assert.throws(
      () => parseSessionAnswer(body),
      (e: unknown) =>
        e instanceof ApiRefusal &&
        e.status === 400 &&
        e.message ===
          `An answer's 'action' must be one of confirm, pause, stop, score, score-count, redo, done, close, carry-on, not ${JSON.stringify(action)}.`,
      action,
    );
  }
});

test('path and query parsers: prototype names are refused with a 400 sentence', () => {
  for (const name of PROTO_NAMES) {
    refusedAs400('id', name, () => parseId(name, 'rollout'));
    refusedAs400('layout set', name, () => parseLayoutSetSha(name));
    for (const kind of UPLOAD_KINDS) refusedAs400(`upload name (${kind})`, name, () => uploadName(name, kind));
  }
});
