import { test } from 'node:test';
import assert from 'node:assert/strict';
import { sampleLayoutSet } from '../../src/layouts/layout-set.js';
import { crowdedObjects } from '../../src/layouts/focus.js';
import { getTask } from '../../src/tasks/registry.js';
import {
  CROWDED_RADIUS_M,
  diagnoseFailures,
  DiagnosisInputError,
  type DiagnosisRollout,
} from '../../src/analysis/failure-diagnosis.js';
import { proposeRandomization, NothingToProposeError } from '../../src/analysis/randomization-proposal.js';
import { renderDiagnosisHtml } from '../../src/analysis/diagnosis-html.js';
import { wilsonInterval } from '../../src/analysis/intervals.js';
import { parseRandomizationSpec } from '../../src/sim/randomization.js';
import type { TaskEvent } from '../../src/tasks/task-events.js';
import type { Layout } from '../../src/tasks/types.js';

const task = getTask('bottles-in-the-bin');
const set = sampleLayoutSet({ task: 'bottles-in-the-bin', tiers: [1, 4, 5], perTier: 3, seed: 18 });
const crowded = (l: Layout, id: string): boolean => {
  const o = l.objects.find((x) => x.id === id)!;
  return l.objects.some((q) => q !== o && Math.hypot(q.pose.x - o.pose.x, q.pose.y - o.pose.y) < CROWDED_RADIUS_M);
};

/** Events of a rollout where each listed bottle goes into the bin by `arm`, and the others are never touched. */
function events(done: readonly string[], arm: 'left' | 'right' = 'left', dropped: readonly string[] = []): TaskEvent[] {
  const out: TaskEvent[] = [];
  let t = 1;
  for (const id of done) {
    out.push(
      { timeS: t, kind: 'grasped', objectId: id, arm },
      { timeS: t + 2, kind: 'released', objectId: id, arm },
      { timeS: t + 2, kind: 'entered-region', objectId: id, region: 'bin' },
    );
    t += 3;
  }
  for (const id of dropped) {
    out.push({ timeS: t, kind: 'grasped', objectId: id, arm }, { timeS: t + 1, kind: 'released', objectId: id, arm });
    t += 2;
  }
  return out;
}

/** A policy that never grasps crowded bottles (sim and real alike) and drops one lone bottle on the real rig's tier 5. */
function rollouts(): DiagnosisRollout[] {
  const out: DiagnosisRollout[] = [];
  let id = 1;
  for (const kind of ['sim', 'real'] as const) {
    for (const l of set.layouts) {
      for (let rep = 0; rep < (kind === 'sim' ? 3 : 1); rep++) {
        const lone = l.objects.filter((o) => !crowded(l, o.id)).map((o) => o.id);
        const drop = kind === 'real' && l.tier === 5 ? lone.slice(0, 1) : [];
        out.push({
          id: id++,
          kind,
          layoutIndex: l.index,
          tier: l.tier,
          outcome: 'completed',
          taskEvents: events(
            lone.filter((x) => !drop.includes(x)),
            rep % 2 ? 'left' : 'right',
            drop,
          ),
          replay: `file:///episodes/${id}.mcap`,
        });
      }
    }
  }
  return out;
}

test('the diagnosis ranks never-grasped first on the crowded tiers, with Wilson intervals by rollout, and names crowding as what predicts it', () => {
  const rs = rollouts();
  // The set must have crowded objects on tiers 4–5 and none on tier 1 for the test to mean anything.
  assert.ok(set.layouts.filter((l) => l.tier >= 4).every((l) => crowdedObjects(l) > 0));
  assert.ok(set.layouts.filter((l) => l.tier === 1).every((l) => crowdedObjects(l) === 0));
  const d = diagnoseFailures({ task, layoutSet: set, policy: 'code:test', rollouts: rs });
  assert.equal(d.rollouts.sim + d.rollouts.real, rs.length);
  assert.equal(d.top?.pattern, 'never-grasped');
  assert.deepEqual(d.top?.tiers, [4, 5]);
  const tier1 = d.tiers.find((t) => t.tier === 1)!;
  assert.equal(tier1.patterns.length, 0, 'tier 1 has a single, lone bottle: nothing fails');
  const t4 = d.tiers.find((t) => t.tier === 4)!;
  const row = t4.patterns[0];
  assert.equal(row.pattern, 'never-grasped');
  // Every tier-4 rollout has a crowded bottle left: 9 of 9 sim, 3 of 3 real.
  assert.equal(row.sim!.rollouts, 9);
  assert.equal(row.sim!.of, 9);
  assert.equal(row.real!.rollouts, 3);
  const w = wilsonInterval(12, 12);
  assert.equal(row.pooled.lower, w.lower);
  assert.equal(row.agreement, 'reproduced');
  assert.ok(row.examples.some((e) => e.kind === 'sim') && row.examples.some((e) => e.kind === 'real'));
  assert.ok(
    row.examples.every(
      (e) =>
        e.replay === `file:///episodes/${e.id + 1}.mcap` &&
        e.objects.every((o) => crowded(set.layouts[e.layoutIndex], o)),
    ),
  );
  // Dropped in transit happens on the real rig only (tier 5): the sim does not show it.
  const t5 = d.tiers.find((t) => t.tier === 5)!;
  const drop = t5.patterns.find((p) => p.pattern === 'dropped-in-transit')!;
  assert.equal(drop.sim!.rollouts, 0);
  assert.equal(drop.real!.rollouts, 3);
  assert.equal(drop.agreement, 'sim-lower');
  // Crowding predicts failure, clearly, with a large effect; the arm does not.
  const c = d.top!.conditions[0];
  assert.equal(c.condition, 'crowded');
  assert.ok(c.clear && c.riskDifference > 0.8 && c.cohensH > 2, JSON.stringify(c));
  assert.equal(c.withCondition.rate, 1);
  assert.equal(c.without.rate, 0);
  const arm = d.conditions.find((x) => x.condition === 'left-arm');
  assert.ok(arm && !arm.clear, 'which arm took a bottle does not predict failure here');
  assert.match(d.top!.sentence, /never grasped.*tiers 4, 5.*crowded/);
  const html = renderDiagnosisHtml(d, { generatedAt: 'now', tandemVersion: 'test' });
  assert.match(html, /<a href="file:\/\/\/episodes\/\d+\.mcap">sim #\d+/);
  assert.match(html, /Top pattern:/);
});

test('the proposed randomization targets the top pattern: its tiers, crowded layouts, its lineage; a sim spec parser accepts it', () => {
  const d = diagnoseFailures({ task, layoutSet: set, policy: 'code:test', rollouts: rollouts() });
  const p = proposeRandomization(d);
  assert.deepEqual(p.layouts.tiers, [4, 5]);
  assert.equal(p.layouts.minCrowdedObjects, 2);
  assert.equal(p.layouts.minLyingObjects, undefined);
  assert.equal(p.lineage.pattern, 'never-grasped');
  assert.equal(p.lineage.condition, 'crowded');
  assert.deepEqual(p.lineage.rolloutIds, d.top!.rolloutIds);
  assert.ok(
    p.lineage.rolloutIds.length > 0 &&
      p.lineage.rolloutIds.every((id) => rollouts().find((r) => r.id === id)!.tier >= 4),
  );
  const spec = parseRandomizationSpec(
    JSON.stringify({
      format: 'tandem.randomization/1',
      seed: 1,
      physics: p.physics,
      ...(p.placement ? { placement: p.placement } : {}),
      visual: p.visual,
      layouts: p.layouts,
      lineage: p.lineage,
    }),
    'spec.json',
  );
  assert.equal(spec.spec.layouts?.minCrowdedObjects, 2);
  assert.equal(spec.spec.lineage?.layoutSet, set.sha256);
});

test('a policy that never fails has nothing to propose, and no rollouts is one sentence', () => {
  const perfect = set.layouts.map((l, i) => ({
    id: i + 1,
    kind: 'sim' as const,
    layoutIndex: l.index,
    tier: l.tier,
    outcome: 'completed',
    taskEvents: events(l.objects.map((o) => o.id)),
  }));
  const d = diagnoseFailures({ task, layoutSet: set, policy: 'code:perfect', rollouts: perfect });
  assert.equal(d.top, null);
  assert.throws(() => proposeRandomization(d), NothingToProposeError);
  assert.throws(
    () => diagnoseFailures({ task, layoutSet: set, policy: 'code:none', rollouts: [] }),
    (e: Error) =>
      e instanceof DiagnosisInputError && /there are no rollouts of it on this layout set\.$/.test(e.message),
  );
  const silent = perfect.map((r) => ({ ...r, taskEvents: [] }));
  assert.throws(
    () => diagnoseFailures({ task, layoutSet: set, policy: 'code:x', rollouts: silent }),
    /none of its 9 rollouts could be classified \(no task events were stored with it\)/,
  );
});

test('a randomization spec that randomizes nothing is refused in one sentence', () => {
  const refusals: [unknown, RegExp][] = [
    [
      { format: 'tandem.randomization/1', seed: 1 },
      /^spec\.json randomizes nothing \(no range, no placement noise and no layout focus\); give at least one range/,
    ],
    [
      { format: 'tandem.randomization/1', seed: 1, physics: { tableFriction: [0.5, 0.5] } },
      /randomizes nothing \(every range is a single value: tableFriction\)/,
    ],
    [{ format: 'tandem.randomization/1', seed: 1, layouts: { tiers: [4] } }, /randomizes nothing/],
    [
      { format: 'tandem.randomization/1', seed: 1, layouts: { tiers: [7], minCrowdedObjects: 2 } },
      /layouts "tiers" must be a list of tiers from 1 to 5/,
    ],
    [
      {
        format: 'tandem.randomization/1',
        seed: 1,
        layouts: { tiers: [4], minCrowdedObjects: 2 },
        lineage: { policy: 'x' },
      },
      /"lineage" must say which diagnosis proposed it/,
    ],
  ];
  for (const [doc, re] of refusals) {
    assert.throws(
      () => parseRandomizationSpec(JSON.stringify(doc), 'spec.json'),
      (e: Error) => re.test(e.message) && !e.message.trimEnd().slice(0, -1).includes('. '),
      `${JSON.stringify(doc)} → ${re}`,
    );
  }
});

test('a layout focus keeps only layouts with that many crowded objects, still on their tier', () => {
  const focused = sampleLayoutSet({
    task: 'bottles-in-the-bin',
    tiers: [4, 5],
    perTier: 4,
    seed: 3,
    focus: { minCrowdedObjects: 3 },
  });
  const plain = sampleLayoutSet({ task: 'bottles-in-the-bin', tiers: [4, 5], perTier: 4, seed: 3 });
  assert.ok(focused.layouts.every((l) => crowdedObjects(l) >= 3));
  assert.ok(
    plain.layouts.some((l) => crowdedObjects(l) < 3),
    'without the focus some layouts are sparser',
  );
  assert.deepEqual(
    focused.layouts.map((l) => l.tier),
    [4, 4, 4, 4, 5, 5, 5, 5],
  );
  assert.throws(
    () =>
      sampleLayoutSet({ task: 'bottles-in-the-bin', tiers: [1], perTier: 1, seed: 3, focus: { minCrowdedObjects: 2 } }),
    /No tier 1 layout of bottles-in-the-bin in 400 draws has at least 2 objects within 15 cm of another/,
  );
});
