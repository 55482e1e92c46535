/**
 * Property test of the randomization spec parser (fast-check, fixed seed) and its checked-in
 * corpus (test/fixtures/fuzz/randomization-specs.json): any JSON, and any edit of a valid spec with
 * prototype names, out-of-range values and values too long or too deep to print, is a spec or one
 * short RandomizationSpecError sentence — never a TypeError from an inherited property, never a
 * stack overflow.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import fc from 'fast-check';
import { parseRandomizationSpec, RandomizationSpecError, RANDOMIZATION_FORMAT } from '../../src/sim/randomization.js';
import { PROJECT_ROOT } from '../helpers/cli.js';

const SEED = 7;

function readOrRefuse(text: string): string | undefined {
  try {
    parseRandomizationSpec(text, 'spec.json');
    return undefined;
  } catch (e) {
    assert.ok(
      e instanceof RandomizationSpecError,
      `threw ${(e as Error)?.name}: ${String((e as Error)?.message).slice(0, 300)}`,
    );
    assert.ok(!e.message.includes('\n') && !/function |\[native code\]/.test(e.message), e.message);
    assert.ok(e.message.length <= 500, `a ${e.message.length}-character message: ${e.message.slice(0, 200)}…`);
    return e.message;
  }
}

test('the checked-in corpus reads as recorded', () => {
  const corpus = JSON.parse(
    readFileSync(join(PROJECT_ROOT, 'test/fixtures/fuzz/randomization-specs.json'), 'utf8'),
  ) as { name: string; text: string; ok: boolean; says?: string }[];
  for (const c of corpus) {
    const refusal = readOrRefuse(c.text);
    assert.equal(refusal === undefined, c.ok, `${c.name}: ${refusal ?? 'accepted'}`);
    if (c.says) assert.ok(refusal?.includes(c.says), `${c.name}: ${refusal}`);
  }
});

const key = fc.oneof(
  fc.constantFrom(
    '__proto__',
    'constructor',
    'toString',
    'valueOf',
    'hasOwnProperty',
    'objectMassScale',
    'friction',
    'sigmaM',
    'sigmaYawRad',
    'lightIntensity',
    'cameras',
    'lights',
  ),
  fc.string({ maxLength: 8 }),
  fc.constant('k'.repeat(5000)),
);
const value = fc.oneof(
  fc.tuple(fc.double({ noNaN: true, noDefaultInfinity: true }), fc.double({ noNaN: true, noDefaultInfinity: true })),
  fc.double({ min: -1, max: 2, noNaN: true }),
  fc.constant(null),
  fc.string({ maxLength: 4 }),
  fc.array(fc.integer(), { maxLength: 3 }),
  fc.constant('v'.repeat(5000)),
);
const section = fc.dictionary(key, value, { maxKeys: 4 });

test('any spec-shaped JSON with prototype names and wild values: a spec or one sentence', () => {
  fc.assert(
    fc.property(
      fc.record({
        seed: fc.oneof(fc.integer(), fc.constant(1.5)),
        physics: fc.option(section),
        placement: fc.option(section),
        visual: fc.option(section),
        extra: fc.option(fc.tuple(key, value)),
      }),
      (r) => {
        const parts = [`"format": ${JSON.stringify(RANDOMIZATION_FORMAT)}`, `"seed": ${r.seed}`];
        for (const s of ['physics', 'placement', 'visual'] as const) {
          const sec = r[s];
          if (sec)
            parts.push(
              `${JSON.stringify(s)}: {${Object.entries(sec)
                .map(([k, v]) => `${JSON.stringify(k)}: ${JSON.stringify(v)}`)
                .join(', ')}}`,
            );
        }
        if (r.extra) parts.push(`${JSON.stringify(r.extra[0])}: ${JSON.stringify(r.extra[1])}`);
        readOrRefuse(`{${parts.join(', ')}}`);
      },
    ),
    { seed: SEED, numRuns: 600 },
  );
  fc.assert(
    fc.property(fc.oneof(fc.json({ maxDepth: 4 }), fc.string({ maxLength: 80 })), (text) => {
      readOrRefuse(text);
    }),
    { seed: SEED, numRuns: 300 },
  );
});
