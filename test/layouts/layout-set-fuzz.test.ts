/**
 * Property tests of the layout-set parser (fast-check): any text, any edit of a valid set, any deep
 * or huge nesting is either read or refused with one LayoutSetError sentence; and what bump pins,
 * verify reads back.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import fc from 'fast-check';
import { bumpLayoutSet, parseLayoutSet, sampleLayoutSet, serializeLayoutSet } from '../../src/layouts/layout-set.js';
import { LayoutSetError } from '../../src/layouts/errors.js';

/** Fixed, so a failure reproduces. */
const SEED = 3143;

function readOrRefuse<T>(f: () => T): T | undefined {
  try {
    return f();
  } catch (e) {
    if (!(e instanceof LayoutSetError))
      throw new Error(`the parser threw ${(e as Error)?.name}: ${(e as Error)?.message}`);
    assert.ok(
      !e.message.includes('\n') && e.message.length < 500,
      `not one short sentence: ${e.message.slice(0, 200)}`,
    );
    return undefined;
  }
}

const valid = serializeLayoutSet(sampleLayoutSet({ task: 'sort-from-tote', tiers: [1, 3], perTier: 2, seed: 4 }));
const validValue = JSON.parse(valid) as Record<string, unknown>;

test('any text: read or one LayoutSetError sentence', () => {
  fc.assert(
    fc.property(
      fc.oneof(fc.string({ maxLength: 200 }), fc.json({ maxDepth: 12 }), fc.string({ unit: 'binary', maxLength: 200 })),
      (text) => {
        readOrRefuse(() => parseLayoutSet(text, 'set.json'));
        readOrRefuse(() => bumpLayoutSet(text, 'set.json'));
      },
    ),
    { seed: SEED, numRuns: 1500 },
  );
});

/** Every path into a JSON value (as key lists), for picking a place to edit. */
function paths(v: unknown, prefix: (string | number)[] = []): (string | number)[][] {
  const out: (string | number)[][] = [prefix];
  if (Array.isArray(v)) v.forEach((x, i) => out.push(...paths(x, [...prefix, i])));
  else if (v !== null && typeof v === 'object')
    for (const [k, x] of Object.entries(v)) out.push(...paths(x, [...prefix, k]));
  return out;
}
const allPaths = paths(validValue).filter((p) => p.length > 0);

/** Edits that hand-editing, bad tools or damage make: any JSON value, numbers at the extremes, hostile strings, new keys. */
const replacement = fc.oneof(
  fc.jsonValue({ maxDepth: 3 }),
  fc.constantFrom(1e299, -1e299, 5e-324, Number.MAX_SAFE_INTEGER + 2, -0, 0.5, 7, -7),
  fc.constantFrom('\ud800', 'a\udfffb', 'bot\u0007tle', '', 'x'.repeat(500), '__proto__', 'constructor'),
);

test('any edit of a valid set: verify and bump read it or refuse it in one sentence, and what bump pins verify reads', () => {
  fc.assert(
    fc.property(fc.nat(), replacement, fc.option(fc.string({ maxLength: 12 })), (at, value, newKey) => {
      const v = structuredClone(validValue);
      const path = allPaths[at % allPaths.length];
      let parent: Record<string | number, unknown> = v;
      for (const k of path.slice(0, -1)) parent = parent[k] as Record<string | number, unknown>;
      const last = path[path.length - 1];
      if (newKey !== null && typeof parent === 'object' && !Array.isArray(parent)) parent[newKey] = value;
      else parent[last] = value;
      const text = JSON.stringify(v);
      readOrRefuse(() => parseLayoutSet(text, 'set.json'));
      const bumped = readOrRefuse(() => bumpLayoutSet(text, 'set.json'));
      if (bumped) {
        const back = parseLayoutSet(serializeLayoutSet(bumped), 'bumped.json');
        assert.equal(back.sha256, bumped.sha256);
      }
    }),
    { seed: SEED, numRuns: 1500 },
  );
});

test('deep nesting anywhere is refused by depth, never by the stack', () => {
  fc.assert(
    fc.property(fc.nat(), fc.integer({ min: 9, max: 100_000 }), fc.constantFrom('[', '{"a":'), (at, depth, open) => {
      const close = open === '[' ? ']' : '}';
      const nest = `${open.repeat(depth)}0${close.repeat(depth)}`;
      // Replace one value of the set (a number, to keep the JSON valid) with the nest.
      const numbers = [...valid.matchAll(/: (-?\d[\d.e+-]*)/g)];
      const m = numbers[at % numbers.length];
      const text = `${valid.slice(0, m.index! + 2)}${nest}${valid.slice(m.index! + 2 + m[1].length)}`;
      assert.throws(
        () => parseLayoutSet(text, 'set.json'),
        (e: unknown) => e instanceof LayoutSetError && /nests deeper than 8 levels/.test(e.message),
      );
      assert.throws(() => bumpLayoutSet(text, 'set.json'), LayoutSetError);
    }),
    { seed: SEED, numRuns: 60 },
  );
});

test('the valid set itself reads and bumps', () => {
  assert.equal(parseLayoutSet(valid, 'set.json').layouts.length, 4);
  assert.equal(bumpLayoutSet(valid, 'set.json').version, 2);
});
