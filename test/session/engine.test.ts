/**
 * The session engine's state machine on a real store file, with the terminal operator reading real
 * stdin-like lines. The rollout runner here stores a real rollout row without a rig (the rig path
 * is tested end to end in session-cli.test.ts): these tests are about the steps, not the arms.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { PassThrough } from 'node:stream';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { sampleLayoutSet } from '../../src/layouts/layout-set.js';
import { getTask } from '../../src/tasks/registry.js';
import { openStore, type Store } from '../../src/store/store.js';
import { buildSessionPlan } from '../../src/session/plan.js';
import { runSession, startSession } from '../../src/session/engine.js';
import { sessionProgress, slotStates } from '../../src/session/journal-state.js';
import type { SessionGate, SessionRolloutRunner, SessionRunRequest } from '../../src/session/ports.js';
import { terminalOperator } from '../../src/app/session-operators.js';

const SET = sampleLayoutSet({ task: 'bottles-in-the-bin', tiers: [1], perTier: 2, seed: 11 });
const TASK = getTask(SET.task);

/** Stores a real rollout row per run; `behave` decides how the episode ends. */
function rowRunner(
  store: Store,
  behave: (r: SessionRunRequest) => Promise<'valid' | 'aborted'> = () => Promise.resolve('valid'),
): SessionRolloutRunner & { runs: SessionRunRequest[] } {
  const runs: SessionRunRequest[] = [];
  return {
    runs,
    async run(r) {
      runs.push(r);
      const status = await behave(r);
      const policy = store.upsertPolicy({ spec: r.spec, name: r.spec });
      const reason = status === 'valid' ? null : r.signal.aborted ? 'stopped by the operator' : 'policy timeout';
      const id = store.insertRollout({
        kind: 'real',
        sessionId: r.sessionId,
        policyId: policy.id,
        layoutSetSha256: SET.sha256,
        layoutIndex: r.layout.index,
        episodeSeconds: r.episodeSeconds,
        controlHz: 50,
        status,
        statusReason: reason,
      });
      return { rolloutId: id, status, ...(reason ? { reason } : {}), finalMode: 'damped', wallS: 0.01 };
    },
  };
}

function setup(
  specs = ['code:hold', 'code:bottles-in-the-bin'],
  perLayout = 1,
): { dir: string; store: Store; id: number; plan: ReturnType<typeof buildSessionPlan> } {
  const dir = mkdtempSync(join(tmpdir(), 'tandem-engine-'));
  const store = openStore(join(dir, 'tandem.sqlite'));
  const plan = buildSessionPlan({
    set: SET,
    specs,
    perLayout,
    blind: specs.length > 1,
    seed: 3,
    episodeSeconds: 1,
    layouts: [0],
  });
  const id = startSession(store, plan, SET, 'operator (terminal)');
  return { dir, store, id, plan };
}

function operatorWith(lines: string[]): { op: ReturnType<typeof terminalOperator>; said: () => string } {
  const input = new PassThrough();
  const output = new PassThrough();
  let said = '';
  output.setEncoding('utf8').on('data', (d: string) => (said += d));
  input.end(lines.map((l) => `${l}\n`).join(''));
  return { op: terminalOperator(input, output), said: () => said };
}

const actions = (store: Store, id: number): string[] =>
  store.listSessionJournal(id).map((e) => (e.slot === null ? e.action : `${e.slot}.${e.attempt} ${e.action}`));

test('an impossible count is refused with the range it can be and asked again; the score is stored once, committed with its journal row', async () => {
  const { dir, store, id, plan } = setup(['code:hold']);
  try {
    // Enter = placed; "3" for one bottle is refused; "1" stands; note; reset.
    const { op, said } = operatorWith(['', '3', 'first', '1', 'in the bin, wobbly', '']);
    const r = await runSession({
      store,
      sessionId: id,
      plan,
      set: SET,
      task: TASK,
      runner: rowRunner(store),
      operator: op,
      signal: new AbortController().signal,
    });
    assert.equal(r.ended, true);
    assert.match(
      said(),
      /Not stored: Layout 0 has 1 object: 3 cannot be in the bin; enter a whole number from 0 to 1\. Enter the score again\./,
    );
    const [row] = store.listRollouts({ sessionId: id });
    const scores = store.listOperatorScores(row.id);
    assert.equal(scores.length, 1);
    assert.equal(scores[0].progress, 1);
    assert.equal(scores[0].note, 'in the bin, wobbly');
    assert.deepEqual(actions(store, id), [
      'session-started',
      '0.0 shown',
      '0.0 placed',
      '0.0 running',
      '0.0 ran',
      '0.0 scored',
      '0.0 reset',
      'ended',
    ]);
    assert.ok(store.getSession(id)!.endedAt !== null);
  } finally {
    store.close();
    rmSync(dir, { recursive: true, force: true });
  }
});

test('pause, abort-and-redo with a reason, and a break reminder are journalled; progress and ETA are known at every step', async () => {
  const { dir, store, id, plan } = setup();
  try {
    // A break reminder after every reset (breakEveryS 0): Enter when back.
    // Slot 0: p (pause), Enter (carry on), Enter (placed), r + reason (redo), Enter (reset), break;
    // its redo: Enter (placed), 0, no note, Enter (reset), break. Slot 1: Enter, 1, no note, Enter, break.
    const { op, said } = operatorWith([
      'p',
      '',
      '',
      'r',
      'bottle knocked before start',
      '',
      '',
      '',
      '0',
      '',
      '',
      '',
      '',
      '1',
      '',
      '',
      '',
    ]);
    const etas: number[] = [];
    const runner = rowRunner(store, (r) => {
      etas.push(sessionProgress(plan, store.listSessionJournal(r.sessionId), Date.now()).etaS);
      return Promise.resolve('valid');
    });
    const r = await runSession({
      store,
      sessionId: id,
      plan,
      set: SET,
      task: TASK,
      runner,
      operator: op,
      signal: new AbortController().signal,
      breakEveryS: 0,
    });
    assert.equal(r.ended, true, said());
    const a = actions(store, id);
    assert.deepEqual(a.slice(0, 5), ['session-started', '0.0 shown', 'paused', 'resumed', '0.0 shown']);
    assert.ok(a.includes('0.0 abandoned') && a.includes('0.1 redo') && a.includes('0.1 scored'), a.join(', '));
    assert.ok(a.includes('break-reminder'));
    const abandoned = store.listSessionJournal(id).find((e) => e.action === 'abandoned')!;
    assert.equal(abandoned.detail.reason, 'bottle knocked before start');
    // Three runs (one abandoned), two scores, one per slot.
    assert.equal(runner.runs.length, 3);
    const states = slotStates(plan, store.listSessionJournal(id));
    assert.deepEqual(
      states.map((s) => [s.phase, s.outcome, s.attempt]),
      [
        ['done', 'scored', 1],
        ['done', 'scored', 0],
      ],
    );
    assert.ok(
      etas.every((x) => x > 0),
      `an ETA before each run: ${etas.join(', ')}`,
    );
    assert.equal(r.progress.etaS, 0);
    assert.ok(r.progress.elapsedS >= 0 && r.progress.operatorS >= 0);
    // The redo ran the same slot, with its planned policy and layout.
    assert.equal(runner.runs[1].label, runner.runs[0].label);
  } finally {
    store.close();
    rmSync(dir, { recursive: true, force: true });
  }
});

test('the e-stop mid-episode stops the rollout (marked e-stopped, not scored); the operator closes it and the session carries on', async () => {
  const { dir, store, id, plan } = setup();
  try {
    const estop = new AbortController();
    const interlocks: SessionGate = { armed: () => estop.signal, blocked: () => undefined };
    // Slot 0: Enter (placed) → e-stop during the episode → Enter (reset) → n (no redo). Slot 1 scored.
    const { op } = operatorWith(['', '', 'n', '', '0', '', '']);
    const runner = rowRunner(store, (r) => {
      if (r.slot !== 0) return Promise.resolve('valid');
      setTimeout(() => estop.abort(), 20);
      return new Promise((resolve) => r.signal.addEventListener('abort', () => resolve('aborted'), { once: true }));
    });
    const r = await runSession({
      store,
      sessionId: id,
      plan,
      set: SET,
      task: TASK,
      runner,
      operator: op,
      interlocks,
      signal: new AbortController().signal,
    });
    assert.equal(r.ended, true);
    const ran = store.listSessionJournal(id).find((e) => e.slot === 0 && e.action === 'ran')!;
    assert.equal(ran.detail.estopped, true);
    assert.equal(ran.detail.status, 'aborted');
    const states = slotStates(plan, store.listSessionJournal(id));
    assert.equal(states[0].outcome, 'closed');
    assert.equal(states[0].why?.kind, 'estopped');
    assert.equal(states[1].outcome, 'scored');
    assert.equal(store.listOperatorScores(ran.rolloutId!).length, 0);
  } finally {
    store.close();
    rmSync(dir, { recursive: true, force: true });
  }
});

test('the store refuses a second score for the same attempt, so a replayed action cannot score twice', () => {
  const { dir, store, id } = setup(['code:hold']);
  try {
    const policy = store.upsertPolicy({ spec: 'code:hold', name: 'hold' });
    const rolloutId = store.insertRollout({
      kind: 'real',
      sessionId: id,
      policyId: policy.id,
      layoutSetSha256: SET.sha256,
      layoutIndex: 0,
      episodeSeconds: 1,
      controlHz: 50,
      status: 'valid',
    });
    const score = { rolloutId, endStates: [{ id: 'bottle-1' }], progress: 0, counts: { inBin: 0, target: 1 } };
    store.appendSessionJournal({ sessionId: id, slot: 0, attempt: 0, action: 'scored' }, score);
    assert.throws(
      () => store.appendSessionJournal({ sessionId: id, slot: 0, attempt: 0, action: 'scored' }, score),
      /UNIQUE|constraint/i,
    );
    assert.equal(store.listOperatorScores(rolloutId).length, 1, 'the refused score left no row behind');
  } finally {
    store.close();
    rmSync(dir, { recursive: true, force: true });
  }
});

test('a slot the station died in is journalled interrupted with what the RecordingRecovery port kept, told to the operator, then the table reset', async () => {
  const { dir, store, id, plan } = setup(['code:hold']);
  try {
    // The journal of a station that stopped mid-episode: running, no ran.
    for (const action of ['shown', 'placed', 'running'])
      store.appendSessionJournal({ sessionId: id, slot: 0, attempt: 0, action });
    let calls = 0;
    const recordings = { recoverCutOff: () => (calls++, Promise.resolve(['/lab/ep-1.recovered.mcap'])) };
    const { op, said } = operatorWith(['', '1', '', '']);
    await runSession({
      store,
      sessionId: id,
      plan,
      set: SET,
      task: TASK,
      runner: rowRunner(store),
      operator: op,
      signal: new AbortController().signal,
      recordings,
    });
    assert.equal(calls, 1, 'recovered once, at the cut-off slot');
    assert.match(
      said(),
      /Rollout 1 was cut off when the station stopped; its recording was recovered \(\/lab\/ep-1\.recovered\.mcap\)\./,
    );
    const interrupted = store.listSessionJournal(id).find((e) => e.action === 'interrupted')!;
    assert.deepEqual(interrupted.detail.recovered, ['/lab/ep-1.recovered.mcap']);
    assert.deepEqual(actions(store, id).slice(1, 6), [
      '0.0 shown',
      '0.0 placed',
      '0.0 running',
      '0.0 interrupted',
      '0.0 reset',
    ]);
  } finally {
    store.close();
    rmSync(dir, { recursive: true, force: true });
  }
});
