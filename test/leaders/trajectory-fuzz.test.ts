/**
 * Property tests of teleop trajectory files (fast-check, fixed seed) and their checked-in corpus
 * (test/fixtures/fuzz/trajectories.json): any text is a hand motion that poses finite joints, or one
 * TrajectoryFileError sentence naming the file — never a TypeError from a null point or cue.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import fc from 'fast-check';
import { parseTrajectory, TrajectoryFileError } from '../../drivers/leaders/emulators/operator-hand.js';
import { PROJECT_ROOT } from '../helpers/cli.js';

const SEED = 1414;

function readOrRefuse(text: string): boolean {
  let motion;
  try {
    motion = parseTrajectory(text, 'take.json');
  } catch (e) {
    assert.ok(e instanceof TrajectoryFileError, `threw ${(e as Error)?.name}: ${(e as Error)?.message}`);
    assert.match(e.message, /take\.json/);
    assert.doesNotMatch(e.message, /Cannot read properties|is not a function|undefined \(reading/);
    assert.ok(!e.message.includes('\n'), e.message);
    return false;
  }
  const out = new Float64Array(14);
  const v = new Float64Array(14);
  for (const t of [-1, 0, 0.25, 1e6]) {
    motion.pose(t, out, v);
    assert.ok(out.every(Number.isFinite) && v.every(Number.isFinite), `pose at ${t}`);
    motion.buttons(t, 'left');
  }
  return true;
}

test('the checked-in corpus reads as recorded', () => {
  const corpus = JSON.parse(readFileSync(join(PROJECT_ROOT, 'test/fixtures/fuzz/trajectories.json'), 'utf8')) as {
    name: string;
    text: string;
    ok: boolean;
  }[];
  for (const c of corpus) assert.equal(readOrRefuse(c.text), c.ok, c.name);
});

const q = fc.array(
  fc.oneof(fc.double({ min: -4, max: 4, noNaN: true }), fc.constant(null), fc.string({ maxLength: 2 })),
  { minLength: 12, maxLength: 15 },
);
const point = fc.oneof(
  fc.record({ t: fc.oneof(fc.double({ min: 0, max: 10, noNaN: true }), fc.constant(null)), q }),
  fc.constant(null),
  fc.integer(),
  fc.string({ maxLength: 4 }),
);
const cue = fc.oneof(
  fc.record({
    t: fc.double({ min: 0, max: 10, noNaN: true }),
    arm: fc.constantFrom('left', 'right', 'middle', '__proto__'),
    button: fc.constantFrom(0, 1, 2),
  }),
  fc.constant(null),
  fc.integer(),
);

test('any trajectory-shaped JSON: a motion posing finite joints, or one sentence', () => {
  fc.assert(
    fc.property(fc.array(point, { maxLength: 5 }), fc.option(fc.array(cue, { maxLength: 3 })), (points, buttons) => {
      readOrRefuse(JSON.stringify(buttons === null ? { points } : { points, buttons }));
    }),
    { seed: SEED, numRuns: 500 },
  );
  fc.assert(
    fc.property(fc.oneof(fc.json({ maxDepth: 4 }), fc.string({ maxLength: 60 })), (text) => {
      readOrRefuse(text);
    }),
    { seed: SEED, numRuns: 300 },
  );
});
