import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mmrv, pearson, type PolicyPair } from '../../src/analysis/correlation.js';

const close = (actual: number, expected: number, tol: number): void =>
  assert.ok(Math.abs(actual - expected) <= tol, `${actual} is not within ${tol} of ${expected}`);
const pairs = (sim: number[], real: number[]): PolicyPair[] =>
  sim.map((s, i) => ({ policy: `p${i}`, sim: s, real: real[i] }));

test('Pearson r by hand', () => {
  // sim [0.2, 0.4, 0.6] centres to [−0.2, 0, 0.2]; real [0.1, 0.5, 0.3] centres to [−0.2, 0.2, 0].
  // Σs·r = 0.04, Σs² = 0.08, Σr² = 0.08 → r = 0.04 / √0.0064 = 0.5.
  const r = pearson(pairs([0.2, 0.4, 0.6], [0.1, 0.5, 0.3]));
  assert.equal(r.undefinedBecause, undefined);
  close(r.r!, 0.5, 1e-12);
  close(pearson(pairs([0.1, 0.2, 0.3], [0.9, 0.7, 0.5])).r!, -1, 1e-12);
});

test('a constant side has no Pearson r, and says which side', () => {
  const flatSim = pearson(pairs([0.4, 0.4, 0.4], [0.1, 0.5, 0.3]));
  assert.equal(flatSim.r, null);
  assert.match(flatSim.undefinedBecause!, /^sim gives every policy the same value/);
  const flatReal = pearson(pairs([0.1, 0.5, 0.3], [0.1, 0.1, 0.1]));
  assert.equal(flatReal.r, null);
  assert.match(flatReal.undefinedBecause!, /real rig gives/);
  assert.equal(pearson(pairs([0, 0, 0], [1, 1, 1])).r, null);
});

test('MMRV by hand, and it is not symmetric in sim and real', () => {
  // A (sim .2, real .1), B (.4, .5), C (.6, .3). Only B–C disagree (sim B < C, real B > C): |0.5 − 0.3| = 0.2.
  // Worst per policy: A 0, B 0.2, C 0.2 → MMRV = 0.4 / 3.
  close(mmrv(pairs([0.2, 0.4, 0.6], [0.1, 0.5, 0.3])), 0.4 / 3, 1e-12);
  // A (sim .1, real .9), B (.2, .1), C (.3, .2). A–B disagree, size |0.9 − 0.1| = 0.8; A–C disagree, |0.9 − 0.2| = 0.7.
  // Worst: A 0.8, B 0.8, C 0.7 → 2.3 / 3.
  close(mmrv(pairs([0.1, 0.2, 0.3], [0.9, 0.1, 0.2])), 2.3 / 3, 1e-12);
  // Swapped, violations are measured on the other values: A–B |0.1 − 0.2| = 0.1, A–C |0.1 − 0.3| = 0.2
  // → A 0.2, B 0.1, C 0.2 → 0.5 / 3. This is why the inputs are named pairs, not two arrays.
  close(mmrv(pairs([0.9, 0.1, 0.2], [0.1, 0.2, 0.3])), 0.5 / 3, 1e-12);
  // Same order in sim and real: no violation at all.
  assert.equal(mmrv(pairs([0.1, 0.5, 0.9], [0.2, 0.3, 0.95])), 0);
});

test('MMRV compares strictly, as SIMPLER does: a sim tie against a real order is a violation for one side', () => {
  // A (sim .5, real .2), B (sim .5, real .4). For A: (.5 > .5) = false, (.2 > .4) = false → agree.
  // For B: false vs (.4 > .2) = true → violation 0.2. MMRV = (0 + 0.2) / 2 = 0.1.
  close(mmrv(pairs([0.5, 0.5], [0.2, 0.4])), 0.1, 1e-12);
});

test('SIMPLER’s published per-task values come out of the same inputs', () => {
  // Real and SIMPLER-sim success rates of six Google-robot policies (rt-2-x, rt-1-converged, rt-1-15pct,
  // rt-1-x, rt-1-begin, octo-base): SIMPLER's published success tables as its authors ship them, REAL_PERF and
  // SIMPLER_PERF in simpler-env/SimplerEnv simpler_env/utils/metrics.py (commit 6f5a5f7). Published per-task
  // values (Li et al., "Evaluating Real-World Robot Manipulation Policies in Simulation", 2024, as quoted in
  // ../shared/reference/evaluation.md; the paper's table text itself was not in the searchable corpora):
  // open drawer MMRV 0.000 / r 0.983, close drawer 0.123 / 0.771, move near 0.111 / 0.856.
  const openDrawer = pairs([0.157, 0.601, 0.463, 0.296, 0.0, 0.009], [0.333, 0.815, 0.704, 0.519, 0.0, 0.148]);
  const closeDrawer = pairs([0.343, 0.861, 0.667, 0.891, 0.278, 0.444], [0.63, 0.926, 0.889, 0.741, 0.0, 0.519]);
  const moveNear = pairs([0.779, 0.442, 0.354, 0.317, 0.05, 0.042], [0.733, 0.633, 0.583, 0.45, 0.017, 0.35]);
  close(mmrv(openDrawer), 0.0, 5e-4);
  close(pearson(openDrawer).r!, 0.983, 5e-4);
  close(mmrv(closeDrawer), 0.123, 5e-4);
  close(pearson(closeDrawer).r!, 0.771, 5e-4);
  close(mmrv(moveNear), 0.111, 5e-4);
  close(pearson(moveNear).r!, 0.856, 5e-4);
});

test('non-numbers are refused with the policy named', () => {
  assert.throws(() => mmrv([{ policy: 'act', sim: Number.NaN, real: 0.2 }]), /policy 'act'/);
  assert.throws(() => pearson([]), /at least one policy/);
});
