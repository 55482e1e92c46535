import { test } from 'node:test';
import assert from 'node:assert/strict';
import { bettingConfidenceSequencePath, sequentialVerdict } from '../../src/analysis/sequential.js';
import { createRng } from '../../src/layouts/random.js';

/** Partial-credit progress like a 4-bottle layout: 0, 0.25, …, 1 with probabilities from `p` (success chance per bottle). */
function progress(rng: { next(): number }, p: number): number {
  let k = 0;
  for (let i = 0; i < 4; i++) if (rng.next() < p) k += 1;
  return k / 4;
}

test('no difference: the verdict is wrong at most α of the time, however often it is looked at', () => {
  // 600 A/B runs of 80 pairs each, both policies the same (per-bottle success 0.6), looked at
  // after every pair. Anytime-valid means P(ever decided) ≤ α = 0.05; a fixed-N test peeked at
  // 80 times would be wrong far more often. Seeded, so the count is reproducible.
  const rng = createRng(7);
  let wrong = 0;
  let naiveWrong = 0;
  const runs = 600;
  for (let run = 0; run < runs; run++) {
    const xs = Array.from({ length: 80 }, () => (progress(rng, 0.6) - progress(rng, 0.6) + 1) / 2);
    const path = bettingConfidenceSequencePath(xs, 0.05, 201);
    if (path.some((b) => b.lower > 0.5 || b.upper < 0.5)) wrong += 1;
    // The same data through a fixed-N 95% z-interval, peeked at after every pair from the 5th on.
    let sum = 0;
    let sumSq = 0;
    let peekedWrong = false;
    xs.forEach((x, i) => {
      sum += x;
      sumSq += x * x;
      const n = i + 1;
      const m = sum / n;
      const sd = Math.sqrt(Math.max(0, sumSq / n - m * m));
      if (n >= 5 && sd > 0 && Math.abs(m - 0.5) > (1.96 * sd) / Math.sqrt(n)) peekedWrong = true;
    });
    if (peekedWrong) naiveWrong += 1;
  }
  assert.ok(wrong / runs <= 0.05, `decided wrongly in ${wrong} of ${runs} runs`);
  // The check can catch a test that is not anytime-valid: peeking at a fixed-N interval is wrong far more often.
  assert.ok(naiveWrong / runs > 0.1, `the peeked fixed-N interval was wrong in only ${naiveWrong} of ${runs}`);
});

test('a clear difference is decided early, for the better policy, and the sentence says to stop', () => {
  const rng = createRng(11);
  const pairs = Array.from({ length: 60 }, () => ({ a: progress(rng, 0.9), b: progress(rng, 0.3) }));
  let decidedAt = -1;
  for (let n = 1; n <= pairs.length; n++) {
    const v = sequentialVerdict(pairs.slice(0, n), { names: { a: 'act-20k', b: 'act-5k' } });
    if (v.decided) {
      decidedAt = n;
      assert.equal(v.winner, 'a');
      assert.ok(v.lower > 0 && v.lower <= v.meanDifference && v.meanDifference <= v.upper);
      assert.match(v.sentence, /^Decided after \d+ pairs: act-20k beats act-5k; .* You can stop\.$/);
      break;
    }
  }
  assert.ok(decidedAt > 0 && decidedAt <= 25, `decided after ${decidedAt} pairs`);
  // Swapping the sides swaps the winner.
  const swapped = sequentialVerdict(pairs.map((p) => ({ a: p.b, b: p.a })));
  assert.equal(swapped.winner, 'b');
});

test('undecided early on says so, and bad progress values are refused', () => {
  const v = sequentialVerdict([
    { a: 1, b: 0.75 },
    { a: 0.5, b: 0.5 },
  ]);
  assert.equal(v.decided, false);
  assert.equal(v.winner, undefined);
  assert.match(v.sentence, /^Not clear yet after 2 pairs .*Keep going\.$/);
  assert.equal(sequentialVerdict([]).decided, false);
  assert.throws(() => sequentialVerdict([{ a: 1.2, b: 0 }]), /pair 1 has a = 1\.2/);
  assert.throws(() => sequentialVerdict([{ a: 0.2, b: Number.NaN }]), /pair 1 has b = NaN/);
});

test('the confidence sequence covers the true mean and narrows as pairs accumulate', () => {
  const rng = createRng(3);
  const xs = Array.from({ length: 400 }, () => (progress(rng, 0.7) - progress(rng, 0.5) + 1) / 2);
  const path = bettingConfidenceSequencePath(xs, 0.05);
  const truth = (0.7 - 0.5 + 1) / 2;
  for (const b of path) assert.ok(b.lower <= truth && truth <= b.upper);
  assert.ok(path[399].upper - path[399].lower < (path[19].upper - path[19].lower) / 2);
});
