import { test } from 'node:test';
import assert from 'node:assert/strict';
import { pairSimReal, type PolicyLayoutResult } from '../../src/analysis/pairing.js';

const r = (policy: string, kind: 'sim' | 'real', layout: string, meanProgress: number): PolicyLayoutResult => ({
  policy,
  kind,
  layout,
  meanProgress,
});

test('pairs each policy on the layouts it ran both in sim and on the real rig', () => {
  const results = [
    r('act', 'sim', 'L0', 0.75),
    r('act', 'sim', 'L1', 0.5),
    r('act', 'real', 'L0', 1),
    r('pi0', 'sim', 'L0', 0.2),
    r('pi0', 'sim', 'L1', 0.4),
    r('pi0', 'real', 'L0', 0),
    r('pi0', 'real', 'L1', 0.5),
    r('sim-only', 'sim', 'L0', 0.7),
    r('disjoint', 'sim', 'L0', 0.7),
    r('disjoint', 'real', 'L1', 0.1),
  ];
  const shared = pairSimReal(results);
  // act: only L0 is shared → sim 0.75, real 1. pi0: (0.2 + 0.4)/2 = 0.3 and (0 + 0.5)/2 = 0.25.
  assert.deepEqual(
    shared.pairs.map((p) => [p.policy, p.sim, p.real, p.simLayouts, p.realLayouts]),
    [
      ['act', 0.75, 1, 1, 1],
      ['pi0', 0.30000000000000004, 0.25, 2, 2],
    ],
  );
  assert.deepEqual(shared.unpaired, ['sim-only', 'disjoint']);
  // Every layout each side has: act's sim becomes (0.75 + 0.5) / 2; 'disjoint' pairs on different layouts.
  const all = pairSimReal(results, { sharedLayoutsOnly: false });
  assert.deepEqual(
    all.pairs.map((p) => [p.policy, p.sim, p.simLayouts, p.realLayouts]),
    [
      ['act', 0.625, 2, 1],
      ['pi0', 0.30000000000000004, 2, 2],
      ['disjoint', 0.7, 1, 1],
    ],
  );
  assert.deepEqual(all.unpaired, ['sim-only']);
});

test('a layout listed twice for one side, or progress outside [0, 1], is refused', () => {
  assert.throws(
    () => pairSimReal([r('a', 'sim', 'L0', 0.5), r('a', 'sim', 'L0', 0.7)]),
    /two sim results for layout L0/,
  );
  assert.throws(() => pairSimReal([r('a', 'real', 'L0', 1.5)]), /must lie in \[0, 1\]/);
});
