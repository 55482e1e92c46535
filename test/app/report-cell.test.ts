/**
 * End to end on the emulated cell: three code policies of known, graded quality (skill 1, 0.6,
 * 0.3: seeded misses, sloppier grasps, slower moves) get a sim sweep and a few scored cell
 * rollouts each, and `tandem report` recovers their order from the store. Small on purpose
 * (tier 1, 3 sim layouts, 2 cell layouts, 30 s episodes). The cell runs on virtual time
 * (`clock: 'virtual'`, the driver's production 100 ms reply deadline): it cannot fall behind, so
 * every cell rollout must be valid.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { runTandem } from '../helpers/cli.js';
import { sampleLayoutSet, serializeLayoutSet } from '../../src/layouts/layout-set.js';

const SPECS = ['code:bottles-in-the-bin', 'code:bottles-in-the-bin?skill=0.6', 'code:bottles-in-the-bin?skill=0.3'];
const SECONDS = '20';

test('after a sim sweep and scored cell rollouts of three graded policies, the report never inverts their known order (and the sim separates best from worst)', {
  timeout: 1_800_000,
}, async (t) => {
  const dir = mkdtempSync(join(tmpdir(), 'tandem-report-cell-'));
  t.after(() => rmSync(dir, { recursive: true, force: true }));
  const data = join(dir, 'data');
  mkdirSync(data);
  // The layouts the cell bench grades on (tier 1, seed 17); 3 in sim, the first 2 on the cell.
  const set = sampleLayoutSet({ task: 'bottles-in-the-bin', tiers: [1], perTier: 3, seed: 17 });
  writeFileSync(join(dir, 'set.json'), serializeLayoutSet(set));
  const rigConfig = join(dir, 'rig.json');
  writeFileSync(rigConfig, JSON.stringify({ type: 'yam-cell', transport: 'slcan', clock: 'virtual' }));
  for (const spec of SPECS) {
    const sweep = await runTandem(
      [
        'sim',
        'sweep',
        '--layouts',
        'set.json',
        '--policy',
        spec,
        '--seconds',
        SECONDS,
        '--workers',
        '1',
        '--data',
        data,
      ],
      { cwd: dir },
    );
    assert.equal(sweep.code, 0, sweep.stderr);
    for (const layout of ['0', '1']) {
      const r = await runTandem(
        [
          'rig',
          'rollout',
          '--policy',
          spec,
          '--layouts',
          'set.json',
          '--layout',
          layout,
          '--seconds',
          SECONDS,
          '--rig-config',
          rigConfig,
          '--score-from-cell',
          '--data',
          data,
          '--json',
        ],
        { cwd: dir },
      );
      assert.equal(r.code, 0, r.stderr);
      const out = JSON.parse(r.stdout) as { status: string; progress: number | null; reason?: string };
      t.diagnostic(`${spec} layout ${layout} on the cell: ${out.status} ${out.progress ?? out.reason ?? ''}`);
      assert.equal(out.status, 'valid', r.stdout);
    }
  }
  const report = await runTandem(
    [
      'report',
      '--policies',
      SPECS.join(','),
      '--layouts',
      'set.json',
      '-o',
      'report.html',
      '--json',
      '--include-rehearsals',
      '--data',
      data,
    ],
    { cwd: dir },
  );
  assert.equal(report.code, 0, report.stderr);
  const json = JSON.parse(report.stdout);
  type P = {
    spec: string;
    pairedLayouts: number;
    real: { tiers: { meanProgress: number }[] };
    simAllLayouts: { tiers: { meanProgress: number }[] };
  };
  const policies = json.policies as P[];
  assert.deepEqual(
    policies.map((p) => p.spec),
    SPECS,
  );
  for (const p of policies)
    assert.equal(p.pairedLayouts, 2, `${p.spec} pairs its 2 cell rollouts with sim on the same layouts`);
  const real = policies.map((p) => p.real.tiers.at(-1)!.meanProgress);
  const sim = policies.map((p) => p.simAllLayouts.tiers.at(-1)!.meanProgress);
  t.diagnostic(
    `sim ${sim.map((x) => x.toFixed(2)).join(' / ')}, cell ${real.map((x) => x.toFixed(2)).join(' / ')}; MMRV ${json.correlation.mmrv.value}`,
  );
  // The known order: skill 1 ≥ 0.6 ≥ 0.3 on each side, never inverted; in the sim the best is
  // strictly above the worst. On the gapped cell, two tier-1 layouts in 30 s can tie all three
  // (seen: sim 1.00 / 1.00 / 0.00, cell 1.00 / 1.00 / 1.00) — a sim–cell gap the report shows,
  // not a ranking it got wrong.
  for (const side of [real, sim]) assert.ok(side[0] >= side[1] && side[1] >= side[2], `order ${side.join(', ')}`);
  assert.ok(sim[0] > sim[2], `sim separates the best from the worst: ${sim.join(', ')}`);
  assert.equal(json.correlation.policies, 3);
  // The real side is the emulated cell, one calibration (its truth marker); the sim side one sim calibration.
  assert.match(json.simCalibration, /^[0-9a-f]{64}$/);
  assert.match(json.realCalibration, /^[0-9a-f]{64}$/);
  assert.deepEqual(json.segregated.awaitingScore, []);
  assert.deepEqual(json.segregated.invalidOrAborted, []);
  assert.match(readFileSync(join(dir, 'report.html'), 'utf8'), /Pearson <b>r = /);
});
