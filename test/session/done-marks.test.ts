/**
 * The operator's "object done" marks on a rig with no table watcher: pressed while the rig runs a
 * session rollout, journalled by the engine with the episode second, carried by the attempt's
 * score, and read by the report as the rollout's times to success. A real store file; the runner
 * stores a real rollout row without a rig (the rig path is the same engine loop).
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { PassThrough } from 'node:stream';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { sampleLayoutSet } from '../../src/layouts/layout-set.js';
import { getTask } from '../../src/tasks/registry.js';
import { openStore } from '../../src/store/store.js';
import { buildSessionPlan } from '../../src/session/plan.js';
import { runSession, startSession } from '../../src/session/engine.js';
import { storedPairedReport } from '../../src/server/report-data.js';
import { terminalOperator } from '../../src/app/session-operators.js';
import type { DoneMark, OperatorStep, SessionOperator, SessionRolloutRunner } from '../../src/session/ports.js';

// One layout of 3 bottles (bottle-1 … bottle-3).
const SET = sampleLayoutSet({ task: 'bottles-in-the-bin', tiers: [3], perTier: 1, seed: 5 });
const TASK = getTask(SET.task);
const EPISODE_S = 30;

test("marks pressed while the rig runs are journalled with their episode second, carried by the score, and are the report's times to success", async (t) => {
  const dir = mkdtempSync(join(tmpdir(), 'tandem-marks-'));
  t.after(() => rmSync(dir, { recursive: true, force: true }));
  const store = openStore(join(dir, 'tandem.sqlite'));
  t.after(() => store.close());
  const plan = buildSessionPlan({
    set: SET,
    specs: ['code:bottles-in-the-bin'],
    perLayout: 1,
    blind: false,
    seed: 3,
    episodeSeconds: EPISODE_S,
  });
  const sessionId = startSession(store, plan, SET, 'test');
  // The engine's clock, moved by the "rig" while it runs: marks without a simulated time are timed by it.
  let clockMs = Date.parse('2026-12-01T10:00:00Z');
  let mark: ((m: DoneMark) => void) | undefined;
  const runner: SessionRolloutRunner = {
    run(r) {
      // Bottles go in at 4 s and 11.5 s of the episode; after the episode a late press is ignored.
      clockMs += 4000;
      mark!({ objectId: 'bottle-2' });
      clockMs += 7500;
      mark!({});
      clockMs += EPISODE_S * 1000 - 11_500;
      const policy = store.upsertPolicy({ spec: r.spec, name: r.spec });
      const rolloutId = store.insertRollout({
        kind: 'real',
        sessionId: r.sessionId,
        policyId: policy.id,
        layoutSetSha256: SET.sha256,
        layoutIndex: r.layout.index,
        episodeSeconds: r.episodeSeconds,
        controlHz: 50,
        status: 'valid',
      });
      return Promise.resolve({ rolloutId, status: 'valid', finalMode: 'damped', wallS: EPISODE_S });
    },
  };
  const operator: SessionOperator = {
    name: 'test',
    say: () => {},
    refused: (m) => assert.fail(m),
    place: () => Promise.resolve({ action: 'confirm', simulatedS: 1 }),
    watchRun: (_step: OperatorStep, m: (x: DoneMark) => void) => void (mark = m),
    score: () => {
      mark!({}); // pressed after the episode ended: not a mark
      return Promise.resolve({ action: 'score-count', count: 2, simulatedS: 1 });
    },
    reset: () => Promise.resolve({ simulatedS: 1 }),
    offerRedo: () => Promise.resolve(false),
    paused: () => Promise.resolve(true),
    breakReminder: () => Promise.resolve({ simulatedS: 0 }),
  };
  const result = await runSession({
    store,
    sessionId,
    plan,
    set: SET,
    task: TASK,
    runner,
    operator,
    signal: new AbortController().signal,
    nowMs: () => clockMs,
  });
  assert.equal(result.ended, true);
  const journal = store.listSessionJournal(sessionId);
  const marks = journal.filter((e) => e.action === 'object-done');
  assert.deepEqual(
    marks.map((e) => [e.slot, e.detail]),
    [
      [0, { tS: 4, objectId: 'bottle-2' }],
      [0, { tS: 11.5 }],
    ],
  );
  const order = journal.map((e) => e.action);
  assert.ok(
    order.indexOf('object-done') > order.indexOf('running') && order.lastIndexOf('object-done') < order.indexOf('ran'),
    order.join(', '),
  );
  assert.deepEqual(journal.find((e) => e.action === 'scored')!.detail.doneMarks, [
    { tS: 4, objectId: 'bottle-2' },
    { tS: 11.5 },
  ]);

  const report = storedPairedReport(store, { policies: ['code:bottles-in-the-bin'], layoutSet: SET });
  const real = report.policies[0].throughput.real!;
  assert.deepEqual(
    real.times.map((x) => [x.tS, x.objectId, x.kind, x.source]),
    [
      [4, 'bottle-2', 'bottle-500ml', 'operator-marks'],
      [11.5, null, null, 'operator-marks'],
    ],
  );
  // 2 of 3 done, so the rig was busy its whole 30 s episode: 2 units in 30 s, one failure in 30 s.
  assert.ok(Math.abs(real.unitsPerHour! - (2 * 3600) / 30) < 1e-9, String(real.unitsPerHour));
  assert.ok(Math.abs(real.mtbfHours! - 30 / 3600) < 1e-12, String(real.mtbfHours));
});

test('the terminal operator marks with each line typed while the rig runs; lines typed ahead stay for the prompts, and piped answers are never marks', async () => {
  const step = {
    slot: 0,
    attempt: 0,
    total: 1,
    layout: SET.layouts[0],
    task: TASK,
    label: 'A',
    seed: 1,
    progress: { total: 1, done: 0, scored: 0, closed: 0, elapsedS: 0, etaS: 0, operatorS: 0, ended: false },
  } satisfies OperatorStep;
  const tick = () => new Promise((r) => setImmediate(r));
  const input = new PassThrough();
  const output = new PassThrough();
  let said = '';
  output.setEncoding('utf8').on('data', (d: string) => (said += d));
  const op = terminalOperator(input, output, 'person', { marks: true });
  input.write('p\n'); // typed ahead: the next prompt's answer
  await tick();
  const watching = new AbortController();
  const got: DoneMark[] = [];
  op.watchRun!(step, (m) => got.push(m), watching.signal);
  input.write('bottle-3\n\nbottle-9\n');
  await tick();
  watching.abort();
  input.write('s\n');
  await tick();
  assert.deepEqual(got, [{ objectId: 'bottle-3' }, {}, {}]);
  assert.match(
    said,
    /'bottle-9' is not an object of this layout \(bottle-1, bottle-2, bottle-3\): marked done without a name\./,
  );
  assert.equal((await op.place(step)).action, 'pause', 'the line typed ahead answers the next prompt');
  assert.equal((await op.place(step)).action, 'stop', 'a line after the episode answers a prompt, not a mark');
  op.close();

  // Piped input (not a terminal): nothing is taken as a mark.
  const piped = new PassThrough();
  const op2 = terminalOperator(piped, new PassThrough());
  const none: DoneMark[] = [];
  const w2 = new AbortController();
  op2.watchRun!(step, (m) => none.push(m), w2.signal);
  piped.write('\n');
  await tick();
  w2.abort();
  assert.deepEqual(none, []);
  assert.equal((await op2.place(step)).action, 'confirm');
  op2.close();
});
