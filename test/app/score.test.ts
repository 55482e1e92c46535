import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { runInProcess, runTandem, PROJECT_ROOT } from '../helpers/cli.js';
import type { LayoutSet } from '../../src/layouts/layout-set.js';

let dir = '';
before(() => {
  dir = mkdtempSync(join(tmpdir(), 'tandem-score-'));
});
after(() => rmSync(dir, { recursive: true, force: true }));

const GOLDEN = join(PROJECT_ROOT, 'test/fixtures/layouts/bottles-golden.json');
const golden = () => JSON.parse(readFileSync(GOLDEN, 'utf8')) as LayoutSet;
const write = (name: string, v: unknown) => {
  const p = join(dir, name);
  writeFileSync(p, typeof v === 'string' ? v : JSON.stringify(v));
  return p;
};

test('score prints progress and counts from an end-state file', async () => {
  const layout = golden().layouts[2];
  const n = layout.objects.length;
  const ends = layout.objects.map((o, i) => (i === 0 ? { id: o.id } : { id: o.id, region: 'bin' }));
  const r = await runTandem([
    'score',
    '--layout-set',
    GOLDEN,
    '--layout',
    '2',
    '--end-state',
    write('ends.json', ends),
  ]);
  assert.equal(r.code, 0, r.stderr);
  assert.match(r.stdout, new RegExp(`${n - 1} of ${n} bottles in the bin`));
  assert.match(r.stdout, new RegExp(`progress ${((n - 1) / n).toFixed(3)}`));
  assert.match(r.stdout, new RegExp(`inBin ${n - 1}, target ${n}`));
  const j = await runInProcess(
    [
      'score',
      '--layout-set',
      GOLDEN,
      '--layout',
      '2',
      '--end-state',
      write('wrapped.json', { objects: ends }),
      '--json',
    ],
    dir,
  );
  assert.equal(j.code, 0, j.stderr);
  const out = JSON.parse(j.stdout) as {
    progress: number;
    counts: Record<string, number>;
    layoutSet: string;
    tier: number;
  };
  assert.equal(out.progress, (n - 1) / n);
  assert.deepEqual(out.counts, { inBin: n - 1, target: n });
  assert.equal(out.layoutSet, golden().sha256);
  assert.equal(out.tier, 5);
});

test('score: a mug layout scores with the mug rule', async () => {
  const setFile = join(dir, 'mugs.json');
  const s = await runInProcess(
    ['layouts', 'sample', '--task', 'mug-flipping', '--tiers', '5', '--per-tier', '1', '--seed', '4', '-o', setFile],
    dir,
  );
  assert.equal(s.code, 0, s.stderr);
  const set = JSON.parse(readFileSync(setFile, 'utf8')) as LayoutSet;
  const mugs = set.layouts[0].objects;
  const notUpright = mugs.filter((m) => m.posture !== 'upright').length;
  // Every mug ends upright: full progress.
  const r = await runInProcess(
    [
      'score',
      '--layout-set',
      setFile,
      '--layout',
      '0',
      '--end-state',
      write(
        'mugs-up.json',
        mugs.map((m) => ({ id: m.id, upright: true })),
      ),
      '--json',
    ],
    dir,
  );
  assert.equal(r.code, 0, r.stderr);
  const out = JSON.parse(r.stdout) as { progress: number; counts: Record<string, number> };
  assert.equal(out.progress, 1);
  assert.equal(out.counts.newlyUpright, notUpright);
});

test('score: bad end states and bad references are one sentence and a non-zero exit', async () => {
  const real = await runTandem([
    'score',
    '--layout-set',
    GOLDEN,
    '--layout',
    '0',
    '--end-state',
    write('typo.json', [{ id: 'botle-1', region: 'bin' }]),
  ]);
  assert.equal(real.code, 2);
  assert.match(real.stderr, /^The end state names 'botle-1', which is not in layout 0 \(its objects: bottle-1\)\.\n$/);
  const layout = golden().layouts[0];
  const cases: [string[], RegExp][] = [
    [
      [
        '--layout',
        '0',
        '--end-state',
        write('unknown.json', [
          { id: 'bottle-1', region: 'bin' },
          { id: 'bottle-7', region: 'bin' },
        ]),
      ],
      /'bottle-7', which is not in layout 0/,
    ],
    [['--layout', '2', '--end-state', write('missing.json', [{ id: 'bottle-1', region: 'bin' }])], /no entry for/],
    [
      ['--layout', '0', '--end-state', write('region.json', [{ id: layout.objects[0].id, region: 'floor' }])],
      /region 'floor', which bottles-in-the-bin does not have/,
    ],
    [['--layout', '0', '--end-state', write('broken.json', '[{"id": "bottle-1", ')], /broken\.json is not valid JSON/],
    [['--layout', '0', '--end-state', write('shape.json', { bottles: [] })], /is not an end state/],
    [['--layout', '9', '--end-state', write('ok.json', [{ id: 'bottle-1' }])], /Layout 9 does not exist/],
    [['--layout', '0'], /Missing --end-state/],
  ];
  for (const [extra, re] of cases) {
    const r = await runInProcess(['score', '--layout-set', GOLDEN, ...extra], dir);
    assert.notEqual(r.code, 0, extra.join(' '));
    assert.match(r.stderr, re);
    assert.doesNotMatch(r.stderr, /\n\s+at /);
    assert.equal(r.stderr.trim().split('\n').length, 1);
  }
});
