/**
 * The pre-registered, anytime-valid A/B comparison (src/analysis/anytime-ab.ts), against the
 * properties it promises: the confidence sequence covers the true B − A at every look in at least
 * 1 − α of seeded simulated runs, it narrows as pairs accumulate, each stopping rule is wrong at
 * most α of the time, and the words and the "about N more pairs" forecast say what happens.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { anytimeComparison, anytimeStoppingTime, type AnytimeOptions } from '../../src/analysis/anytime-ab.js';
import { bettingConfidenceSequencePath } from '../../src/analysis/sequential.js';
import { createRng, type Rng } from '../../src/layouts/random.js';

/** Partial credit like a 4-bottle layout: each bottle in the bin with chance p. */
function progress(rng: Rng, p: number): number {
  let k = 0;
  for (let i = 0; i < 4; i++) if (rng.next() < p) k += 1;
  return k / 4;
}

const OPTS: AnytimeOptions = { alpha: 0.05, margin: 0.1, stoppingRule: 'difference-or-no-difference', maxPairs: 60 };

test('coverage: the sequence holds the true B − A at every one of 60 looks in at least 1 − α of 400 seeded runs', () => {
  const rng = createRng(20261203);
  for (const [pa, pb] of [
    [0.5, 0.7],
    [0.9, 0.2],
  ] as const) {
    const truth = pb - pa;
    let missed = 0;
    const runs = 400;
    for (let run = 0; run < runs; run++) {
      const xs = Array.from({ length: 60 }, () => (progress(rng, pb) - progress(rng, pa) + 1) / 2);
      const path = bettingConfidenceSequencePath(xs, 0.05, 201);
      if (path.some((b) => 2 * b.lower - 1 > truth || 2 * b.upper - 1 < truth)) missed += 1;
    }
    assert.ok(missed / runs <= 0.05, `Δ = ${truth.toFixed(1)}: missed at some look in ${missed} of ${runs} runs`);
  }
});

test('each stopping rule is wrong at most α of the time: no false difference when there is none, no false "no difference" when there is one', () => {
  const rng = createRng(77);
  const runs = 300;
  let falseDifference = 0;
  let falseNoDifference = 0;
  for (let run = 0; run < runs; run++) {
    // Same policies: any "better" verdict at any look is wrong.
    const same = Array.from({ length: 60 }, () => progress(rng, 0.6) - progress(rng, 0.6));
    // B truly better by 0.2, more than the 0.1 margin: a "no difference" verdict is wrong.
    const better = Array.from({ length: 60 }, () => progress(rng, 0.6) - progress(rng, 0.4));
    // Looked at after every pair, stopped at the first rule that holds (anytimeComparison's rules, one pass).
    const a = anytimeStoppingTime(same, { ...OPTS, grid: 201 });
    if (a && a.kind !== 'no-difference') falseDifference += 1;
    const b = anytimeStoppingTime(better, { ...OPTS, grid: 201 });
    if (b && b.kind !== 'b-better') falseNoDifference += 1;
  }
  assert.ok(
    falseDifference / runs <= 0.05,
    `a difference was claimed between equal policies in ${falseDifference} of ${runs} runs`,
  );
  assert.ok(
    falseNoDifference / runs <= 0.05,
    `no difference was claimed for a 0.2 gap in ${falseNoDifference} of ${runs} runs`,
  );
});

test('the sequence narrows with n: at 200 pairs it is less than half as wide as at 20', () => {
  const rng = createRng(5);
  const diffs = Array.from({ length: 200 }, () => progress(rng, 0.6) - progress(rng, 0.5));
  const w = (n: number): number => {
    const v = anytimeComparison(diffs.slice(0, n), { ...OPTS, maxPairs: 200 });
    return v.upper - v.lower;
  };
  assert.ok(w(20) < 2 && w(50) < w(20) && w(200) < w(20) / 2, `widths ${w(20)}, ${w(50)}, ${w(200)}`);
});

test('the stopping time agrees with the verdict after every look', () => {
  const rng = createRng(9);
  const diffs = Array.from({ length: 40 }, () => progress(rng, 0.9) - progress(rng, 0.3));
  const first = anytimeStoppingTime(diffs, OPTS)!;
  assert.equal(first.kind, 'b-better');
  for (let n = 1; n <= first.pairs; n++)
    assert.equal(
      anytimeComparison(diffs.slice(0, n), { ...OPTS, forecast: false }).stop,
      n === first.pairs,
      `look ${n}`,
    );
});

test('the words: B better, A better, no difference — each "you may stop" with the pairs saved; otherwise about N more pairs', () => {
  const names = { a: 'policy A', b: 'policy B' };
  const b = anytimeComparison(Array(12).fill(1), { ...OPTS, maxPairs: 20, names });
  assert.equal(b.kind, 'b-better');
  assert.equal(b.stop, true);
  assert.equal(b.pairsSaved, 8);
  assert.ok(b.lower > 0 && b.estimate === 1);
  assert.match(
    b.sentence,
    /^policy B is better than policy A by 1\.00 \(95% anytime-valid \+0\.\d\d to \+1\.00\) after 12 pairs: you may stop\.$/,
  );
  const a = anytimeComparison(Array(12).fill(-0.75), { ...OPTS, maxPairs: 20, names });
  assert.equal(a.kind, 'a-better');
  assert.match(a.sentence, /^policy A is better than policy B by 0\.75 /);
  // Identical scores: the sequence closes in on 0 until it lies within ±0.1 (about 70 pairs: ruling
  // out a difference takes far longer than finding a large one).
  let none;
  for (let n = 1; n <= 100 && !none?.stop; n++)
    none = anytimeComparison(Array(n).fill(0), { ...OPTS, maxPairs: 100, names, forecast: false });
  assert.equal(none!.kind, 'no-difference');
  assert.ok(none!.lower >= -0.1 && none!.upper <= 0.1);
  assert.match(
    none!.sentence,
    /^No difference larger than 0\.(0\d|10) between policy A and policy B \(95% anytime-valid -0\.\d\d to \+0\.\d\d\) after \d+ pairs: you may stop\.$/,
  );
  // The difference-only rule never stops on "no difference".
  assert.equal(
    anytimeComparison(Array(60).fill(0), { ...OPTS, stoppingRule: 'difference', maxPairs: 100 }).kind,
    'continue',
  );
  // The plan's maximum without a verdict.
  const undecided = anytimeComparison([1, -1, 1, -1], { ...OPTS, maxPairs: 4, names });
  assert.equal(undecided.kind, 'undecided');
  assert.match(undecided.sentence, /^The plan's 4 pairs are done without a verdict/);
  // A session that ended short of its pairs (slots closed unscored) is undecided too, not "about N more".
  const short = anytimeComparison([1, 1], { ...OPTS, maxPairs: 12, names, ended: true });
  assert.equal(short.kind, 'undecided');
  assert.match(
    short.sentence,
    /^The session ended after 2 of the plan's 12 pairs without a verdict: policy B − policy A is \+1\.00 /,
  );
});

test('"about N more pairs" is what the sequence needs if the next pairs look like these', () => {
  // B always a full bottle better: after 3 pairs the forecast says k more; k more such pairs decide, k − 1 do not.
  const v = anytimeComparison([1, 1, 1], { ...OPTS, maxPairs: 30 });
  assert.equal(v.kind, 'continue');
  const k = v.morePairs!;
  assert.ok(k >= 1, v.sentence);
  assert.match(v.sentence, new RegExp(`; about ${k} more pairs?\\.$`));
  assert.equal(anytimeComparison(Array(3 + k).fill(1), { ...OPTS, maxPairs: 30 }).kind, 'b-better');
  assert.equal(anytimeComparison(Array(3 + k - 1).fill(1), { ...OPTS, maxPairs: 30 }).kind, 'continue');
  // A forecast past the plan's maximum says so instead of a number.
  const far = anytimeComparison([0.25, -0.25, 0.5], { ...OPTS, maxPairs: 6 });
  assert.equal(far.morePairs, null);
  assert.match(far.sentence, /more pairs than the plan's 3 left would be needed/);
  // With under 3 pairs the forecast is the best case, said as such.
  assert.match(anytimeComparison([1], OPTS).sentence, /about \d+ more pairs at the least\.$/);
  assert.match(anytimeComparison([], OPTS).sentence, /^No pairs yet; about \d+ more pairs at the least\.$/);
});

test('bad input is refused: differences outside [−1, 1], α, margin, rule or maximum out of range', () => {
  assert.throws(() => anytimeComparison([1.5], OPTS), /pair 1's difference is 1\.5/);
  assert.throws(() => anytimeComparison([Number.NaN], OPTS), /pair 1's difference is NaN/);
  assert.throws(() => anytimeComparison([], { ...OPTS, alpha: 0.7 }), /α must lie between 0 and 0\.5/);
  assert.throws(() => anytimeComparison([], { ...OPTS, margin: 0 }), /margin must lie between 0 and 1/);
  assert.throws(() => anytimeComparison([], { ...OPTS, maxPairs: 0 }), /maximum number of pairs/);
  assert.throws(() => anytimeComparison([], { ...OPTS, stoppingRule: 'whenever' as never }), /stopping rule is one of/);
});
