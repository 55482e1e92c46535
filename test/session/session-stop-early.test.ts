/**
 * End to end on the emulated cell (virtual time): a blind session of a strong and a weak code
 * policy with a pre-registered analysis plan and --stop-early ends itself with a verdict in fewer
 * pairs than planned, journalled as stopped early, the rollouts saved said and exported; the
 * analysis cannot be changed once a rollout of the plan has run; --stop-early without an
 * analysis plan is refused before anything moves.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { runTandem } from '../helpers/cli.js';
import { sampleLayoutSet, serializeLayoutSet } from '../../src/layouts/layout-set.js';
import { openStore } from '../../src/store/store.js';

// Four minutes of the cell's physics: V8's optimizing WebAssembly tier pays for itself here (measured,
// clocked tier: 22.8 CPU-s optimizing vs 31.1 on the baseline tier). Read when the first physics engine
// loads, which is after this line.
process.env.TANDEM_WASM_TIER = 'optimizing';

// Three one-bottle layouts, each four times: 12 pairs planned. On these layouts (tier 1, seed 14) the
// bottles policy has the bottle in the bin on the gapped cell by 15.5 s, so 20 s episodes hold it
// with margin; hold never does. Every pair then differs by 1.00, and at α 0.2 the anytime-valid
// bound clears 0 after 6 pairs (8 at α 0.1): half the planned pairs, and the fewest episodes that
// still show a verdict that was not clear after 2 pairs. Episodes are the file's CPU (the cell's
// physics), so neither is larger than the claim needs.
const SPECS = ['code:hold', 'code:bottles-in-the-bin'];

test('a strong and a weak code policy with --stop-early: the session ends itself with the verdict in fewer pairs than planned, and says the rollouts saved', async (t) => {
  const dir = mkdtempSync(join(tmpdir(), 'tandem-stop-early-'));
  t.after(() => rmSync(dir, { recursive: true, force: true }));
  const data = join(dir, 'data');
  const layouts = join(dir, 'bottles.json');
  writeFileSync(
    layouts,
    serializeLayoutSet(sampleLayoutSet({ task: 'bottles-in-the-bin', tiers: [1], perTier: 3, seed: 14 })),
  );
  const cell = join(dir, 'cell.json');
  writeFileSync(cell, JSON.stringify({ type: 'yam-cell', gap: 'seed:5', clock: 'virtual' }));
  const plan = join(dir, 'plan.json');
  const planned = await runTandem([
    'session',
    'plan',
    '--layouts',
    layouts,
    '--policies',
    SPECS.join(','),
    '--per-layout',
    '4',
    '--seconds',
    '20',
    '--seed',
    '5',
    '--blind',
    '-o',
    plan,
    '--data',
    data,
  ]);
  assert.equal(planned.code, 0, planned.stderr);

  // Without an analysis plan --stop-early has nothing to stop on: refused, nothing started.
  const bare = await runTandem([
    'session',
    'run',
    '--plan',
    plan,
    '--rig-config',
    cell,
    '--scripted-operator',
    '--data',
    data,
    '--stop-early',
  ]);
  assert.equal(bare.code, 2, bare.stderr);
  assert.match(
    bare.stderr,
    /^--stop-early needs a pre-registered analysis plan, and .*plan\.json has none: add one before the first rollout with 'tandem session preregister --plan FILE'\.\n$/,
  );

  const pre = await runTandem(['session', 'preregister', '--plan', plan, '--alpha', '0.2', '--data', data]);
  assert.equal(pre.code, 0, pre.stderr);
  assert.match(
    pre.stdout,
    /pre-registered analysis: task progress, α 0\.2, at most 12 pairs, stop on a difference or on none larger than 0\.10; analysis [0-9a-f]{12}\./,
  );
  const analysisSha = JSON.parse(readFileSync(plan, 'utf8')).analysis.sha256 as string;

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
    '--stop-early',
  ]);
  assert.equal(run.code, 0, run.stdout + run.stderr);
  const m =
    /^Session 1 stopped early \((\d+) of 12 pairs; (\d+) of 24 planned rollouts saved\): (\d+) of 24 rollouts done \((\d+) scored\).*\. (policy [AB]) is better than (policy [AB]) by 1\.00 \(80% anytime-valid \+0\.\d\d to \+1\.00\) after \1 pairs: you may stop\. Export it with/.exec(
      run.stdout,
    );
  assert.ok(m, run.stdout + run.stderr);
  const [pairs, saved, done, scored] = m.slice(1, 5).map(Number);
  assert.ok(pairs < 12, `stopped after ${pairs} pairs`);
  assert.deepEqual([saved, done, scored], [24 - 2 * pairs, 2 * pairs, 2 * pairs]);
  // The live verdict was said after every pair on the way.
  const live = run.stderr.split('\n').filter((l) => l.startsWith('Pre-registered analysis: '));
  assert.equal(live.length, pairs);
  assert.match(
    live[1],
    /Not clear yet after 2 pairs: policy B − policy A is [+-]1\.00 \(80% anytime-valid -\d\.\d\d to \+1\.00\); about \d+ more pairs at the least\./,
  );
  assert.doesNotMatch(run.stderr + run.stdout, /code:/, 'blind: labels only until the end');

  const x = JSON.parse((await runTandem(['session', 'export', '1', '--json', '--data', data])).stdout);
  // The winner is the bottles policy, by the key revealed now the session has ended.
  assert.equal(x.blindKey[m[5]], 'code:bottles-in-the-bin');
  assert.deepEqual(
    [x.analysis.stoppedEarly, x.analysis.rolloutsSaved, x.analysis.verdict.pairs, x.analysis.verdict.maxPairs],
    [true, saved, pairs, 12],
  );
  assert.equal(x.plan.analysis.sha256, analysisSha);
  const store = openStore(join(data, 'tandem.sqlite'));
  try {
    const journal = store.listSessionJournal(1);
    assert.deepEqual(
      journal.slice(-2).map((e) => e.action),
      ['stopped-early', 'ended'],
    );
    assert.equal(journal.at(-2)!.detail.analysisSha256, analysisSha);
    assert.equal(
      store.listRollouts({ sessionId: 1 }).filter((r) => r.status === 'valid').length,
      2 * pairs,
      'no rollout ran past the boundary',
    );
  } finally {
    store.close();
  }

  // The report shows the pre-registered analysis and the saving, and refuses another α or metric.
  const rep = await runTandem([
    'report',
    '--policies',
    SPECS.join(','),
    '--layouts',
    layouts,
    '--include-rehearsals',
    '--session',
    '1',
    '--alpha',
    '0.2',
    '-o',
    join(dir, 'report.html'),
    '--json',
    '--data',
    data,
  ]);
  assert.equal(rep.code, 0, rep.stderr);
  const prereg = JSON.parse(rep.stdout).preregistered;
  assert.deepEqual(
    [
      prereg.stoppedEarly,
      prereg.rolloutsSaved,
      prereg.rolloutsRun,
      prereg.plannedRollouts,
      prereg.verdict.pairs,
      prereg.analysisSha256,
    ],
    [true, saved, 2 * pairs, 24, pairs, analysisSha],
  );
  assert.match(
    readFileSync(join(dir, 'report.html'), 'utf8'),
    new RegExp(`Pre-registered A/B analysis \\(session 1\\).*${saved} rollouts \\(≈`, 's'),
  );
  for (const [flag, value, says] of [
    [
      '--alpha',
      '0.05',
      /^Session 1 pre-registered α 0\.2 \(task progress, .*\); a report at α 0\.05 is not the pre-registered analysis: give --alpha 0\.2 or leave it out\.\n$/,
    ],
    [
      '--metric',
      'full-success',
      /^Session 1 pre-registered the metric task-progress \(.*\); a report on full-success is not the pre-registered analysis: give --metric task-progress or leave it out\.\n$/,
    ],
  ] as const) {
    const refused = await runTandem([
      'report',
      '--policies',
      SPECS.join(','),
      '--layouts',
      layouts,
      '--include-rehearsals',
      '--session',
      '1',
      flag,
      value,
      '-o',
      join(dir, 'refused.html'),
      '--data',
      data,
    ]);
    assert.equal(refused.code, 2, refused.stderr);
    assert.match(refused.stderr, says);
  }

  // After the first rollout, the analysis of this plan cannot change: one sentence, the file untouched.
  const before = readFileSync(plan, 'utf8');
  const late = await runTandem(['session', 'preregister', '--plan', plan, '--alpha', '0.3', '--data', data]);
  assert.equal(late.code, 2, late.stderr);
  assert.match(
    late.stderr,
    /^Session 1 has already run rollouts of this plan under its pre-registered analysis \(task progress, α 0\.2, .*; analysis [0-9a-f]{12}\), so its analysis cannot change after the first rollout: plan a new session \(another --seed\) to analyse it differently\.\n$/,
  );
  assert.equal(readFileSync(plan, 'utf8'), before);
});
