import { test } from 'node:test';
import assert from 'node:assert/strict';
import { controlVariateMean } from '../../src/analysis/control-variate.js';
import { createRng } from '../../src/layouts/random.js';

/** Layouts with a hidden difficulty d: sim progress tracks it (noise sd σs), real progress is sim's shifted down (a reality gap) with noise. */
function world(seed: number, layouts: number, simNoise: number): { real: number; sim: number }[] {
  const rng = createRng(seed);
  const clip = (x: number) => Math.min(1, Math.max(0, x));
  const gauss = () => Math.sqrt(-2 * Math.log(1 - rng.next())) * Math.cos(2 * Math.PI * rng.next());
  return Array.from({ length: layouts }, () => {
    const d = rng.next();
    return { sim: clip(d + simNoise * gauss()), real: clip(d - 0.1 + 0.05 * gauss()) };
  });
}

test('with sim that tracks the real rig, the control-variate interval is narrower than real-only for the same real rollouts', () => {
  const all = world(5, 200, 0.02);
  const paired = all.slice(0, 12);
  const simOnly = all.slice(12).map((l) => l.sim);
  const cv = controlVariateMean(paired, simOnly, { seed: 1 });
  assert.ok(cv.widthRatio !== null && cv.widthRatio < 0.6, `width ratio ${cv.widthRatio}`);
  assert.ok(cv.equivalentRealLayouts! > 2 * 12, `equivalent real layouts ${cv.equivalentRealLayouts}`);
  assert.ok(cv.beta > 0.5, `beta ${cv.beta}`);
  // The real mean over all 200 layouts (what it estimates) is inside the interval; sim's bias (+0.1) is corrected.
  const truth = all.reduce((s, l) => s + l.real, 0) / all.length;
  assert.ok(cv.lower <= truth && truth <= cv.upper, `[${cv.lower}, ${cv.upper}] vs ${truth}`);
  const simMean = all.reduce((s, l) => s + l.sim, 0) / all.length;
  assert.ok(Math.abs(cv.estimate - truth) < Math.abs(simMean - truth), 'sim alone is biased, the estimate is not');
  assert.equal(cv.folds, 5);
  assert.equal(cv.betaByFold.length, 5);
});

test('sim that says nothing about the real rig gives no gain (β ≈ 0, width about the real-only one)', () => {
  const rng = createRng(9);
  const paired = Array.from({ length: 20 }, () => ({ real: rng.next(), sim: rng.next() }));
  const simOnly = Array.from({ length: 200 }, () => rng.next());
  const cv = controlVariateMean(paired, simOnly, { seed: 2 });
  assert.ok(Math.abs(cv.beta) < 0.35, `beta ${cv.beta}`);
  assert.ok(cv.widthRatio! > 0.8, `width ratio ${cv.widthRatio}`);
});

test('without sim-only layouts sim has nothing to add: about the real mean, and no claimed gain', () => {
  // With one β the correction would cancel exactly; cross-fitted βs differ per fold, so only nearly.
  const paired = world(2, 10, 0.05);
  const cv = controlVariateMean(paired, [], { seed: 3 });
  const realMean = paired.reduce((s, l) => s + l.real, 0) / paired.length;
  assert.ok(Math.abs(cv.estimate - realMean) < 0.03, `${cv.estimate} vs ${realMean}`);
  assert.ok(cv.widthRatio! > 0.85, `width ratio ${cv.widthRatio}`);
  assert.throws(() => controlVariateMean(paired.slice(0, 1), [], { seed: 1 }), /at least 2 layouts/);
  assert.throws(
    () =>
      controlVariateMean(
        [
          { real: 0.5, sim: 1.5 },
          { real: 0.5, sim: 0.5 },
        ],
        [],
        { seed: 1 },
      ),
    /paired layout 0/,
  );
});
