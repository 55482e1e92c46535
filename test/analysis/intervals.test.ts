import { test } from 'node:test';
import assert from 'node:assert/strict';
import { clopperPearsonInterval, wilsonInterval } from '../../src/analysis/intervals.js';
import {
  betaQuantile,
  logGamma,
  normalQuantile,
  regularizedIncompleteBeta,
} from '../../src/analysis/special-functions.js';

const close = (actual: number, expected: number, tol: number, what = ''): void =>
  assert.ok(Math.abs(actual - expected) <= tol, `${what} ${actual} is not within ${tol} of ${expected}`);

/** P[X ≥ k] for X ~ Binomial(n, p), summed term by term (exact up to rounding). */
function binomialUpperTail(k: number, n: number, p: number): number {
  let logC = 0; // log C(n, 0)
  let total = 0;
  for (let i = 0; i <= n; i++) {
    if (i > 0) logC += Math.log(n - i + 1) - Math.log(i);
    if (i >= k) total += Math.exp(logC + i * Math.log(p) + (n - i) * Math.log1p(-p));
  }
  return total;
}

test('z for 95% is 1.959963984540054', () => {
  close(normalQuantile(0.975), 1.959963984540054, 1e-14);
  close(normalQuantile(0.5), 0, 0);
  close(normalQuantile(0.001), -3.090232306167813, 1e-12);
});

test('log-gamma matches factorials and Γ(1/2) = √π', () => {
  close(logGamma(11), Math.log(3628800), 1e-12);
  close(logGamma(0.5), 0.5 * Math.log(Math.PI), 1e-13);
  close(logGamma(101), 363.73937555556347, 1e-9); // ln(100!)
});

test('the incomplete beta function equals exact binomial tail sums', () => {
  // I_p(k, n−k+1) = P[Bin(n, p) ≥ k]: the identity Clopper–Pearson rests on.
  for (const n of [1, 2, 5, 10, 30, 60]) {
    for (let k = 1; k <= n; k++) {
      for (const p of [0.01, 0.1, 0.37, 0.5, 0.8, 0.99]) {
        close(regularizedIncompleteBeta(p, k, n - k + 1), binomialUpperTail(k, n, p), 1e-12, `n=${n} k=${k} p=${p}`);
      }
    }
  }
});

test('the Beta quantile inverts the incomplete beta function', () => {
  for (const [a, b] of [
    [1, 1],
    [8, 3],
    [0.5, 0.5],
    [50, 200],
    [1, 10],
  ] as const) {
    for (const p of [0.001, 0.025, 0.5, 0.975, 0.999]) {
      const x = betaQuantile(p, a, b);
      close(regularizedIncompleteBeta(x, a, b), p, 1e-12, `a=${a} b=${b} p=${p}`);
    }
  }
  close(betaQuantile(0.3, 1, 1), 0.3, 1e-15); // Beta(1, 1) is uniform
});

test('8 of 10: Wilson [0.49, 0.94], Clopper–Pearson [0.44, 0.975]', () => {
  // Wilson by hand, z = 1.95996: p̂ = 0.8, z²/n = 0.384146, denominator 1.384146;
  // centre = (0.8 + 0.192073) / 1.384146 = 0.716740;
  // half = 1.95996 · √(0.016 + 0.0096037) / 1.384146 = 1.95996 · 0.160012 / 1.384146 = 0.226578;
  // → [0.490162, 0.943318].
  const w = wilsonInterval(8, 10);
  close(w.lower, 0.490162, 1e-6, 'Wilson lower');
  close(w.upper, 0.943318, 1e-6, 'Wilson upper');
  assert.equal(w.estimate, 0.8);
  // Clopper–Pearson: the p where P[X ≥ 8 | p] = 0.025 and where P[X ≤ 8 | p] = 0.025.
  const cp = clopperPearsonInterval(8, 10);
  close(cp.lower, 0.4439045, 1e-7, 'C–P lower');
  close(cp.upper, 0.9747893, 1e-7, 'C–P upper');
  close(binomialUpperTail(8, 10, cp.lower), 0.025, 1e-12);
  close(1 - binomialUpperTail(9, 10, cp.upper), 0.025, 1e-12);
});

test('0 of 10: upper bounds 0.28 (Wilson) and 0.31 (Clopper–Pearson), lower bounds exactly 0', () => {
  // Wilson at k = 0: upper = (z²/n) / (1 + z²/n) = 0.384146 / 1.384146 = 0.277531.
  const w = wilsonInterval(0, 10);
  assert.equal(w.lower, 0);
  close(w.upper, 0.384146 / 1.384146, 1e-6);
  // Clopper–Pearson at k = 0 has the closed form 1 − (α/2)^(1/n) = 1 − 0.025^0.1 = 0.308497.
  const cp = clopperPearsonInterval(0, 10);
  assert.equal(cp.lower, 0);
  close(cp.upper, 1 - 0.025 ** 0.1, 1e-12);
  close(cp.upper, 0.3085, 1e-4);
});

test('10 of 10 mirrors 0 of 10', () => {
  const cp = clopperPearsonInterval(10, 10);
  assert.equal(cp.upper, 1);
  close(cp.lower, 0.025 ** 0.1, 1e-12);
  const w = wilsonInterval(10, 10);
  assert.equal(w.upper, 1);
  close(w.lower, 1 - 0.384146 / 1.384146, 1e-6);
});

test('Clopper–Pearson holds its tail probabilities for every k of n = 25', () => {
  for (let k = 1; k < 25; k++) {
    const cp = clopperPearsonInterval(k, 25);
    close(binomialUpperTail(k, 25, cp.lower), 0.025, 1e-10, `lower k=${k}`);
    close(1 - binomialUpperTail(k + 1, 25, cp.upper), 0.025, 1e-10, `upper k=${k}`);
    const w = wilsonInterval(k, 25);
    assert.ok(cp.lower <= w.lower && w.upper <= cp.upper, `Clopper–Pearson is the wider interval at k=${k}`);
  }
});

test('a wider confidence gives a wider interval; bad counts are refused', () => {
  const w90 = wilsonInterval(3, 12, { confidence: 0.9 });
  const w99 = wilsonInterval(3, 12, { confidence: 0.99 });
  assert.ok(w99.lower < w90.lower && w99.upper > w90.upper);
  assert.throws(() => wilsonInterval(11, 10), /successes must be a whole number from 0 to 10/);
  assert.throws(() => clopperPearsonInterval(1, 0), /trials must be a whole number of at least 1/);
  assert.throws(() => clopperPearsonInterval(1.5, 4), /successes/);
  assert.throws(() => wilsonInterval(1, 4, { confidence: 1 }), /confidence/);
});
