import { test } from 'node:test';
import assert from 'node:assert/strict';
import { concatResiduals } from '../../../calibration/sysid/residuals.js';
import type { ReplayReply } from '../../../calibration/sysid/replay-pool.js';

// One evaluation's residual vector, episode after episode, as the fit's optimiser sees it.
const reply = (residuals: number[], problem?: string): ReplayReply => ({
  id: 0,
  residuals: Float64Array.from(residuals),
  rmsRad: [],
  ...(problem ? { problem } : {}),
});

test('an episode without samples of the phase adds none and does not fail the evaluation (a rollout that grasps right after the burn-in has no free motion)', () => {
  // Seen in CI: a code-policy rollout on the cell had no free-motion sample in the fitted window,
  // and every starting point of the fit was refused as "every replay failed".
  assert.deepEqual(Array.from(concatResiduals([reply([1, 2]), reply([]), reply([3])])!), [1, 2, 3]);
});

test('a replay that failed fails the evaluation, and so does one with nothing to compare at all', () => {
  assert.equal(concatResiduals([reply([1, 2]), reply([], 'the sim blew up at 3.2 s')]), undefined);
  assert.equal(concatResiduals([reply([]), reply([])]), undefined);
});
