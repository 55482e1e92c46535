import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { sampleLayoutSet, serializeLayoutSet, parseLayoutSet } from '../../src/layouts/layout-set.js';
import { crowdedObjects } from '../../src/layouts/focus.js';
import { openStore } from '../../src/store/store.js';
import { parseRandomizationSpec, RANDOMIZATION_KIND } from '../../src/sim/randomization.js';
import { runInProcess as tandem } from '../helpers/cli.js';

/**
 * Tier 1 (one bottle, never crowded) and tier 4 (every layout of this seed has crowded bottles and
 * lone ones). The graded policy misses every grasp of a crowded bottle: its known weakness. On
 * these layouts the scripted policy at full skill also leaves its crowded bottles (it finds no
 * clearance-aware grasp for them), so this test shows diagnose naming crowding end to end on real
 * sim rollouts, not that it tells the graded weakness from the base policy's (the pure test does
 * that with events where only the weakness fails).
 */
const set = sampleLayoutSet({ task: 'bottles-in-the-bin', tiers: [1, 4], perTier: 2, seed: 11 });
const WEAK = 'code:bottles-in-the-bin?dense-miss=1';
const SECONDS = '30';

test('on sim rollouts of a policy that misses crowded bottles, diagnose names that weakness first and the proposed randomization targets it', async () => {
  assert.ok(
    set.layouts.filter((l) => l.tier === 4).every((l) => crowdedObjects(l) > 0 && crowdedObjects(l) < l.objects.length),
    'each tier-4 layout has crowded and lone bottles',
  );
  const dir = mkdtempSync(join(tmpdir(), 'tandem-diagnose-'));
  try {
    writeFileSync(join(dir, 'set.json'), serializeLayoutSet(set));
    const data = join(dir, 'data');
    const sweep = await tandem(
      [
        'sim',
        'sweep',
        '--layouts',
        'set.json',
        '--policy',
        WEAK,
        '--workers',
        '1',
        '--seconds',
        SECONDS,
        '--data',
        data,
        '--json',
      ],
      dir,
    );
    assert.equal(sweep.code, 0, sweep.stderr);

    const report = await tandem(
      ['diagnose', '--policy', WEAK, '--layouts', 'set.json', '--data', data, '--json', '-o', 'diagnosis.html'],
      dir,
    );
    assert.equal(report.code, 0, report.stderr);
    const d = JSON.parse(report.stdout);
    assert.equal(d.rollouts.sim, set.layouts.length);
    assert.equal(d.top.pattern, 'never-grasped', report.stdout);
    assert.deepEqual(d.top.tiers, [4]);
    assert.equal(d.top.conditions[0].condition, 'crowded');
    assert.equal(d.top.conditions[0].clear, true);
    assert.equal(
      d.tiers.find((t: { tier: number }) => t.tier === 1).patterns.length,
      0,
      'a lone bottle is grasped as designed',
    );
    assert.match(
      readFileSync(join(dir, 'diagnosis.html'), 'utf8'),
      /Top pattern:<\/strong> Most frequent: never grasped/,
    );

    const text = await tandem(['diagnose', '--policy', WEAK, '--layouts', 'set.json', '--data', data], dir);
    assert.equal(text.code, 0, text.stderr);
    assert.match(
      text.stdout,
      /Most frequent: never grasped, in \d+% of rollouts \[\d+%, \d+%\], worst on tier 4; objects crowded fail this way/,
    );

    const proposed = await tandem(
      [
        'diagnose',
        '--policy',
        WEAK,
        '--layouts',
        'set.json',
        '--data',
        data,
        '--propose-randomization',
        '-o',
        'spec.json',
      ],
      dir,
    );
    assert.equal(proposed.code, 0, proposed.stderr);
    const spec = parseRandomizationSpec(readFileSync(join(dir, 'spec.json'), 'utf8'), 'spec.json');
    assert.deepEqual(spec.spec.layouts, { tiers: [4], minCrowdedObjects: 2, crowdedRadiusM: 0.15 });
    assert.equal(spec.spec.lineage?.condition, 'crowded');
    assert.equal(spec.spec.lineage?.pattern, 'never-grasped');
    assert.equal(spec.spec.lineage?.layoutSet, set.sha256);
    assert.deepEqual(spec.spec.lineage?.rolloutIds, d.top.rolloutIds);
    const store = openStore(join(data, 'tandem.sqlite'));
    try {
      assert.equal(
        store.getCalibration(spec.sha256)?.kind,
        RANDOMIZATION_KIND,
        'the spec and its lineage are in the store',
      );
    } finally {
      store.close();
    }
    // The spec's layouts, through the layout sampler: only crowded tier-4 layouts.
    const focused = await tandem(
      [
        'layouts',
        'sample',
        '--task',
        'bottles-in-the-bin',
        '--per-tier',
        '3',
        '--seed',
        '5',
        '--randomize',
        'spec.json',
        '-o',
        'focused.json',
      ],
      dir,
    );
    assert.equal(focused.code, 0, focused.stderr);
    const f = parseLayoutSet(readFileSync(join(dir, 'focused.json'), 'utf8'), 'focused.json');
    assert.ok(f.layouts.every((l) => l.tier === 4 && crowdedObjects(l) >= 2));

    const again = await tandem(
      [
        'diagnose',
        '--policy',
        WEAK,
        '--layouts',
        'set.json',
        '--data',
        data,
        '--propose-randomization',
        '-o',
        'spec.json',
      ],
      dir,
    );
    assert.equal(again.code, 2);
    assert.equal(again.stderr, 'spec.json already exists; choose another name or add --force to replace it.\n');
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});

test('diagnose refuses an unknown policy, a missing -o for a spec, and a policy with nothing to diagnose, in one sentence each', async () => {
  const dir = mkdtempSync(join(tmpdir(), 'tandem-diagnose-'));
  try {
    writeFileSync(join(dir, 'set.json'), serializeLayoutSet(set));
    const data = join(dir, 'data');
    mkdirSync(data);
    const store = openStore(join(data, 'tandem.sqlite'));
    store.upsertPolicy({ spec: 'code:idle', name: 'code:idle', checkpointSha256: null });
    store.close();
    const cases: [string[], RegExp][] = [
      [['--policy', 'code:nope'], /^There is no policy 'code:nope' in the store .*; known specs: code:idle\.\n$/],
      [
        ['--policy', 'code:idle', '--propose-randomization'],
        /^--propose-randomization writes a spec file: name it with -o, e\.g\. -o spec\.json\.\n$/,
      ],
      [
        ['--policy', 'code:idle'],
        /^Cannot diagnose code:idle on layout set [0-9a-f]{12}: there are no rollouts of it on this layout set\.\n$/,
      ],
    ];
    for (const [args, re] of cases) {
      const r = await tandem(['diagnose', '--layouts', 'set.json', '--data', data, ...args], dir);
      assert.equal(r.code, 2, `${args.join(' ')}: ${r.stdout}`);
      assert.match(r.stderr, re);
    }
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});
