import { test } from 'node:test';
import assert from 'node:assert/strict';
import {
  crossEngineAgreement,
  type CrossEngineInput,
  type CrossEngineRollout,
} from '../../src/analysis/cross-engine.js';

const RAPIER = 'a'.repeat(64);
const MUJOCO = 'b'.repeat(64);
const REAL = 'c'.repeat(64);
// Layouts 0–1 are tier 1, 2–3 tier 2.
const LAYOUTS = [{ tier: 1 }, { tier: 1 }, { tier: 2 }, { tier: 2 }];
const POLICIES = ['P', 'Q', 'R'].map((k) => ({ key: k, label: `policy ${k}` }));

let nextId = 1;
const row = (
  policy: string,
  kind: 'sim' | 'real',
  calibration: string,
  layoutIndex: number,
  progress: number | null,
  extra: Partial<CrossEngineRollout> = {},
): CrossEngineRollout => ({
  id: nextId++,
  kind,
  policy,
  layoutIndex,
  status: 'valid',
  progress,
  calibration,
  episodeSeconds: 30,
  ...extra,
});

/**
 * Rapier orders P > Q > R, MuJoCo P > R > Q, the real rig as Rapier. Rapier ran layouts 0–3
 * (two repeats on Rapier) and MuJoCo 0–2: layout 3 would move Rapier's and the real rig's means,
 * so it must be left out of the comparisons.
 */
function rollouts(): CrossEngineRollout[] {
  nextId = 1;
  const rapier = { P: 0.9, Q: 0.6, R: 0.3 } as const;
  const mujoco = { P: 0.9, Q: 0.2, R: 0.4 } as const;
  const real = { P: 0.8, Q: 0.5, R: 0.2 } as const;
  const out: CrossEngineRollout[] = [];
  for (const p of ['P', 'Q', 'R'] as const) {
    for (let i = 0; i < 4; i++) {
      // Repeats averaged per layout: 0.1 above and below.
      out.push(row(p, 'sim', RAPIER, i, rapier[p] + 0.1), row(p, 'sim', RAPIER, i, rapier[p] - 0.1));
      if (i < 3) out.push(row(p, 'sim', MUJOCO, i, mujoco[p]));
      // Real on layouts 0 and 2, and on 3, which MuJoCo did not run: not in the comparison with real.
      if (i % 2 === 0) out.push(row(p, 'real', REAL, i, real[p]));
      if (i === 3) out.push(row(p, 'real', REAL, i, 0));
    }
  }
  // Not counted: another episode length, invalid, awaiting a score, another sim calibration, another real calibration.
  out.push(
    row('Q', 'sim', MUJOCO, 0, 1, { episodeSeconds: 10 }),
    row('Q', 'sim', MUJOCO, 1, 1, { status: 'invalid' }),
    row('Q', 'real', REAL, 1, null),
    row('Q', 'sim', 'd'.repeat(64), 0, 1),
    row('Q', 'real', 'e'.repeat(64), 1, 1),
  );
  return out;
}

const input = (extra: Partial<CrossEngineInput> = {}): CrossEngineInput => ({
  layouts: LAYOUTS,
  policies: POLICIES,
  rollouts: rollouts(),
  engines: [
    { engine: 'rapier', calibration: RAPIER },
    { engine: 'mujoco', calibration: MUJOCO },
  ],
  realCalibration: REAL,
  episodeSeconds: 30,
  ...extra,
});

const close = (a: number | null | undefined, b: number, what: string): void =>
  assert.ok(a !== null && a !== undefined && Math.abs(a - b) < 1e-9, `${what}: ${a} ≠ ${b}`);

test('per policy and tier: each engine over the layouts both ran, real over the layouts all three ran, with the rollouts behind each', () => {
  const r = crossEngineAgreement(input());
  const q = (tier: number | 'all') => r.progress.find((x) => x.policy === 'policy Q' && x.tier === tier)!;
  // Layout 3 ran on Rapier only: not in either engine's number.
  const all = q('all');
  assert.equal(all.engines![0].layouts, 3);
  close(all.engines![0].progress, 0.6, 'Q on Rapier');
  close(all.engines![1].progress, 0.2, 'Q on MuJoCo');
  assert.equal(all.engines![0].rolloutIds.length, 6, 'two Rapier repeats on each of 3 layouts');
  assert.equal(
    all.engines![1].rolloutIds.length,
    3,
    'the invalid, other-length and other-calibration MuJoCo rollouts are not counted',
  );
  assert.deepEqual([all.real!.layouts, all.real!.rolloutIds.length], [2, 2]);
  close(all.real!.progress, 0.5, 'Q real');
  // Tier 2: layout 2 is the only one both engines ran.
  assert.deepEqual([q(2).engines![0].layouts, q(2).real!.layouts], [1, 1]);
  assert.deepEqual(
    r.tiers.map((t) => t.tier),
    [1, 2, 'all'],
  );
  // Each policy's rows together, its tiers in order.
  assert.deepEqual(
    r.progress.map((x) => `${x.policy}:${x.tier}`),
    ['P', 'Q', 'R'].flatMap((k) => [1, 2, 'all'].map((t) => `policy ${k}:${t}`)),
  );
});

test('the engines against each other and against real: Pearson r, MMRV and every pair they order differently, with the engine real sides with', () => {
  const r = crossEngineAgreement(input());
  const all = r.tiers.find((t) => t.tier === 'all')!;
  assert.equal(all.engines.of, 'mujoco');
  assert.equal(all.engines.against, 'rapier');
  // MuJoCo (0.9, 0.2, 0.4) against Rapier (0.9, 0.6, 0.3): Q and R swapped, each violation 0.3 of Rapier's progress.
  close(all.engines.mmrv, (0 + 0.3 + 0.3) / 3, 'MMRV mujoco vs rapier');
  const x = [0.9, 0.2, 0.4];
  const y = [0.9, 0.6, 0.3];
  const mx = (x[0] + x[1] + x[2]) / 3;
  const my = (y[0] + y[1] + y[2]) / 3;
  const cov = x.reduce((s, v, i) => s + (v - mx) * (y[i] - my), 0);
  const expected = cov / Math.sqrt(x.reduce((s, v) => s + (v - mx) ** 2, 0) * y.reduce((s, v) => s + (v - my) ** 2, 0));
  close(all.engines.pearson!.r, expected, 'r mujoco vs rapier');
  const [rapierReal, mujocoReal] = all.real;
  assert.deepEqual([rapierReal.of, rapierReal.against, mujocoReal.of], ['rapier', 'real', 'mujoco']);
  close(rapierReal.mmrv, 0, 'Rapier orders as real');
  close(mujocoReal.mmrv, (0 + 0.3 + 0.3) / 3, 'MuJoCo against real: Q/R swapped by 0.3 of real');
  assert.ok(
    rapierReal.pairs.every((p) => p.layouts === 2),
    'against real: the two layouts all three ran',
  );
  assert.deepEqual(
    all.orderedDifferently.map((d) => [d.a, d.b, d.real, d.realSidesWith]),
    [['policy Q', 'policy R', { a: 0.5, b: 0.2 }, 'rapier']],
  );
  close(all.orderedDifferently[0].engines[0].a, 0.6, 'Q on Rapier');
  close(all.orderedDifferently[0].engines[1].b, 0.4, 'R on MuJoCo');
  assert.match(r.sentence, /rapier and mujoco order 1 pair of the 3 policies differently \(policy Q and policy R\)/);
});

test('a tie on one engine against an order on the other is a disagreement; agreeing engines say so in words', () => {
  nextId = 1;
  const tie: CrossEngineRollout[] = [];
  for (const [p, a, b] of [
    ['P', 0.9, 0.9],
    ['Q', 0.5, 0.5],
    ['R', 0.5, 0.1],
  ] as const) {
    tie.push(row(p, 'sim', RAPIER, 0, a), row(p, 'sim', MUJOCO, 0, b));
  }
  const r = crossEngineAgreement(input({ rollouts: tie }));
  const all = r.tiers.find((t) => t.tier === 'all')!;
  assert.deepEqual(
    all.orderedDifferently.map((d) => [d.a, d.b, d.real, d.realSidesWith]),
    [['policy Q', 'policy R', null, null]],
  );
  assert.equal(all.real[0].pearson, null);
  assert.match(
    all.real[0].unavailable!,
    /needs at least 3 policies with results on both rapier and real; none has them/,
  );

  const same = crossEngineAgreement(input({ rollouts: tie.filter((x) => x.policy !== 'R') }));
  assert.equal(same.sentence, 'rapier and mujoco order all 2 policies the same way.');
  const few = same.tiers.find((t) => t.tier === 'all')!.engines;
  assert.equal(few.mmrv, null);
  assert.match(few.unavailable!, /only policy P, policy Q have them/);
});

test('no policy on both engines: the sentence says the engines cannot be compared', () => {
  nextId = 1;
  const r = crossEngineAgreement(input({ rollouts: [row('P', 'sim', RAPIER, 0, 1), row('Q', 'sim', MUJOCO, 0, 1)] }));
  assert.deepEqual(r.tiers, []);
  assert.equal(
    r.sentence,
    'No policy has results on both rapier and mujoco on the same layouts: the engines cannot be compared.',
  );
});
