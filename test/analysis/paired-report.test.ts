import { test } from 'node:test';
import assert from 'node:assert/strict';
import {
  buildPairedReport,
  ReportInputError,
  type ReportInput,
  type ReportRollout,
} from '../../src/analysis/paired-report.js';
import { mmrv, pearson } from '../../src/analysis/correlation.js';
import { sampleLayoutSet } from '../../src/layouts/layout-set.js';
import { getTask } from '../../src/tasks/registry.js';
import type { TaskEvent } from '../../src/tasks/task-events.js';

const task = getTask('bottles-in-the-bin');
const set = sampleLayoutSet({ task: task.id, tiers: [1, 5], perTier: 6, seed: 3 });
const SIM_CAL = 'a'.repeat(64);
const OTHER_CAL = 'b'.repeat(64);

let nextId = 1;
function rollout(
  policy: string,
  kind: 'sim' | 'real',
  layoutIndex: number,
  progress: number | null,
  extra: Partial<ReportRollout> = {},
): ReportRollout {
  return {
    id: nextId++,
    kind,
    policy,
    layoutIndex,
    tier: set.layouts[layoutIndex].tier,
    status: 'valid',
    outcome: 'completed',
    progress,
    calibration: kind === 'sim' ? SIM_CAL : '',
    durationS: kind === 'sim' ? 4 : 60,
    episodeSeconds: 60,
    ...extra,
  };
}

/** Three policies: sim on all 12 layouts (2 repeats), real on the first 6; real = sim − gap per layout. */
function threePolicies(): ReportRollout[] {
  nextId = 1;
  const rows: ReportRollout[] = [];
  const level = { good: 0.9, mid: 0.6, poor: 0.3 } as const;
  const realShift = { good: -0.05, mid: -0.3, poor: 0 } as const; // the real rig reverses mid and poor
  for (const p of ['good', 'mid', 'poor'] as const) {
    for (let i = 0; i < set.layouts.length; i++) {
      const s = Math.min(1, Math.max(0, level[p] + (i % 3) * 0.05 - 0.05));
      rows.push(rollout(p, 'sim', i, s), rollout(p, 'sim', i, s));
      if (i < 6) rows.push(rollout(p, 'real', i, Math.min(1, Math.max(0, s + realShift[p]))));
    }
  }
  return rows;
}

const input = (rollouts: ReportRollout[], extra: Partial<ReportInput> = {}): ReportInput => ({
  task,
  layoutSet: set,
  policies: ['good', 'mid', 'poor'].map((k) => ({ key: k, label: k, spec: `code:${k}`, checkpointSha256: null })),
  rollouts,
  resamples: 500,
  ...extra,
});

test('pairs each real rollout with the sim rollouts of its layout, and every number names its rollouts', () => {
  const rows = threePolicies();
  const r = buildPairedReport(input(rows));
  const good = r.policies.find((p) => p.key === 'good')!;
  assert.equal(good.pairedLayouts, 6);
  const l0 = good.layouts.find((l) => l.layoutIndex === 0)!;
  assert.equal(l0.simRolloutIds.length, 2, 'two sim repeats on layout 0');
  assert.equal(l0.realRolloutIds.length, 1);
  for (const id of [...l0.simRolloutIds, ...l0.realRolloutIds])
    assert.equal(rows.find((x) => x.id === id)!.layoutIndex, 0);
  // Paired means are over the 6 real layouts only; sim over every layout is reported apart.
  const realMean =
    rows.filter((x) => x.policy === 'good' && x.kind === 'real').reduce((s, x) => s + x.progress!, 0) / 6;
  assert.ok(Math.abs(good.real!.tiers.at(-1)!.meanProgress - realMean) < 1e-12);
  assert.equal(good.simAllLayouts!.tiers.at(-1)!.layouts, 12);
  assert.equal(good.sim!.tiers.at(-1)!.layouts, 6);
  assert.deepEqual(
    good.real!.tiers.map((t) => t.tier),
    [1, 5, 'all'].filter((t) => t === 'all' || set.layouts.slice(0, 6).some((l) => l.tier === t)),
  );
  assert.equal(r.simCalibration, SIM_CAL);
});

test('Pearson r and MMRV are those of the paired means, with layout-bootstrap intervals and the violations that drive MMRV', () => {
  const r = buildPairedReport(input(threePolicies()));
  const c = r.correlation!;
  assert.equal(c.policies, 3);
  assert.ok(Math.abs(c.pearson.r! - pearson(c.pairs).r!) < 1e-12);
  assert.ok(Math.abs(c.mmrv.value - mmrv(c.pairs)) < 1e-12);
  assert.ok(c.mmrv.value > 0, 'mid and poor swap on the real rig');
  assert.ok(c.mmrv.lower <= c.mmrv.value && c.mmrv.value <= c.mmrv.upper);
  assert.ok(c.pearson.lower! <= c.pearson.r! && c.pearson.r! <= c.pearson.upper!);
  // The violations listed are exactly mid↔poor, both ways, and the ones marked as driving MMRV average to it.
  assert.deepEqual(c.violations.map((v) => `${v.policy}>${v.against}`).sort(), ['mid>poor', 'poor>mid']);
  const driving = c.violations.filter((v) => v.drivesMmrv).reduce((s, v) => s + v.size, 0);
  assert.ok(Math.abs(driving / c.policies - c.mmrv.value) < 1e-12);
});

test('fewer than 3 policies with paired data: no correlation, and the reason names who has data', () => {
  const rows = threePolicies().filter((x) => !(x.policy === 'poor' && x.kind === 'real'));
  const r = buildPairedReport(input(rows));
  assert.equal(r.correlation, null);
  assert.match(r.correlationUnavailable!, /at least 3 policies with paired results; only good, mid have them/);
  assert.deepEqual(r.segregated.unpairedPolicies, [
    { policy: 'poor', reason: 'sim rollouts only, no scored real rollout' },
  ]);
});

test('mixed sim calibrations are refused, or one is chosen and the others are listed, never pooled', () => {
  const rows = threePolicies();
  const mixed = rows.map((x) =>
    x.kind === 'sim' && x.layoutIndex === 11 ? { ...x, calibration: OTHER_CAL, progress: 0 } : x,
  );
  assert.throws(
    () => buildPairedReport(input(mixed)),
    (e: unknown) => e instanceof ReportInputError && /2 different calibrations .*--sim-calibration/.test(e.message),
  );
  const chosen = buildPairedReport(input(mixed, { simCalibration: SIM_CAL }));
  assert.equal(chosen.segregated.otherCalibration.length, 6, 'two repeats × three policies on layout 11');
  assert.equal(chosen.policies[0].simAllLayouts!.tiers.at(-1)!.layouts, 11);
  assert.throws(
    () => buildPairedReport(input(mixed, { simCalibration: 'c'.repeat(64) })),
    /No sim rollout of these policies ran with calibration cccccccccccc/,
  );
});

test('a refusal over many calibrations names the most-used few and counts the rest (a randomized sweep drew one per rollout)', () => {
  const rows = threePolicies();
  // Every sim rollout of 'mid' with a calibration of its own; the rest keep SIM_CAL, the most used.
  let n = 0;
  const many = rows.map((x) =>
    x.kind === 'sim' && x.policy === 'mid' ? { ...x, calibration: (n++).toString(16).padStart(64, 'd') } : x,
  );
  assert.ok(n > 6, `only ${n} drawn calibrations`);
  assert.throws(
    () => buildPairedReport(input(many)),
    (e: unknown) => {
      const m = (e as Error).message;
      assert.match(
        m,
        new RegExp(
          `ran with ${n + 1} different calibrations \\(${SIM_CAL.slice(0, 12)}…, [0-9a-f]{12}…, [0-9a-f]{12}…, [0-9a-f]{12}… and ${n + 1 - 4} more\\); one comparison uses one`,
        ),
      );
      return true;
    },
  );
});

test('real rollouts awaiting a score, and invalid ones, are listed and left out of every number', () => {
  const rows = threePolicies();
  const before = buildPairedReport(input(rows));
  const extra = [
    rollout('good', 'real', 7, null),
    rollout('good', 'real', 8, null, { status: 'invalid', outcome: 'rig-fault', statusReason: 'left arm fault' }),
  ];
  const after = buildPairedReport(input([...rows, ...extra]));
  assert.deepEqual(after.segregated.awaitingScore, [extra[0].id]);
  assert.equal(after.segregated.invalidOrAborted[0].id, extra[1].id);
  assert.match(after.segregated.invalidOrAborted[0].reason, /left arm fault/);
  assert.equal(after.policies[0].pairedLayouts, before.policies[0].pairedLayouts);
  assert.equal(after.policies[0].real!.tiers.at(-1)!.meanProgress, before.policies[0].real!.tiers.at(-1)!.meanProgress);
});

test('failure breakdown without task events: knocked over, off the table and left undone, from real end states and sim counts, per tier and object kind', () => {
  nextId = 100;
  const layout = set.layouts.find((l) => l.tier === 5 && l.objects.filter((o) => o.posture === 'upright').length >= 2)!;
  const [a, b, ...rest] = layout.objects.filter((o) => o.posture === 'upright');
  const others = layout.objects.filter((o) => o !== a && o !== b);
  void rest;
  const endStates = [
    { id: a.id, upright: false },
    { id: b.id, offTable: true, upright: false },
    ...others.map((o) => ({ id: o.id, region: 'bin' })),
  ];
  const progress = others.length / layout.objects.length;
  const real = rollout('good', 'real', layout.index, progress, { endStates });
  const sim = rollout('good', 'sim', layout.index, 0.2, {
    counts: {
      inBin: 1,
      target: 5,
      offTable: 0,
      'objects:knocked-over:bottle-500ml': 3,
      'objects:done:bottle-500ml': 1,
      'objects:left-undone:bottle-500ml': 1,
    },
  });
  const oldSim = rollout('good', 'sim', layout.index, 0.2, { counts: { inBin: 1, target: 5, offTable: 0 } });
  const r = buildPairedReport(input([real, sim, oldSim]));
  const row = (pattern: string) => r.failures.rows.find((f) => f.tier === 5 && f.pattern === pattern)!;
  assert.deepEqual(
    [
      row('knocked-over').real.objects,
      row('knocked-over').real.of,
      row('knocked-over').sim.objects,
      row('knocked-over').sim.of,
    ],
    [1, layout.objects.length, 3, 5],
  );
  assert.deepEqual(row('knocked-over').real.rolloutIds, [real.id]);
  assert.equal(row('off-table').real.objects, 1);
  assert.equal(row('left-undone').sim.objects, 1);
  assert.deepEqual(r.segregated.simWithoutObjectCounts, [oldSim.id]);
  // Neither has task events: both are classified from the end state, and the report says so.
  assert.deepEqual(
    r.failures.fromEndState.map((f) => f.id).sort((x, y) => x - y),
    [real.id, sim.id],
  );
  assert.equal(row('knocked-over').real.fromEndState, 1);
  assert.equal(row('left-undone').sim.fromEndState, 1);
  assert.ok(r.failures.notes.some((n) => /end state alone/.test(n) && /never grasped and dropped in transit/.test(n)));
  // Out of time: a completed episode that left work undone.
  assert.equal(r.failures.outOfTime.find((o) => o.tier === 5)!.real.rollouts, progress < 1 ? 1 : 0);
});

test('failure breakdown from task events: each pattern per tier and kind, sim and real side by side, traced to rollout ids', () => {
  nextId = 200;
  const layout = set.layouts.find((l) => l.tier === 5 && l.objects.length >= 5)!;
  const [o1, o2, o3, o4, ...restObjects] = layout.objects.map((o) => o.id);
  const ev = (timeS: number, kind: TaskEvent['kind'], objectId: string, extra: Partial<TaskEvent> = {}): TaskEvent => ({
    timeS,
    kind,
    objectId,
    ...extra,
  });
  // Sim: o1 into the bin, o2 dropped short, o3 knocked over, o4 knocked off the table, the rest untouched.
  const simEvents = [
    ev(1, 'grasped', o1, { arm: 'right' }),
    ev(2, 'entered-region', o1, { region: 'bin' }),
    ev(2.2, 'released', o1, { arm: 'right' }),
    ev(3, 'grasped', o2, { arm: 'right' }),
    ev(4, 'released', o2, { arm: 'right' }),
    ev(5, 'knocked-over', o3),
    ev(6, 'off-table', o4),
  ];
  const n = layout.objects.length;
  const simCounts = {
    inBin: 1,
    target: n,
    offTable: 1,
    'objects:done:bottle-500ml': 1,
    'objects:off-table:bottle-500ml': 1,
    'objects:knocked-over:bottle-500ml': 1,
    'objects:left-undone:bottle-500ml': n - 3,
  };
  const sim = rollout('good', 'sim', layout.index, 1 / n, { taskEvents: simEvents, counts: simCounts });
  // Real (the cell's tracker and the scripted operator's score): o1 still in the hand at the end, the rest untouched.
  const endStates = layout.objects.map((o) => ({ id: o.id, upright: true }));
  const real = rollout('good', 'real', layout.index, 0, {
    taskEvents: [ev(40, 'grasped', o1, { arm: 'left' })],
    endStates,
  });
  // A second real rollout without events falls back to its end state.
  const bare = rollout('good', 'real', layout.index, 0, { endStates });
  const r = buildPairedReport(input([sim, real, bare]));
  const row = (pattern: string) => r.failures.rows.find((f) => f.tier === 5 && f.pattern === pattern);
  assert.deepEqual([row('dropped-in-transit')!.sim.objects, row('dropped-in-transit')!.sim.rolloutIds], [1, [sim.id]]);
  assert.equal(row('knocked-over')!.sim.objects, 1);
  assert.equal(row('off-table')!.sim.objects, 1);
  assert.equal(row('never-grasped')!.sim.objects, n - 4);
  assert.equal(row('never-grasped')!.sim.of, n);
  assert.equal(row('dropped-in-transit')!.real.objects, 0, 'nothing was dropped on the real side');
  assert.deepEqual([row('out-of-time')!.real.objects, row('out-of-time')!.real.rolloutIds], [1, [real.id]]);
  assert.equal(row('never-grasped')!.real.objects, n - 1);
  assert.deepEqual(row('never-grasped')!.real.rolloutIds, [real.id]);
  // The bare rollout's objects are all "left undone", marked as from the end state.
  assert.deepEqual(
    [row('left-undone')!.real.objects, row('left-undone')!.real.fromEndState, row('left-undone')!.real.rolloutIds],
    [n, n, [bare.id]],
  );
  assert.equal(row('never-grasped')!.real.of, 2 * n, 'both real rollouts count in the denominator');
  assert.deepEqual(r.failures.fromEndState, [{ id: bare.id, kind: 'real', why: 'no task events were stored with it' }]);
  void restObjects;
});

test('sim events that disagree with the stored end-state counts fall back to the counts, with the reason', () => {
  nextId = 300;
  const layout = set.layouts.find((l) => l.tier === 5)!;
  const n = layout.objects.length;
  // The events put nothing in the bin; the end state counted one done.
  const sim = rollout('good', 'sim', layout.index, 1 / n, {
    taskEvents: [{ timeS: 1, kind: 'grasped', objectId: layout.objects[0].id, arm: 'right' }],
    counts: {
      inBin: 1,
      target: n,
      offTable: 0,
      'objects:done:bottle-500ml': 1,
      'objects:left-undone:bottle-500ml': n - 1,
    },
  });
  const r = buildPairedReport(input([sim]));
  assert.equal(r.failures.fromEndState.length, 1);
  assert.match(r.failures.fromEndState[0].why, /events have .* failing where its end state counted/);
  assert.equal(r.failures.rows.find((f) => f.pattern === 'left-undone')!.sim.objects, n - 1);
  assert.equal(
    r.failures.rows.find((f) => f.pattern === 'out-of-time'),
    undefined,
  );
});
