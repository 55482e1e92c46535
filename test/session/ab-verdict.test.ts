/** The live A/B verdict of a two-policy session, from the plan and the journal, and said by the engine as pairs complete. */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { sampleLayoutSet } from '../../src/layouts/layout-set.js';
import { getTask } from '../../src/tasks/registry.js';
import { openStore, type SessionJournalRecord } from '../../src/store/store.js';
import { buildSessionPlan } from '../../src/session/plan.js';
import { abVerdictSoFar } from '../../src/session/ab-verdict.js';
import { runSession, startSession } from '../../src/session/engine.js';
import { bottlesScoringOperator, rowRunner } from '../helpers/scripted-session.js';

const SET = sampleLayoutSet({ task: 'bottles-in-the-bin', tiers: [1], perTier: 12, seed: 4 });
const TASK = getTask(SET.task);

let id = 0;
const scored = (slot: number, progress: number): SessionJournalRecord => ({
  id: ++id,
  sessionId: 1,
  slot,
  attempt: 0,
  action: 'scored',
  at: '2026-12-01T10:00:00Z',
  operatorS: 5,
  rolloutId: slot + 1,
  scoreId: slot + 1,
  detail: { progress },
});

test('pairs are the two policies scored in one block, in the order the pair completed; one policy or three give no verdict', () => {
  const plan = buildSessionPlan({
    set: SET,
    specs: ['code:hold', 'code:bottles-in-the-bin'],
    perLayout: 1,
    blind: true,
    seed: 3,
    episodeSeconds: 1,
  });
  const a = plan.policies[0].label;
  const progressOf = (label: string): number => (label === a ? 1 : 0);
  // Nothing scored: no pairs, not decided.
  assert.deepEqual([abVerdictSoFar(plan, [])!.pairs, abVerdictSoFar(plan, [])!.decided], [0, false]);
  // Score the slots in order: A always puts the bottle in the bin, B never.
  const journal: SessionJournalRecord[] = [];
  let decidedAt: number | undefined;
  for (const r of plan.rollouts) {
    journal.push(scored(r.slot, progressOf(r.policyLabel)));
    const v = abVerdictSoFar(plan, journal)!;
    assert.equal(v.pairs, Math.floor(journal.length / 2), 'a pair counts once both of its block are scored');
    if (v.decided && decidedAt === undefined) decidedAt = v.pairs;
  }
  const final = abVerdictSoFar(plan, journal)!;
  assert.equal(final.decided, true, final.sentence);
  assert.equal(final.winner, 'a');
  assert.match(final.sentence, new RegExp(`${a} beats`));
  assert.ok(decidedAt !== undefined && decidedAt <= 12, `decided after ${decidedAt} pairs`);
  // The same scores with the policies swapped: B wins — the pairing follows the labels.
  const swapped = plan.rollouts.map((r) => scored(r.slot, 1 - progressOf(r.policyLabel)));
  assert.equal(abVerdictSoFar(plan, swapped)!.winner, 'b');
  // A later score of a slot (its redo) replaces the earlier one.
  const first = plan.rollouts[0];
  const redone = [...journal, { ...scored(first.slot, 1 - progressOf(first.policyLabel)), attempt: 1 }];
  assert.ok(abVerdictSoFar(plan, redone)!.meanDifference < final.meanDifference);
  assert.equal(
    abVerdictSoFar(
      buildSessionPlan({ set: SET, specs: ['code:hold'], perLayout: 1, blind: false, seed: 3, episodeSeconds: 1 }),
      journal,
    ),
    undefined,
  );
});

test('the engine says the A/B verdict after each completed pair, and that the session can stop once it is clear', async () => {
  const dir = mkdtempSync(join(tmpdir(), 'tandem-ab-'));
  const store = openStore(join(dir, 'tandem.sqlite'));
  try {
    const plan = buildSessionPlan({
      set: SET,
      specs: ['code:hold', 'code:bottles-in-the-bin'],
      perLayout: 1,
      blind: true,
      seed: 3,
      episodeSeconds: 1,
    });
    const sessionId = startSession(store, plan, SET, 'scripted');
    const runner = rowRunner(store, SET);
    const said: string[] = [];
    // The bottles policy (whatever its label) scores every bottle, hold none.
    const operator = bottlesScoringOperator(plan, said);
    const r = await runSession({
      store,
      sessionId,
      plan,
      set: SET,
      task: TASK,
      runner,
      operator,
      signal: new AbortController().signal,
    });
    assert.equal(r.ended, true);
    const ab = said.filter((l) => l.startsWith('A/B so far: '));
    assert.equal(ab.length, 12, 'one line per completed pair');
    assert.match(ab[0], /Not clear yet after 1 pair/);
    const winner = plan.policies.find((p) => p.spec === 'code:bottles-in-the-bin')!.label;
    assert.match(ab.at(-2)!, new RegExp(`Decided after \\d+ pairs: ${winner} beats .*You can stop\\.`));
    // After the last pair no pair can come: the line says the session is over, and what the scores show.
    assert.match(
      ab.at(-1)!,
      new RegExp(`^A/B so far: The session is over: after 12 pairs, ${winner} beats policy [AB] \\(`),
    );
    assert.doesNotMatch(ab.join('\n'), /code:/, 'a blind session names the labels only');
  } finally {
    store.close();
    rmSync(dir, { recursive: true, force: true });
  }
});
