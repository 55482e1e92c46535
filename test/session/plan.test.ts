import { test } from 'node:test';
import assert from 'node:assert/strict';
import fc from 'fast-check';
import { sampleLayoutSet } from '../../src/layouts/layout-set.js';
import {
  buildSessionPlan,
  checkPlanLayoutSet,
  DEFAULT_ROLLOUT_COST_S,
  parseSessionPlan,
  rolloutSeconds,
  serializeSessionPlan,
  SessionPlanError,
} from '../../src/session/plan.js';

const SET = sampleLayoutSet({ task: 'bottles-in-the-bin', tiers: [1, 2], perTier: 3, seed: 4 });
const OTHER = sampleLayoutSet({ task: 'bottles-in-the-bin', tiers: [1, 2], perTier: 3, seed: 5 });
const specsOf = (n: number): string[] =>
  Array.from({ length: n }, (_, i) => `code:bottles-in-the-bin?skill=0.${i + 1}`);

test('every block runs each policy once on one layout, and every (layout, policy) runs exactly N times', () => {
  fc.assert(
    fc.property(
      fc.integer({ min: 1, max: 6 }),
      fc.integer({ min: 1, max: 4 }),
      fc.integer({ min: 1, max: 4 }),
      fc.integer({ min: 0, max: 2 ** 31 - 1 }),
      fc.boolean(),
      (nLayouts, nPolicies, perLayout, seed, blind) => {
        if (blind && nPolicies < 2) return;
        const p = buildSessionPlan({
          set: SET,
          layouts: SET.layouts.slice(0, nLayouts).map((l) => l.index),
          specs: specsOf(nPolicies),
          perLayout,
          blind,
          seed,
          episodeSeconds: 1,
          minutes: 10_000,
        });
        assert.equal(p.rollouts.length, nLayouts * nPolicies * perLayout);
        assert.deepEqual(
          p.rollouts.map((r) => r.slot),
          p.rollouts.map((_, i) => i),
        );
        const blocks = new Map<number, typeof p.rollouts>();
        for (const r of p.rollouts) blocks.set(r.block, [...(blocks.get(r.block) ?? []), r]);
        let expectSlot = 0;
        for (const [, b] of [...blocks].sort((x, y) => x[0] - y[0])) {
          // Consecutive slots, one layout, every policy once.
          assert.deepEqual(
            b.map((r) => r.slot),
            b.map((_, i) => expectSlot + i),
          );
          expectSlot += b.length;
          assert.equal(new Set(b.map((r) => r.layoutIndex)).size, 1);
          assert.deepEqual([...b.map((r) => r.policyLabel)].sort(), p.policies.map((x) => x.label).sort());
        }
        const counts = new Map<string, number>();
        for (const r of p.rollouts)
          counts.set(`${r.layoutIndex}/${r.policyLabel}`, (counts.get(`${r.layoutIndex}/${r.policyLabel}`) ?? 0) + 1);
        assert.equal(counts.size, nLayouts * nPolicies);
        assert.ok([...counts.values()].every((c) => c === perLayout));
      },
    ),
    { numRuns: 150 },
  );
});

test('the order is reproducible from the stored seed, and the seed changes it', () => {
  const o = { set: SET, specs: specsOf(2), perLayout: 3, blind: true, episodeSeconds: 1, minutes: 10_000 };
  const a = buildSessionPlan({ ...o, seed: 7 });
  const again = buildSessionPlan({ ...o, seed: 7 });
  assert.equal(a.sha256, again.sha256);
  assert.deepEqual(a.rollouts, again.rollouts);
  const orders = new Set(
    Array.from({ length: 10 }, (_, s) =>
      JSON.stringify(buildSessionPlan({ ...o, seed: s }).rollouts.map((r) => [r.layoutIndex, r.policyLabel])),
    ),
  );
  assert.ok(orders.size >= 9, `10 seeds gave ${orders.size} distinct orders`);
  // Within blocks the first policy is not always the same one: fatigue favours neither.
  const firsts = a.rollouts.filter((r, i) => i === 0 || a.rollouts[i - 1].block !== r.block).map((r) => r.policyLabel);
  assert.equal(new Set(firsts).size, 2, `first of each block: ${firsts.join(', ')}`);
});

test('a blind plan labels policies A, B with the assignment drawn from the seed; the rollouts name labels only', () => {
  const specs = specsOf(2);
  const assignments = new Set<string>();
  for (let seed = 0; seed < 12; seed++) {
    const p = buildSessionPlan({
      set: SET,
      specs,
      perLayout: 1,
      blind: true,
      seed,
      episodeSeconds: 1,
      minutes: 10_000,
    });
    assert.deepEqual(
      p.policies.map((x) => x.label),
      ['policy A', 'policy B'],
    );
    assert.deepEqual([...p.policies.map((x) => x.spec)].sort(), [...specs].sort());
    assert.doesNotMatch(JSON.stringify(p.rollouts), /code:/);
    assignments.add(p.policies[0].spec);
  }
  assert.equal(assignments.size, 2, 'the first spec typed is not always policy A');
  const open = buildSessionPlan({ set: SET, specs, perLayout: 1, blind: false, seed: 0, episodeSeconds: 1 });
  assert.deepEqual(
    open.policies.map((x) => x.label),
    specs,
    'an open plan shows the specs themselves',
  );
  assert.throws(
    () =>
      buildSessionPlan({ set: SET, specs: specs.slice(0, 1), perLayout: 1, blind: true, seed: 0, episodeSeconds: 1 }),
    /A blind session needs at least two policies/,
  );
  assert.throws(
    () =>
      buildSessionPlan({
        set: SET,
        specs: [specs[0], specs[0]],
        perLayout: 1,
        blind: false,
        seed: 0,
        episodeSeconds: 1,
      }),
    /listed twice/,
  );
});

test('the plan fits the minutes: fewer rounds, else fewer layouts, and says so; measured times are used as given', () => {
  const per = rolloutSeconds(DEFAULT_ROLLOUT_COST_S, 60); // 165 s
  const o = { set: SET, specs: specsOf(2), blind: false, seed: 1, episodeSeconds: 60 };
  // 6 layouts × 2 policies × 165 s = 33 min a round: 75 min fits 2 rounds of the 5 asked.
  const fitted = buildSessionPlan({ ...o, perLayout: 5 });
  assert.equal(fitted.fit.perLayout, Math.floor((75 * 60) / (per * 12)));
  assert.equal(fitted.fit.perLayout, 2);
  assert.equal(fitted.rollouts.length, 24);
  assert.match(
    fitted.fit.note!,
    /^5 rollouts per layout take 165 min, more than 75 min: the plan runs 2 per layout\.$/,
  );
  assert.ok(fitted.fit.plannedMinutes <= 75);
  // Not even one round in 20 min: the first layouts that fit, once each.
  const small = buildSessionPlan({ ...o, perLayout: 1, minutes: 20 });
  assert.equal(small.fit.layoutsPlanned, Math.floor((20 * 60) / (per * 2)));
  assert.equal(small.rollouts.length, small.fit.layoutsPlanned * 2);
  assert.match(small.fit.note!, /more than 20 min: the plan uses the first 3 layouts, once each/);
  // Asked for what fits: no note, nothing dropped.
  const ok = buildSessionPlan({ ...o, perLayout: 1 });
  assert.equal(ok.fit.note, undefined);
  assert.equal(ok.rollouts.length, 12);
  // A fast measured operator fits more rounds than the defaults do.
  const fast = buildSessionPlan({
    ...o,
    perLayout: 5,
    cost: { placeS: 10, rigS: 5, scoreS: 5, resetS: 10 },
    costSource: 'measured',
  });
  assert.equal(fast.fit.costSource, 'measured');
  assert.equal(fast.fit.perLayout, Math.floor((75 * 60) / (90 * 12)));
});

test('a plan file is pinned by its hash: an edit is refused; a layout set of another hash is refused in one sentence', () => {
  const p = buildSessionPlan({ set: SET, specs: specsOf(2), perLayout: 1, blind: true, seed: 3, episodeSeconds: 1 });
  const text = serializeSessionPlan(p);
  assert.deepEqual(parseSessionPlan(text, 'plan.json'), p);
  const swapped = text.replace('"policy A"', '"policy X"');
  assert.throws(
    () => parseSessionPlan(swapped, 'plan.json'),
    (e: unknown) =>
      e instanceof SessionPlanError &&
      /^plan\.json was changed after it was written \(its hash is [0-9a-f]{12}, it says [0-9a-f]{12}\); write a new plan/.test(
        e.message,
      ),
  );
  assert.throws(() => parseSessionPlan('{"format": "nope"}', 'x.json'), /x\.json is not a session plan/);
  checkPlanLayoutSet(p, SET, 'set.json');
  assert.throws(
    () => checkPlanLayoutSet(p, OTHER, 'other.json'),
    (e: unknown) =>
      e instanceof SessionPlanError &&
      e.message ===
        `The layout set other.json (${OTHER.sha256.slice(0, 12)}, version 1) is not the one this plan was made for (${SET.sha256.slice(0, 12)}, version 1); give the plan's own layout set, or plan again with this one.`,
  );
});
