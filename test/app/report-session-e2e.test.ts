/**
 * End to end, as a lab would run it: a sim sweep of two policies, a scripted evaluation session
 * on the emulated cell (`tandem session plan` / `session run --scripted-operator`, 12 s
 * episodes), then `tandem report --json` — and every number in the report is checked against the
 * store it came from: each rollout id exists with the policy, layout, side and status the report
 * says, each mean is recomputed from the stored rows, every stored rollout is either counted or
 * listed as left out, the failure breakdown's counts add up to the stored scores, and each real
 * rollout's operator seconds are recomputed from its session journal (not the 90 s default).
 *
 * The cell runs on virtual time (`clock: 'virtual'`): it cannot fall behind on a busy machine.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { runTandem } from '../helpers/cli.js';
import { sampleLayoutSet, serializeLayoutSet } from '../../src/layouts/layout-set.js';
import { openStore, type SessionJournalRecord } from '../../src/store/store.js';
import type { PairedReport } from '../../src/analysis/paired-report.js';
import type { RolloutOperatorTime } from '../../src/session/operator-time.js';

const SPECS = ['code:bottles-in-the-bin', 'code:hold'];
const SECONDS = '12';
// Seed 2: in the sim the code policy has a bottle in its hand within 12 s on both layouts (task events to classify).
const set = sampleLayoutSet({ task: 'bottles-in-the-bin', tiers: [1, 2], perTier: 1, seed: 2 });

type Report = PairedReport & { operatorTime: RolloutOperatorTime[] };
const mean = (xs: readonly number[]): number => xs.reduce((a, b) => a + b, 0) / xs.length;
const close = (a: number, b: number, what: string): void => assert.ok(Math.abs(a - b) < 1e-9, `${what}: ${a} vs ${b}`);

/** A rollout's operator seconds straight from its journal rows: placed + scored + reset seconds, and placed → ran on the clock. */
function journalSeconds(journal: readonly SessionJournalRecord[], rolloutId: number): number {
  const ran = journal.find((e) => e.action === 'ran' && e.rolloutId === rolloutId)!;
  const mine = journal.filter((e) => e.slot === ran.slot && e.attempt === ran.attempt);
  const placed = mine.find((e) => e.action === 'placed')!;
  const steps = mine
    .filter((e) => ['placed', 'scored', 'reset'].includes(e.action))
    .map((e) => e.operatorS ?? Number.NaN);
  return steps.reduce((a, b) => a + b, 0) + (Date.parse(ran.at) - Date.parse(placed.at)) / 1000;
}

test('after a sim sweep and a scripted session on the emulated cell, every number tandem report prints traces to stored rollouts and the session journal', async (t) => {
  const dir = mkdtempSync(join(tmpdir(), 'tandem-report-e2e-'));
  t.after(() => rmSync(dir, { recursive: true, force: true }));
  const data = join(dir, 'data');
  const layouts = join(dir, 'bottles.json');
  writeFileSync(layouts, serializeLayoutSet(set));
  const cell = join(dir, 'cell.json');
  writeFileSync(cell, JSON.stringify({ type: 'yam-cell', gap: 'seed:5', clock: 'virtual' }));

  for (const spec of SPECS) {
    const sweep = await runTandem([
      'sim',
      'sweep',
      '--layouts',
      layouts,
      '--policy',
      spec,
      '--seconds',
      SECONDS,
      '--workers',
      '1',
      '--data',
      data,
    ]);
    assert.equal(sweep.code, 0, sweep.stderr);
  }
  const plan = join(dir, 'plan.json');
  const planned = await runTandem([
    'session',
    'plan',
    '--layouts',
    layouts,
    '--policies',
    SPECS.join(','),
    '--per-layout',
    '1',
    '--seconds',
    SECONDS,
    '--seed',
    '5',
    '-o',
    plan,
    '--data',
    data,
  ]);
  assert.equal(planned.code, 0, planned.stderr);
  const run = await runTandem([
    'session',
    'run',
    '--plan',
    plan,
    '--rig-config',
    cell,
    '--scripted-operator',
    '--data',
    data,
  ]);
  assert.equal(run.code, 0, run.stdout + run.stderr);
  assert.match(run.stdout, /ended: 4 of 4 rollouts done \(4 scored\)/);

  const rep = await runTandem([
    'report',
    '--policies',
    SPECS.join(','),
    '--layouts',
    layouts,
    '-o',
    join(dir, 'report.html'),
    '--json',
    '--include-rehearsals',
    '--data',
    data,
  ]);
  assert.equal(rep.code, 0, rep.stderr);
  const r = JSON.parse(rep.stdout) as Report;

  const store = openStore(join(data, 'tandem.sqlite'));
  try {
    const policyId = new Map(SPECS.map((s) => [s, store.listPolicies().find((p) => p.spec === s)!.id]));
    const stored = store.listRollouts().filter((x) => x.layoutSetSha256 === set.sha256);
    const byId = new Map(stored.map((x) => [x.id, x]));
    const row = (id: number) => {
      const x = byId.get(id);
      assert.ok(x, `rollout ${id} in the report is in the store`);
      return x;
    };
    const counted = new Set<number>();
    assert.equal(r.policies.length, 2);
    for (const p of r.policies) {
      assert.equal(Number(p.key), policyId.get(p.spec));
      assert.equal(p.pairedLayouts, 2, `${p.label}: both layouts have sim and real`);
      for (const l of p.layouts) {
        // Each layout's means, recomputed from the stored rows it names.
        for (const [side, ids, value] of [
          ['sim', l.simRolloutIds, l.sim],
          ['real', l.realRolloutIds, l.real],
        ] as const) {
          assert.ok(ids.length > 0);
          const rows = ids.map(row);
          for (const x of rows) {
            assert.deepEqual(
              [x.kind, x.policyId, x.layoutIndex, x.tier, x.status],
              [side, Number(p.key), l.layoutIndex, l.tier, 'valid'],
            );
            counted.add(x.id);
          }
          close(
            value!,
            mean(rows.map((x) => (side === 'real' ? x.latestScore!.progress : x.effectiveProgress!))),
            `${p.label} layout ${l.layoutIndex} ${side}`,
          );
          if (side === 'real')
            assert.ok(
              rows.every((x) => x.sessionId !== null && x.latestScore!.operator !== null),
              'real rollouts ran in the session, scored by its operator',
            );
        }
        for (const n of l.notCounted)
          assert.notEqual(row(n.id).status, 'valid', `rollout ${n.id} is left out because it is not valid: ${n.why}`);
      }
      // Per tier and all: the mean over paired layouts of their layout means.
      for (const side of ['sim', 'real'] as const) {
        for (const tier of p[side]!.tiers) {
          const ls = p.layouts.filter((l) => tier.tier === 'all' || l.tier === tier.tier);
          close(tier.meanProgress, mean(ls.map((l) => l[side]!)), `${p.label} ${side} tier ${tier.tier}`);
          assert.equal(tier.layouts, ls.length);
          assert.equal(
            tier.rollouts,
            ls.reduce((a, l) => a + (side === 'sim' ? l.simRolloutIds : l.realRolloutIds).length, 0),
          );
        }
      }
      // Cost: robot and CPU time are the stored durations; operator seconds are the journal's.
      const realRows = p.cost.realRolloutIds.map(row);
      assert.deepEqual([...p.cost.realRolloutIds].sort(), p.layouts.flatMap((l) => l.realRolloutIds).sort());
      close(p.cost.robotHours, realRows.reduce((a, x) => a + x.durationS!, 0) / 3600, `${p.label} robot hours`);
      close(
        p.cost.cpuCoreHours,
        p.cost.simRolloutIds.map(row).reduce((a, x) => a + x.durationS!, 0) / 3600,
        `${p.label} CPU hours`,
      );
      assert.equal(
        p.cost.operatorSecondsRecorded,
        realRows.length,
        'every real rollout ran in the session: no estimate',
      );
      for (const o of p.cost.operatorSeconds) {
        const x = row(o.id);
        const expected = journalSeconds(store.listSessionJournal(x.sessionId!), o.id);
        assert.ok(o.recorded);
        close(o.seconds, expected, `operator seconds of rollout ${o.id}`);
        assert.ok(Math.abs(o.seconds - (x.durationS! + 90)) > 1e-6, 'not the 90 s default');
        const parts = r.operatorTime.find((t) => t.rolloutId === o.id)!;
        assert.ok(
          parts.placeS > 0 && parts.scoreS > 0 && parts.resetS > 0 && parts.superviseS > 0,
          JSON.stringify(parts),
        );
      }
      close(
        p.cost.operatorHours,
        p.cost.operatorSeconds.reduce((a, o) => a + o.seconds, 0) / 3600,
        `${p.label} operator hours`,
      );
    }

    // Nothing stored is silently dropped: every rollout of these policies on the set is counted or listed.
    const listed = new Set([
      ...r.segregated.invalidOrAborted.map((x) => x.id),
      ...r.segregated.awaitingScore,
      ...r.segregated.otherCalibration.map((x) => x.id),
    ]);
    for (const x of stored)
      assert.ok(
        counted.has(x.id) !== listed.has(x.id),
        `rollout ${x.id} (${x.kind}, ${x.status}) is either counted or listed as left out`,
      );
    for (const id of listed) assert.notEqual(row(id).status, 'valid');

    // The failure breakdown: its rollouts are counted ones, and its failed objects add up to the stored scores.
    for (const side of ['sim', 'real'] as const) {
      const rows = [...counted].map(row).filter((x) => x.kind === side);
      const objects = rows.reduce((a, x) => a + set.layouts[x.layoutIndex].objects.length, 0);
      const done = rows.reduce(
        (a, x) =>
          a +
          Math.round(
            (side === 'real' ? x.latestScore!.progress : x.effectiveProgress!) *
              set.layouts[x.layoutIndex].objects.length,
          ),
        0,
      );
      const failed = r.failures.rows.reduce((a, f) => a + f[side].objects, 0);
      assert.equal(
        failed,
        objects - done,
        `${side}: failed objects in the breakdown = objects − done in the stored scores`,
      );
      for (const f of r.failures.rows)
        for (const id of f[side].rolloutIds)
          assert.ok(
            rows.some((x) => x.id === id),
            `failure row rollout ${id} is a counted ${side} rollout`,
          );
      for (const x of rows) {
        const events = store.listTaskEvents(x.id);
        const fallback = r.failures.fromEndState.find((f) => f.id === x.id);
        if (events.length === 0)
          assert.equal(
            fallback?.why,
            'no task events were stored with it',
            `rollout ${x.id} has no events: classified from its end state, and said so`,
          );
        else assert.equal(fallback, undefined, `rollout ${x.id}'s ${events.length} events classify it`);
        // A bottle still in a hand when the episode ran out is "out of time", and its row names this rollout.
        const held =
          events.filter((e) => e.kind === 'grasped').length > events.filter((e) => e.kind === 'released').length;
        if (held && x.outcome === 'completed')
          assert.ok(
            r.failures.rows.some((f) => f.pattern === 'out-of-time' && f[side].rolloutIds.includes(x.id)),
            `rollout ${x.id} ended holding a bottle`,
          );
      }
    }
    // The sim side has events here (the code policy grasps within 12 s in the sim): the breakdown reads them.
    assert.ok(
      r.failures.rows.some((f) => f.sim.objects > f.sim.fromEndState),
      JSON.stringify(r.failures.rows),
    );

    // The sequential A/B verdict pairs real rollouts of the two policies on the same layout.
    assert.equal(r.abComparisons.length, 1);
    for (const [a, b] of r.abComparisons[0].rolloutIds) {
      assert.equal(row(a).layoutIndex, row(b).layoutIndex);
      assert.deepEqual([row(a).kind, row(b).kind], ['real', 'real']);
      assert.notEqual(row(a).policyId, row(b).policyId);
    }
    assert.match(r.correlationUnavailable ?? '', /needs at least 3 policies/);
  } finally {
    store.close();
  }
});
