/** The placement covariate's numbers, worked by hand. */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { placementCovariate } from '../../src/analysis/placement-covariate.js';

test('placement errors against progress: counts, mean and worst error, and Pearson r over the checked, scored rollouts', () => {
  // Errors 2, 4, 6 mm with progress 1, 0.5, 0: a perfect negative line, r = −1. One unchecked, one awaiting its score.
  const c = placementCovariate([
    { progress: 1, placement: { checked: true, maxErrorMm: 2 } },
    { progress: 0.5, placement: { checked: true, maxErrorMm: 4 } },
    { progress: 0, placement: { checked: true, maxErrorMm: 6 } },
    { progress: null, placement: { checked: true, maxErrorMm: 8 } },
    { progress: 1, placement: { checked: false } },
    { progress: 1, placement: null },
  ])!;
  assert.deepEqual([c.rollouts, c.checked, c.unchecked, c.meanMaxErrorMm, c.worstMaxErrorMm], [5, 4, 1, 5, 8]);
  assert.ok(Math.abs(c.errorProgressR! + 1) < 1e-12);
  assert.equal(
    c.sentence,
    'placement checked before 4 of 5 rollouts (1 unchecked); worst object 5.0 mm off on average, 8.0 mm at most; r(error, progress) -1.00 over 3',
  );
  assert.equal(placementCovariate([{ progress: 1, placement: null }]), null);
});
