/**
 * Hand-made hostile layout-set files: deep nesting, huge files, lone UTF-16 surrogates, unknown keys
 * under "previous", coordinates off the table or absurd. Each is refused with one sentence by
 * verify and by bump (which re-hashes, so it must not pin what verify would refuse).
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import {
  bumpLayoutSet,
  parseLayoutSet,
  pinLayoutSet,
  sampleLayoutSet,
  serializeLayoutSet,
  type LayoutSet,
} from '../../src/layouts/layout-set.js';
import { LayoutSetError } from '../../src/layouts/errors.js';
import { runInProcess } from '../helpers/cli.js';

const base = (): LayoutSet => sampleLayoutSet({ task: 'bottles-in-the-bin', tiers: [1, 2], perTier: 1, seed: 9 });
/** A set edited as a JSON value, then re-pinned so its hash matches (what a careless bump would make). */
/** The parts of a set file the edits below touch. */
interface EditableSet {
  version: number;
  seed: number;
  previous?: unknown;
  layouts: { objects: { id: string; pose: Record<string, number> }[]; fixtures: { pose: Record<string, number> }[] }[];
  [k: string]: unknown;
}
function edited(edit: (v: EditableSet) => void): string {
  const v = JSON.parse(serializeLayoutSet(base()));
  delete v.sha256;
  edit(v);
  // pinLayoutSet would drop unknown fields; hash the edited body as the file holds it.
  return `${JSON.stringify({ ...v, sha256: pinned(v) }, null, 2)}\n`;
}
function pinned(v: EditableSet): string {
  try {
    return pinLayoutSet(v as never).sha256;
  } catch {
    return '0'.repeat(64);
  }
}

function refusedBoth(text: string, re: RegExp): void {
  for (const [what, fn] of [
    ['verify', () => parseLayoutSet(text, 'set.json')],
    ['bump', () => bumpLayoutSet(text, 'set.json')],
  ] as const) {
    assert.throws(fn, (e: unknown) => {
      assert.ok(
        e instanceof LayoutSetError,
        `${what}: expected a LayoutSetError, got ${(e as Error)?.name}: ${(e as Error)?.message}`,
      );
      assert.match(e.message, re, what);
      assert.ok(!e.message.includes('\n'), `${what}: one line`);
      assert.ok(e.message.length < 400, `${what}: one short sentence, not ${e.message.length} characters`);
      return true;
    });
  }
}

const deep = (n: number) => `${'['.repeat(n)}${']'.repeat(n)}`;

test('nesting thousands deep is refused before it is walked, wherever it sits', () => {
  const ok = serializeLayoutSet(base());
  refusedBoth(ok.replace('"format": "tandem.layout-set/1"', `"format": ${deep(50_000)}`), /nests deeper than 8 levels/);
  refusedBoth(
    ok.replace(
      '"seed": 9',
      `"seed": 9, "previous": {"version": 1, "sha256": "${'a'.repeat(64)}", "note": ${deep(20_000)}}`,
    ),
    /nests deeper than 8 levels/,
  );
  refusedBoth(deep(200_000), /nests deeper than 8 levels/);
});

test('a file larger than any layout set is refused by its size', () => {
  const huge = `{"format": "tandem.layout-set/1", "pad": "${'x'.repeat(33 * 2 ** 20)}"}`;
  refusedBoth(huge, /is 33\.0 MiB; a layout set is at most 32 MiB/);
});

test('unknown keys under "previous" are refused by name', () => {
  refusedBoth(
    edited((v) => {
      v.version = 2;
      v.previous = { version: 1, sha256: 'b'.repeat(64), comment: 'hi' };
    }),
    /"previous" has an unexpected field 'comment'/,
  );
  refusedBoth(
    edited((v) => (v.previous = { version: 1, sha256: 'b'.repeat(64) })),
    /malformed "previous" field.*with N from 1 to the set's version − 1/,
  );
});

test('a lone UTF-16 surrogate in an id is refused in words, not a crash in canonicalisation', () => {
  const text = edited((v) => (v.layouts[0].objects[0].id = 'bottle\ud800'));
  refusedBoth(text.replace('bottle\ud800', 'bottle\\ud800'), /object id .* holds a lone UTF-16 surrogate/);
  const ctrl = edited((v) => (v.layouts[0].objects[0].id = 'bot\u0007tle'));
  refusedBoth(ctrl, /object id "bot\\u0007tle" .*printable/);
});

test('coordinates must be finite, on the table and physical', () => {
  refusedBoth(
    edited((v) => (v.layouts[0].objects[0].pose.x = 1e299)),
    /layout 0 object '[^']+' is at x = 1e\+299 m, y = [-\d.]+ m, off the table: no part of it rests on the table \(x from -0\.5 to 0\.5 m, y from -0\.6 to 0\.6 m\)/,
  );
  refusedBoth(
    edited((v) => (v.layouts[0].objects[0].pose.y = -3)),
    /is at x = [-\d.]+ m, y = -3 m, off the table/,
  );
  refusedBoth(
    edited((v) => (v.layouts[0].objects[0].pose.yawRad = 1e10)),
    /has yawRad 10000000000; a yaw is between -6\.283 and 6\.283 rad/,
  );
  refusedBoth(
    edited((v) => (v.layouts[0].fixtures[0].pose.x = -7)),
    /fixture '[^']+' is at x = -7 m, .*off the table/,
  );
  // Hanging over the edge is allowed (a layout may provoke a fall); a footprint that misses the table is not.
  assert.equal(
    parseLayoutSet(
      edited((v) => (v.layouts[0].objects[0].pose.x = 0.53)),
      'set.json',
    ).layouts[0].objects[0].pose.x,
    0.53,
  );
  refusedBoth(
    edited((v) => (v.layouts[0].objects[0].pose.x = 0.6)),
    /is at x = 0\.6 m, .*off the table/,
  );
  refusedBoth(
    edited((v) => (v.seed = 1e300)),
    /seed 1e\+300/,
  );
});

const dir = mkdtempSync(join(tmpdir(), 'tandem-layout-hostile-'));
test.after(() => rmSync(dir, { recursive: true, force: true }));

test('tandem layouts verify: each refusal is one line on stderr and its documented exit code 1', async () => {
  const cases: [string, string, RegExp][] = [
    ['deep.json', deep(100_000), /nests deeper than 8 levels/],
    [
      'surrogate.json',
      edited((v) => (v.layouts[0].objects[0].id = 'x')).replace('"id": "x"', '"id": "x\\udfff"'),
      /lone UTF-16 surrogate/,
    ],
    ['far.json', edited((v) => (v.layouts[1].objects[0].pose.x = 1e299)), /off the table/],
  ];
  for (const [name, text, re] of cases) {
    writeFileSync(join(dir, name), text);
    const r = await runInProcess(['layouts', 'verify', name], dir);
    assert.equal(r.code, 1, `${name}: ${r.stderr}`);
    assert.match(r.stderr, re, name);
    assert.equal(r.stderr.trim().split('\n').length, 1, `${name}: ${r.stderr}`);
    const b = await runInProcess(['layouts', 'bump', name, '-o', `${name}.v2.json`], dir);
    assert.equal(b.code, 2, `${name} bump: ${b.stderr}`);
    assert.match(b.stderr, re);
  }
});
