import { test } from 'node:test';
import assert from 'node:assert/strict';
import {
  coordinateSigmas,
  levenbergMarquardt,
  type LmProblem,
} from '../../../calibration/sysid/levenberg-marquardt.js';

/** y = a·exp(−b·x) + c on 40 points, parameters mapped from [0, 1]. */
function decayProblem(truth: readonly number[]): LmProblem & { calls: number[] } {
  const xs = Array.from({ length: 40 }, (_, i) => i / 8);
  const f = (u: ArrayLike<number>, x: number): number => 2 * u[0] * Math.exp(-4 * u[1] * x) + u[2];
  const ys = xs.map((x) => f(truth, x));
  const calls: number[] = [];
  return {
    dimension: 3,
    calls,
    async evaluate(points) {
      calls.push(points.length);
      return points.map((u) => Float64Array.from(xs, (x, i) => ys[i] - f(u, x)));
    },
  };
}

test('Levenberg–Marquardt recovers the parameters of a nonlinear model and asks for the Jacobian in one batch per iteration', async () => {
  const truth = [0.7, 0.35, 0.2];
  const p = decayProblem(truth);
  const r = await levenbergMarquardt(p, [0.4, 0.6, 0.5], { maxIterations: 30, relativeTolerance: 1e-9 });
  r.u.forEach((u, k) => assert.ok(Math.abs(u - truth[k]) < 1e-4, `u[${k}] = ${u}, truth ${truth[k]}`));
  assert.ok(r.cost < 1e-10, `cost ${r.cost}`);
  // Every batch after the first point is the Jacobian (3 columns) or the trial steps (2), never one point at a time.
  assert.deepEqual([...new Set(p.calls.slice(1))].sort(), [2, 3]);
});

test('bounds hold: a truth outside [0, 1] ends on the bound, never beyond it', async () => {
  const p = decayProblem([0.7, 0.35, 1.4]);
  const r = await levenbergMarquardt(p, [0.5, 0.5, 0.5], { maxIterations: 30 });
  assert.ok(r.u.every((u) => u >= 0 && u <= 1));
  assert.ok(Math.abs(r.u[2] - 1) < 1e-9, `u[2] = ${r.u[2]}`);
});

test('grouped Jacobian columns: separable parameters moved together in one evaluation still converge to each truth', async () => {
  // Two independent residual blocks, each owned by one parameter: one evaluation moves both.
  const truth = [0.3, 0.8];
  const calls: number[] = [];
  const r = await levenbergMarquardt(
    {
      dimension: 2,
      groups: [[0, 1]],
      owns: (k, i) => (i < 10 ? 0 : 1) === k,
      async evaluate(points) {
        calls.push(points.length);
        return points.map((u) =>
          Float64Array.from({ length: 20 }, (_, i) =>
            i < 10 ? Math.sin(3 * (u[0] - truth[0])) * (1 + i) : (u[1] - truth[1]) ** 3 + (u[1] - truth[1]),
          ),
        );
      },
    },
    [0.6, 0.4],
    { maxIterations: 40, relativeTolerance: 1e-12 },
  );
  assert.ok(Math.abs(r.u[0] - truth[0]) < 1e-3 && Math.abs(r.u[1] - truth[1]) < 1e-3, `u = ${[...r.u]}`);
  assert.ok(
    calls.slice(1).every((n) => n <= 2),
    'one Jacobian evaluation for both parameters',
  );
});

test('a failed evaluation is never accepted as a step', async () => {
  const inner = decayProblem([0.7, 0.35, 0.2]);
  const r = await levenbergMarquardt(
    {
      dimension: 3,
      // Anything with u[0] > 0.75 "blows up", like a sim that went unstable.
      async evaluate(points) {
        const rs = await inner.evaluate(points);
        return rs.map((x, i) => (points[i][0] > 0.75 ? undefined : x));
      },
    },
    [0.4, 0.6, 0.5],
    { maxIterations: 30 },
  );
  assert.ok(r.u[0] <= 0.75);
  assert.ok(Math.abs(r.u[0] - 0.7) < 1e-3);
});

test('coordinate σ from the Jacobian matches linear regression’s textbook standard error', () => {
  // y = θ·x + noise: σ(θ) = s / sqrt(Σx²) with s² = RSS / (n − 1).
  const xs = [1, 2, 3, 4, 5, 6];
  const noise = [0.1, -0.2, 0.05, 0.15, -0.1, 0.0];
  const J = Float64Array.from(xs, (x) => -x);
  const r = Float64Array.from(noise);
  const s2 = noise.reduce((s, e) => s + e * e, 0) / (xs.length - 1);
  const expected = Math.sqrt(s2 / xs.reduce((s, x) => s + x * x, 0));
  const [sigma] = coordinateSigmas(J, r, 1);
  assert.ok(Math.abs(sigma - expected) < 1e-12, `${sigma} vs ${expected}`);
  // A parameter no residual depends on has no information at all.
  const [loose] = coordinateSigmas(new Float64Array(6), r, 1);
  assert.equal(loose, Infinity);
});
