import { test } from 'node:test';
import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import canonicalize from 'canonicalize';
import {
  bumpLayoutSet,
  layoutAt,
  layoutSetHash,
  parseLayoutSet,
  sampleLayoutSet,
  serializeLayoutSet,
  type LayoutSet,
} from '../../src/layouts/layout-set.js';
import { LayoutSetError } from '../../src/layouts/errors.js';

const GOLDEN_FILE = fileURLToPath(new URL('../fixtures/layouts/bottles-golden.json', import.meta.url));
/** bottles-in-the-bin, tiers 1,3,5, one layout per tier, seed 2025. */
const GOLDEN_SHA256 = '2f39e649b40dbbcbedbbe09d43dadc4f9fb03761632ac563c5ecdc90bd97eb1e';

const small = () => sampleLayoutSet({ task: 'mug-flipping', tiers: [2, 4], perTier: 2, seed: 5 });
const refused = (fn: () => unknown, re: RegExp) =>
  assert.throws(fn, (e: unknown) => {
    assert.ok(e instanceof LayoutSetError, `expected a LayoutSetError, got ${String(e)}`);
    assert.match(e.message, re);
    assert.ok(!e.message.includes('\n'), 'one sentence, one line');
    return true;
  });

test('the hash is SHA-256 of the RFC 8785 canonical JSON of the set without its sha256 field', () => {
  const set = small();
  const { sha256, ...body } = set;
  assert.equal(sha256, createHash('sha256').update(canonicalize(body)!, 'utf8').digest('hex'));
  assert.match(sha256, /^[0-9a-f]{64}$/);
  assert.deepEqual(Object.keys(set), ['format', 'task', 'version', 'seed', 'tiers', 'layouts', 'sha256']);
});

test('the golden set still samples byte for byte (a failure means sampling changed: bump the version of affected sets)', () => {
  const set = sampleLayoutSet({ task: 'bottles-in-the-bin', tiers: [1, 3, 5], perTier: 1, seed: 2025 });
  assert.equal(
    set.sha256,
    GOLDEN_SHA256,
    'The sampler no longer reproduces the committed golden layout set. Layout sets already in use keep their hash, but re-sampling with the same seed now gives different layouts: treat this as a new sampler version, bump the layout sets you re-sample, and only then update test/fixtures/layouts/bottles-golden.json and GOLDEN_SHA256.',
  );
  assert.equal(serializeLayoutSet(set), readFileSync(GOLDEN_FILE, 'utf8'));
  assert.equal(parseLayoutSet(readFileSync(GOLDEN_FILE, 'utf8'), 'golden').sha256, GOLDEN_SHA256);
});

test('the file is pretty JSON with a trailing newline and reads back to the same set', () => {
  const set = small();
  const text = serializeLayoutSet(set);
  assert.ok(text.endsWith('}\n'));
  assert.match(text, /^{\n {2}"format": "tandem\.layout-set\/1",\n/);
  assert.deepEqual(parseLayoutSet(text, 'x.json'), JSON.parse(text));
});

test('key order and whitespace do not change the hash; the contents do', () => {
  const set = small();
  const reordered = JSON.stringify({
    sha256: set.sha256,
    layouts: set.layouts.map((l) => ({ objects: l.objects, fixtures: l.fixtures, tier: l.tier, index: l.index })),
    tiers: set.tiers,
    seed: set.seed,
    version: set.version,
    task: set.task,
    format: set.format,
  });
  assert.equal(parseLayoutSet(reordered, 'reordered.json').sha256, set.sha256);
  assert.notEqual(layoutSetHash({ ...set, seed: set.seed + 1 }), set.sha256);
});

test('editing one coordinate is caught, naming the file, the expected and the found hash', () => {
  const set = small();
  const text = serializeLayoutSet(set);
  const x = set.layouts[1].objects[0].pose.x;
  const tampered = text.replace(`"x": ${x},`, `"x": ${x + 0.001},`);
  assert.notEqual(tampered, text);
  const found = layoutSetHash(JSON.parse(tampered) as LayoutSet);
  assert.throws(
    () => parseLayoutSet(tampered, 'sets/mugs.json'),
    (e: unknown) => {
      assert.ok(e instanceof LayoutSetError);
      assert.match(e.message, /^sets\/mugs\.json does not match its hash/);
      assert.ok(e.message.includes(`expected ${set.sha256}`));
      assert.ok(e.message.includes(`found ${found}`));
      assert.deepEqual(e.hashMismatch, { expected: set.sha256, found });
      return true;
    },
  );
});

test('malformed sets each get one sentence', () => {
  const set = small();
  const text = serializeLayoutSet(set);
  const edit = (f: (v: Record<string, unknown>) => void) => {
    const v = JSON.parse(text) as Record<string, unknown>;
    f(v);
    return JSON.stringify(v);
  };
  refused(
    () => parseLayoutSet(text.slice(0, Math.floor(text.length / 2)), 'half.json'),
    /^half\.json is not valid JSON .*truncated/,
  );
  refused(() => parseLayoutSet('', 'empty.json'), /empty\.json is not valid JSON/);
  refused(() => parseLayoutSet('[1, 2]', 'list.json'), /list\.json is not a layout set/);
  refused(
    () =>
      parseLayoutSet(
        edit((v) => (v.format = 'tandem.layout-set/9')),
        'f.json',
      ),
    /format "tandem\.layout-set\/9", not "tandem\.layout-set\/1"/,
  );
  refused(
    () =>
      parseLayoutSet(
        edit((v) => (v.task = 'juggling')),
        'f.json',
      ),
    /unknown task "juggling"; known tasks: bottles-in-the-bin, mug-flipping, sort-from-tote/,
  );
  refused(
    () =>
      parseLayoutSet(
        edit((v) => (v.tiers = [2, 6])),
        'f.json',
      ),
    /tier 6 is out of range; tiers run from 1 to 5/,
  );
  refused(
    () =>
      parseLayoutSet(
        edit((v) => ((v.layouts as { tier: number }[])[0].tier = 0)),
        'f.json',
      ),
    /layout 0 has tier 0, which is out of range/,
  );
  refused(
    () =>
      parseLayoutSet(
        edit((v) => ((v.layouts as { tier: number }[])[0].tier = 3)),
        'f.json',
      ),
    /layout 0 has tier 3, which the set's tiers \(2, 4\) do not include/,
  );
  refused(
    () =>
      parseLayoutSet(
        edit((v) => ((v.layouts as { objects: { kind: string }[] }[])[2].objects[0].kind = 'teapot')),
        'f.json',
      ),
    /layout 2 object 'mug-1' has kind 'teapot', which mug-flipping does not know/,
  );
  refused(
    () =>
      parseLayoutSet(
        edit((v) => ((v.layouts as { objects: { posture: string }[] }[])[0].objects[0].posture = 'sideways')),
        'f.json',
      ),
    /posture "sideways"/,
  );
  refused(
    () =>
      parseLayoutSet(
        edit(
          (v) => ((v.layouts as { objects: { pose: unknown }[] }[])[0].objects[0].pose = { x: 0, y: 'a', yawRad: 0 }),
        ),
        'f.json',
      ),
    /pose needs a number 'y'/,
  );
  refused(
    () =>
      parseLayoutSet(
        edit((v) => delete v.sha256),
        'f.json',
      ),
    /no valid "sha256" field/,
  );
  refused(
    () =>
      parseLayoutSet(
        edit((v) => (v.extra = 1)),
        'f.json',
      ),
    /unexpected field 'extra'/,
  );
});

test('a fixture of a kind the task does not have is refused', () => {
  const text = serializeLayoutSet(sampleLayoutSet({ task: 'bottles-in-the-bin', tiers: [1], perTier: 1, seed: 1 }));
  refused(
    () => parseLayoutSet(text.replace('"kind": "bin"', '"kind": "bucket"'), 'b.json'),
    /fixture 'bin' has kind 'bucket', which bottles-in-the-bin does not know/,
  );
});

test('bump freezes a hand-edited set as the next version, with its lineage', () => {
  const set = small();
  const edited = serializeLayoutSet(set).replace(/"yawRad": ([-0-9.]+)/, '"yawRad": 0.5');
  assert.throws(() => parseLayoutSet(edited, 'e.json'), LayoutSetError);
  const v2 = bumpLayoutSet(edited, 'e.json');
  assert.equal(v2.version, 2);
  assert.deepEqual(v2.previous, { version: 1, sha256: set.sha256 });
  assert.notEqual(v2.sha256, set.sha256);
  const text2 = serializeLayoutSet(v2);
  assert.equal(parseLayoutSet(text2, 'v2.json').sha256, v2.sha256);
  assert.ok(text2.includes('"yawRad": 0.5'));
  const v3 = bumpLayoutSet(text2, 'v2.json');
  assert.deepEqual(v3.previous, { version: 2, sha256: v2.sha256 });
  refused(() => bumpLayoutSet(edited.replace('"mug-350ml"', '"teapot"'), 'e.json'), /kind 'teapot'/);
});

test('asking for a layout the set does not have names the valid range', () => {
  const set = small();
  assert.equal(layoutAt(set, 3).index, 3);
  refused(() => layoutAt(set, 4), /Layout 4 does not exist: this set has layouts 0 to 3/);
});

test('sampling refuses bad requests with a sentence', () => {
  assert.throws(
    () => sampleLayoutSet({ task: 'juggling', tiers: [1], perTier: 1, seed: 1 }),
    /Unknown task 'juggling'/,
  );
  refused(() => sampleLayoutSet({ task: 'mug-flipping', tiers: [0], perTier: 1, seed: 1 }), /tier 0 is out of range/);
  refused(() => sampleLayoutSet({ task: 'mug-flipping', tiers: [1], perTier: 0, seed: 1 }), /at least 1/);
});
