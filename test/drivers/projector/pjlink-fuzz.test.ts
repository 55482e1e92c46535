/**
 * Property tests of the PJLink reply parsers (fast-check, fixed seed) and their checked-in corpus
 * (test/fixtures/fuzz/pjlink-replies.json): any line is a reply or nothing, never a throw; a power
 * state is one PJLink defines or none — a projector answering `%1POWR=constructor` gets no
 * inherited property passed off as a state.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import fc from 'fast-check';
import {
  parseErrorStatus,
  parseReply,
  powerStateOf,
  POWER_STATES,
} from '../../../drivers/projector/pjlink-protocol.js';
import { PROJECT_ROOT } from '../../helpers/cli.js';

const SEED = 4352;
const STATES = Object.values(POWER_STATES) as string[];

test('the checked-in corpus parses as recorded', () => {
  const corpus = JSON.parse(readFileSync(join(PROJECT_ROOT, 'test/fixtures/fuzz/pjlink-replies.json'), 'utf8')) as {
    line: string;
    reply: { body: string; result: string } | null;
    power: string | null;
  }[];
  for (const c of corpus) {
    const reply = parseReply(c.line);
    assert.deepEqual(reply ?? null, c.reply, c.line);
    assert.equal((reply && powerStateOf(reply.result)) ?? null, c.power, c.line);
  }
});

test('any line: a reply or nothing; a power state PJLink defines or none; an error status of six parts or none', () => {
  const line = fc.oneof(
    fc.string({ maxLength: 140 }),
    fc.string({ unit: 'binary', maxLength: 140 }),
    fc
      .tuple(
        fc.constantFrom('POWR', 'ERST', 'AVMT', 'LAMP'),
        fc.oneof(
          fc.string({ maxLength: 20 }),
          fc.constantFrom('__proto__', 'constructor', 'toString', 'valueOf', 'hasOwnProperty', '0', '1', '2', '3'),
        ),
      )
      .map(([b, r]) => `%1${b}=${r}`),
  );
  fc.assert(
    fc.property(line, (l) => {
      const reply = parseReply(l);
      if (!reply) return;
      assert.equal(`%1${reply.body}=${reply.result}`, l);
      const power = powerStateOf(reply.result);
      assert.ok(power === undefined || STATES.includes(power), `${l} → ${String(power)}`);
      const status = parseErrorStatus(reply.result);
      if (status) assert.deepEqual(Object.keys(status), ['fan', 'lamp', 'temperature', 'cover', 'filter', 'other']);
    }),
    { seed: SEED, numRuns: 1000 },
  );
});
