import { test } from 'node:test';
import assert from 'node:assert/strict';
import { bootstrapMean, bootstrapMeanOverLayouts, quantileSorted } from '../../src/analysis/bootstrap.js';
import { summarizeByTier } from '../../src/analysis/tier-summary.js';
import { clopperPearsonInterval, wilsonInterval } from '../../src/analysis/intervals.js';

test('the same seed gives the same interval to the last digit; another seed moves it', () => {
  // Irregular values, so that two different resample streams cannot land on the same quantiles by coincidence.
  const values = [0.031, 0.274, 0.513, 0.497, 0.771, 0.993, 0.942, 0.218, 0.556, 0.885];
  const a = bootstrapMean(values, { seed: 42 });
  const b = bootstrapMean(values, { seed: 42 });
  const c = bootstrapMean(values, { seed: 43 });
  assert.deepEqual(a, b);
  assert.ok(a.lower !== c.lower || a.upper !== c.upper);
  assert.ok(Math.abs(a.estimate - 0.568) < 1e-12);
  assert.ok(a.lower < a.estimate && a.estimate < a.upper);
});

test('two layouts scoring 0 and 1: the resampled means are 0, ½, 1, so the 95% interval is [0, 1]', () => {
  // Each resample draws two layouts: P(mean 0) = P(mean 1) = 1/4, more than the 2.5% tails.
  const r = bootstrapMean([0, 1], { seed: 1 });
  assert.equal(r.lower, 0);
  assert.equal(r.upper, 1);
  assert.equal(r.estimate, 0.5);
});

test('with many layouts the percentile interval approaches mean ± 1.96·s/√n', () => {
  // 400 layouts with progress spread evenly over [0, 1]: s = √(1/12 · 401/399) ≈ 0.2894, s/√400 ≈ 0.01447 → ±0.02836.
  const values = Array.from({ length: 400 }, (_, i) => i / 399);
  const r = bootstrapMean(values, { seed: 7, resamples: 20_000 });
  const sd = Math.sqrt(values.reduce((s, v) => s + (v - 0.5) ** 2, 0) / 399);
  const half = (1.96 * sd) / Math.sqrt(400);
  assert.ok(Math.abs(r.upper - 0.5 - half) < 0.1 * half, `upper ${r.upper} vs ${0.5 + half}`);
  assert.ok(Math.abs(0.5 - r.lower - half) < 0.1 * half, `lower ${r.lower} vs ${0.5 - half}`);
});

test('repeats of a layout do not narrow the interval: resampling is over layouts', () => {
  const perLayout = [0, 0.5, 1, 0.25, 0.75];
  const once = bootstrapMeanOverLayouts(
    perLayout.map((v) => [v]),
    { seed: 3 },
  );
  const twentyEach = bootstrapMeanOverLayouts(
    perLayout.map((v) => Array(20).fill(v)),
    { seed: 3 },
  );
  assert.equal(twentyEach.lower, once.lower);
  assert.equal(twentyEach.upper, once.upper);
  assert.equal(twentyEach.rollouts, 100);
  assert.equal(twentyEach.layouts, 5);
  // Treating the 100 rollouts as independent would claim a much narrower interval.
  const naive = bootstrapMean(
    perLayout.flatMap((v) => Array(20).fill(v)),
    { seed: 3 },
  );
  assert.ok(naive.upper - naive.lower < 0.5 * (once.upper - once.lower));
});

test('quantiles interpolate between order statistics', () => {
  assert.equal(quantileSorted([1, 2, 3, 4], 0.5), 2.5);
  assert.equal(quantileSorted([1, 2, 3, 4], 0), 1);
  assert.equal(quantileSorted([1, 2, 3, 4], 1), 4);
  assert.throws(() => bootstrapMean([], { seed: 1 }), /at least one layout/);
  assert.throws(() => bootstrapMean([0.5, Number.NaN], { seed: 1 }), /not a number/);
});

test('summarizeByTier: per-tier means, success counts with Wilson and Clopper–Pearson, then all tiers pooled', () => {
  const rollouts = [
    // tier 1: layout 0 twice (1, 0.5 → layout mean 0.75), layout 1 once (1) → mean over layouts 0.875
    { tier: 1, layoutIndex: 0, progress: 1 },
    { tier: 1, layoutIndex: 0, progress: 0.5 },
    { tier: 1, layoutIndex: 1, progress: 1 },
    // tier 3: 0 and 1/3 → mean 1/6, no success
    { tier: 3, layoutIndex: 2, progress: 0 },
    { tier: 3, layoutIndex: 3, progress: 1 / 3 },
  ];
  const [t1, t3, all] = summarizeByTier(rollouts, { seed: 5, resamples: 2000 });
  assert.equal(t1.tier, 1);
  assert.equal(t1.rollouts, 3);
  assert.equal(t1.layouts, 2);
  assert.equal(t1.meanProgress, 0.875);
  assert.equal(t1.successes, 2);
  assert.deepEqual(t1.successWilson, wilsonInterval(2, 3));
  // Success bootstrapped over layouts: layout 0 succeeded 1 of 2 (0.5), layout 1 1 of 1 → estimate 0.75.
  assert.equal(t1.successRateInterval.estimate, 0.75);
  assert.equal(t1.successRateInterval.layouts, 2);
  assert.deepEqual(t1.successClopperPearson, clopperPearsonInterval(2, 3));
  assert.equal(t3.tier, 3);
  assert.equal(t3.successes, 0);
  assert.ok(Math.abs(t3.meanProgress - 1 / 6) < 1e-15);
  assert.equal(t3.successWilson.lower, 0);
  assert.equal(all.tier, 'all');
  assert.equal(all.rollouts, 5);
  assert.equal(all.layouts, 4);
  // pooled: layout means 0.75, 1, 0, 1/3 → (2.0833…) / 4
  assert.ok(Math.abs(all.meanProgress - (0.75 + 1 + 0 + 1 / 3) / 4) < 1e-15);
  assert.equal(all.successes, 2);
  // Reproducible, and an explicit success flag overrides "progress = 1".
  assert.deepEqual(summarizeByTier(rollouts, { seed: 5, resamples: 2000 }), [t1, t3, all]);
  const flagged = summarizeByTier(
    rollouts.map((r) => ({ ...r, success: r.progress >= 0.5 })),
    { seed: 5, resamples: 2000 },
  );
  assert.equal(flagged[2].successes, 3);
  assert.deepEqual(summarizeByTier([], { seed: 1 }), []);
  assert.throws(() => summarizeByTier([{ tier: 1, progress: 1.5 }], { seed: 1 }), /rollout 0 has progress 1.5/);
});

test('summaries from per-layout outcomes equal summaries from the rollouts themselves', async () => {
  const { summarizeLayoutsByTier } = await import('../../src/analysis/tier-summary.js');
  const rollouts = [
    { tier: 2, layoutIndex: 0, progress: 1 },
    { tier: 2, layoutIndex: 0, progress: 0.25 },
    { tier: 2, layoutIndex: 1, progress: 0.5 },
    { tier: 4, layoutIndex: 2, progress: 1 },
    { tier: 4, layoutIndex: 3, progress: 0 },
    { tier: 4, layoutIndex: 3, progress: 1 },
  ];
  const layouts = [
    { tier: 2, rollouts: 2, meanProgress: 0.625, successes: 1 },
    { tier: 2, rollouts: 1, meanProgress: 0.5, successes: 0 },
    { tier: 4, rollouts: 1, meanProgress: 1, successes: 1 },
    { tier: 4, rollouts: 2, meanProgress: 0.5, successes: 1 },
  ];
  assert.deepEqual(
    summarizeLayoutsByTier(layouts, { seed: 9, resamples: 500 }),
    summarizeByTier(rollouts, { seed: 9, resamples: 500 }),
  );
  assert.throws(
    () => summarizeLayoutsByTier([{ tier: 1, rollouts: 2, meanProgress: 0.5, successes: 3 }], { seed: 1 }),
    /3 successes of 2/,
  );
});
