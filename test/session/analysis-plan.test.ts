/**
 * The pre-registered analysis plan inside a session plan: hashed with it, refused when edited, and
 * acted on by the engine — a verdict in words after every pair, and with stopEarly the session
 * ends itself at the boundary, journalled as stopped early with the rollouts saved. The rollout
 * runner stores real rows on a real store file without a rig (the rig path: session-cli tests).
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { sampleLayoutSet } from '../../src/layouts/layout-set.js';
import { getTask } from '../../src/tasks/registry.js';
import { openStore } from '../../src/store/store.js';
import {
  buildSessionPlan,
  parseSessionPlan,
  planHash,
  plannedPairs,
  rolloutPlanIdentity,
  serializeSessionPlan,
  SessionPlanError,
  withAnalysisPlan,
} from '../../src/session/plan.js';
import { runSession, startSession } from '../../src/session/engine.js';
import { sessionExport } from '../../src/session/export.js';
import { bottlesScoringOperator, rowRunner } from '../helpers/scripted-session.js';

const SET = sampleLayoutSet({ task: 'bottles-in-the-bin', tiers: [1], perTier: 8, seed: 4 });
const TASK = getTask(SET.task);
const SPECS = ['code:hold', 'code:bottles-in-the-bin'];

test('the analysis plan is part of the plan: hashed with it, its own hash, maximum pairs from the plan; an edited one is refused', () => {
  const plain = buildSessionPlan({ set: SET, specs: SPECS, perLayout: 2, blind: true, seed: 3, episodeSeconds: 1 });
  const plan = buildSessionPlan({
    set: SET,
    specs: SPECS,
    perLayout: 2,
    blind: true,
    seed: 3,
    episodeSeconds: 1,
    analysis: { alpha: 0.1 },
  });
  const a = plan.analysis!;
  assert.deepEqual(
    [a.metric, a.alpha, a.maxPairs, a.stoppingRule, a.margin, a.a, a.b],
    ['task-progress', 0.1, 16, 'difference-or-no-difference', 0.1, 'policy A', 'policy B'],
  );
  assert.equal(plannedPairs(plan.rollouts), 16);
  assert.match(a.sha256, /^[0-9a-f]{64}$/);
  assert.notEqual(plan.sha256, plain.sha256, 'the plan hash covers the analysis plan');
  assert.equal(rolloutPlanIdentity(plan), rolloutPlanIdentity(plain), 'the same rollouts either way');
  assert.deepEqual(
    withAnalysisPlan(plain, { alpha: 0.1 }),
    plan,
    'pre-registering afterwards gives the same plan as planning with it',
  );
  assert.deepEqual(parseSessionPlan(serializeSessionPlan(plan), 'plan.json'), plan);
  // α edited in the file: the plan's hash no longer matches.
  const edited = serializeSessionPlan(plan).replace('"alpha": 0.1', '"alpha": 0.2');
  assert.throws(() => parseSessionPlan(edited, 'plan.json'), /plan\.json was changed after it was written/);
  // Edited and the plan's hash recomputed by hand: the analysis plan's own hash still catches it.
  const { sha256: _s, ...body } = JSON.parse(serializeSessionPlan(plan));
  body.analysis.alpha = 0.2;
  assert.throws(
    () => parseSessionPlan(JSON.stringify({ ...body, sha256: planHash(body) }), 'plan.json'),
    /plan\.json's analysis plan was changed after it was written/,
  );
  // Three policies, or α out of range: refused in one sentence.
  assert.throws(
    () =>
      buildSessionPlan({
        set: SET,
        specs: [...SPECS, 'code:mug-flipping'],
        perLayout: 1,
        blind: false,
        seed: 3,
        episodeSeconds: 1,
        analysis: {},
      }),
    (e: Error) => e instanceof SessionPlanError && /compares exactly two policies; this plan has 3\.$/.test(e.message),
  );
  assert.throws(
    () =>
      buildSessionPlan({
        set: SET,
        specs: SPECS,
        perLayout: 1,
        blind: false,
        seed: 3,
        episodeSeconds: 1,
        analysis: { alpha: 0.6 },
      }),
    (e: Error) => e instanceof SessionPlanError && e.message === 'α must lie between 0 and 0.5, not 0.6.',
  );
});

test('with stopEarly the engine ends the session at the boundary, journalled, saying the verdict and the rollouts saved; without it, it only says so', async () => {
  const dir = mkdtempSync(join(tmpdir(), 'tandem-analysis-'));
  const store = openStore(join(dir, 'tandem.sqlite'));
  try {
    const plan = buildSessionPlan({
      set: SET,
      specs: SPECS,
      perLayout: 2,
      blind: true,
      seed: 3,
      episodeSeconds: 1,
      analysis: { alpha: 0.1 },
    });
    const winner = plan.policies.find((p) => p.spec === 'code:bottles-in-the-bin')!.label;
    const loser = plan.policies.find((p) => p.spec === 'code:hold')!.label;
    for (const stopEarly of [true, false]) {
      const sessionId = startSession(store, plan, SET, 'scripted');
      const said: string[] = [];
      const r = await runSession({
        store,
        sessionId,
        plan,
        set: SET,
        task: TASK,
        runner: rowRunner(store, SET),
        operator: bottlesScoringOperator(plan, said),
        signal: new AbortController().signal,
        stopEarly,
      });
      const lines = said.filter((l) => l.startsWith('Pre-registered analysis: '));
      assert.match(
        lines[0],
        /Not clear yet after 1 pair: policy B − policy A is [+-]1\.00 \(90% anytime-valid -1\.00 to \+1\.00\); about \d+ more pairs at the least\.$/,
      );
      assert.match(lines[3], /Not clear yet after 4 pairs: .*; about \d+ more pairs?\.$/);
      const journal = store.listSessionJournal(sessionId);
      const export_ = sessionExport(store, sessionId, plan);
      assert.equal(r.ended, true);
      if (stopEarly) {
        assert.equal(r.stoppedEarly, true);
        const decidedAt = r.analysis!.pairs;
        assert.ok(decidedAt < 16, `stopped after ${decidedAt} of 16 pairs`);
        assert.equal(r.analysis!.kind, winner === 'policy B' ? 'b-better' : 'a-better');
        assert.equal(lines.length, decidedAt, 'one verdict line per pair, none after the stop');
        assert.match(
          lines.at(-1)!,
          new RegExp(
            `${winner} is better than ${loser} by 1\\.00 \\(90% anytime-valid .*\\) after ${decidedAt} pairs: you may stop\\.$`,
          ),
        );
        const stop = journal.find((e) => e.action === 'stopped-early')!;
        assert.deepEqual(
          [
            stop.detail.pairs,
            stop.detail.maxPairs,
            stop.detail.pairsSaved,
            stop.detail.rolloutsSaved,
            stop.detail.analysisSha256,
          ],
          [decidedAt, 16, 16 - decidedAt, 32 - 2 * decidedAt, plan.analysis!.sha256],
        );
        assert.deepEqual(
          journal.slice(-2).map((e) => e.action),
          ['stopped-early', 'ended'],
        );
        assert.ok(store.getSession(sessionId)!.endedAt !== null);
        assert.equal(store.listRollouts({ sessionId }).length, 2 * decidedAt, 'no rollout after the boundary');
        assert.match(
          said.at(-1)!,
          new RegExp(
            `stopped early by its pre-registered rule: .* ${32 - 2 * decidedAt} of the plan's 32 rollouts saved \\(${16 - decidedAt} of 16 pairs\\)\\.$`,
          ),
        );
        assert.deepEqual(
          [export_.analysis!.stoppedEarly, export_.analysis!.rolloutsSaved, export_.analysis!.verdict.pairs],
          [true, 32 - 2 * decidedAt, decidedAt],
        );
        assert.equal(export_.progress.etaS, 0);
      } else {
        assert.equal(r.stoppedEarly, undefined);
        assert.equal(store.listRollouts({ sessionId }).length, 32, 'every planned rollout ran');
        assert.ok(
          lines.some((l) => l.endsWith('you may stop.')),
          'it says the session may stop',
        );
        assert.ok(!journal.some((e) => e.action === 'stopped-early'));
        assert.deepEqual(
          [export_.analysis!.stoppedEarly, export_.analysis!.rolloutsSaved, export_.analysis!.verdict.pairs],
          [false, 0, 16],
        );
      }
    }
  } finally {
    store.close();
    rmSync(dir, { recursive: true, force: true });
  }
});
