/**
 * The station's session through its host and the browser operator, on a real store file and the
 * real session engine: the operator's answers are acknowledged only once journalled, a count the
 * layout cannot have is refused in one sentence (nothing stored), a stale answer is refused, a
 * blind session's view never names a policy, abort-and-redo keeps its reason, and the station's
 * E-stop while placing is journalled. The runner stores a real rollout row without a rig (the rig
 * path runs end to end in station-session.test.ts).
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { sampleLayoutSet } from '../../src/layouts/layout-set.js';
import { openStore, type Store } from '../../src/store/store.js';
import { DEFAULT_ROLLOUT_COST_S } from '../../src/session/plan.js';
import type { SessionRolloutRunner } from '../../src/session/ports.js';
import { SessionHost } from '../../src/server/session-host.js';
import { ApiRefusal } from '../../src/server/request-checks.js';
import type { SessionView } from '../../src/server/api-types.js';
import { parseStartSession } from '../../src/server/request-bodies.js';

const SET = sampleLayoutSet({ task: 'bottles-in-the-bin', tiers: [1], perTier: 2, seed: 11 });

function rowRunner(store: Store, set = SET): SessionRolloutRunner & { close(): Promise<void>; specs: string[] } {
  const specs: string[] = [];
  return {
    specs,
    close: () => Promise.resolve(),
    run(r) {
      specs.push(r.spec);
      const policy = store.upsertPolicy({ spec: r.spec, name: r.spec });
      const id = store.insertRollout({
        kind: 'real',
        sessionId: r.sessionId,
        policyId: policy.id,
        layoutSetSha256: set.sha256,
        layoutIndex: r.layout.index,
        episodeSeconds: r.episodeSeconds,
        controlHz: 50,
        status: 'valid',
        statusReason: null,
      });
      return Promise.resolve({ rolloutId: id, status: 'valid', finalMode: 'damped', wallS: 0.01 });
    },
  };
}

/** `set`: the layout set the sessions run on (stored, and named by every rollout row the runner stores). */
function setup(set = SET): {
  store: Store;
  host: SessionHost;
  views: SessionView[];
  runner: ReturnType<typeof rowRunner>;
  done: () => void;
} {
  const dir = mkdtempSync(join(tmpdir(), 'tandem-session-host-'));
  const store = openStore(join(dir, 'tandem.sqlite'));
  store.putLayoutSet(set);
  const runner = rowRunner(store, set);
  const host = new SessionHost(store, {
    interlocks: () => 'none here',
    cost: () => ({ cost: DEFAULT_ROLLOUT_COST_S, source: 'defaults' }),
    openRunner: () => Promise.resolve(runner),
  });
  const views: SessionView[] = [];
  host.publish = (v) => v && views.push(v);
  return { store, host, views, runner, done: () => rmSync(dir, { recursive: true, force: true }) };
}

/** Waits until the session asks `kind` (the engine runs between answers). */
async function asked(host: SessionHost, kind: string): Promise<number> {
  for (let i = 0; i < 200; i++) {
    const p = host.view()?.prompt;
    if (p?.kind === kind) return p.id;
    await new Promise((r) => setTimeout(r, 5));
  }
  throw new Error(`the session never asked ${kind}; it is at ${host.view()?.phase}`);
}

const actions = (store: Store, id: number): string[] => store.listSessionJournal(id).map((e) => e.action);

test('a browser session: answers acknowledged once journalled, impossible counts refused in one sentence, stale answers refused, blind labels only', async () => {
  const { store, host, runner, done } = setup();
  try {
    const v = await host.start({
      layoutSet: SET.sha256,
      policies: ['code:hold', 'code:bottles-in-the-bin'],
      perLayout: 1,
      blind: true,
      seconds: 1,
      layouts: [0],
    });
    assert.deepEqual(v.labels, ['policy A', 'policy B']);
    const id = v.id;
    const place = await asked(host, 'place');
    const view = host.view()!;
    assert.equal(view.phase, 'place');
    assert.match(view.step!.label, /^policy [AB]$/);
    assert.ok(!JSON.stringify(view).includes('code:'), 'a blind session view names no policy spec');

    await host.answer({ prompt: place, answer: { action: 'confirm' } });
    assert.ok(actions(store, id).includes('placed'), 'confirm acknowledged after its journal row');
    // The same prompt again: it has moved on; nothing is applied to the next step.
    await assert.rejects(
      host.answer({ prompt: place, answer: { action: 'confirm' } }),
      (e: unknown) => e instanceof ApiRefusal && e.status === 409,
    );

    const score = await asked(host, 'score');
    const sv = host.view()!;
    assert.equal(sv.prompt?.kind, 'score');
    const objects = SET.layouts[0].objects.length;
    if (sv.prompt?.kind === 'score') assert.deepEqual(sv.prompt.scoring.count, { kind: 'region', region: 'bin' });
    await assert.rejects(
      host.answer({ prompt: score, answer: { action: 'score-count', count: objects + 1 } }),
      (e: unknown) => {
        assert.ok(e instanceof ApiRefusal && e.status === 400);
        assert.match(
          e.message,
          new RegExp(
            `^Not stored: Layout 0 has ${objects} objects?: ${objects + 1} cannot be in the bin; enter a whole number from 0 to ${objects}\\.$`,
          ),
        );
        return true;
      },
    );
    assert.equal(
      store.listSessionJournal(id).filter((e) => e.action === 'scored').length,
      0,
      'nothing stored for the refused count',
    );
    // Asked again (a new prompt id), the good count is committed with its score before the answer returns.
    const again = await asked(host, 'score');
    assert.notEqual(again, score);
    const wrong = host.answer({ prompt: again, answer: { action: 'done' } });
    await assert.rejects(
      wrong,
      (e: unknown) => e instanceof ApiRefusal && /takes score, score-count or redo/.test(e.message),
    );
    await host.answer({ prompt: again, answer: { action: 'score-count', count: 1, note: 'one in' } });
    const scored = store.listSessionJournal(id).filter((e) => e.action === 'scored');
    assert.equal(scored.length, 1);
    const rolloutId = scored[0].rolloutId!;
    // While the blind session runs, the rollouts list shows the label for its rollouts, never the policy.
    assert.match(host.blindLabels().get(rolloutId) ?? '', /^policy [AB]$/);
    assert.deepEqual(
      store.listOperatorScores(rolloutId).map((s) => [s.note, s.operator]),
      [['one in', 'operator (station UI)']],
    );

    await host.answer({ prompt: await asked(host, 'reset'), answer: { action: 'done' } });
    // Second rollout: abort-and-redo with a reason, then an e-stop while placing the redo.
    await host.answer({ prompt: await asked(host, 'place'), answer: { action: 'confirm' } });
    const s2 = await asked(host, 'score');
    await assert.rejects(host.answer({ prompt: s2, answer: { action: 'redo', reason: '  ' } }), /Say why/);
    await host.answer({ prompt: s2, answer: { action: 'redo', reason: 'bottle fell off before the start' } });
    const abandoned = store.listSessionJournal(id).find((e) => e.action === 'abandoned');
    assert.equal(abandoned?.detail.reason, 'bottle fell off before the start');
    // The table is cleared first, then the same slot is placed again as a redo.
    await host.answer({ prompt: await asked(host, 'reset'), answer: { action: 'done' } });
    await asked(host, 'place');
    assert.equal(host.view()?.step?.attempt, 1);
    host.estop();
    const paused = await asked(host, 'paused');
    assert.ok(actions(store, id).includes('estop'), 'the e-stop while placing is journalled');
    await host.answer({ prompt: paused, answer: { action: 'carry-on' } });
    await host.answer({ prompt: await asked(host, 'place'), answer: { action: 'confirm' } });
    await host.answer({
      prompt: await asked(host, 'score'),
      answer: { action: 'score', endStates: SET.layouts[0].objects.map((o) => ({ id: o.id, region: 'bin' })) },
    });
    await host.answer({ prompt: await asked(host, 'reset'), answer: { action: 'done' } });
    for (let i = 0; i < 200 && host.view()?.phase !== 'ended'; i++) await new Promise((r) => setTimeout(r, 5));
    const end = host.view()!;
    assert.equal(end.phase, 'ended');
    assert.equal(end.progress.scored, 2);
    assert.equal(runner.specs.length, 3, 'three rollouts ran: two scored, one redone');
    assert.ok(store.getSession(id)?.endedAt, 'the session ended in the store');
    assert.equal(host.blindLabels().size, 0, 'once the session ended its rollouts show their policies');
  } finally {
    await host.close();
    store.close();
    done();
  }
});

test('stop for now leaves the session resumable at its exact step; a bad plan is refused before anything is stored', async () => {
  const { store, host, done } = setup();
  try {
    await assert.rejects(
      host.start({ layoutSet: SET.sha256, policies: ['code:hold'], perLayout: 1, blind: true }),
      (e: unknown) => e instanceof ApiRefusal && /blind session needs at least two policies/.test(e.message),
    );
    assert.equal(store.listSessions().length, 0);
    const v = await host.start({
      layoutSet: SET.sha256,
      policies: ['code:hold'],
      perLayout: 1,
      blind: false,
      seconds: 1,
      layouts: [0, 1],
    });
    await host.answer({ prompt: await asked(host, 'place'), answer: { action: 'confirm' } });
    await host.answer({ prompt: await asked(host, 'score'), answer: { action: 'score-count', count: 0 } });
    await host.answer({ prompt: await asked(host, 'reset'), answer: { action: 'done' } });
    await host.answer({ prompt: await asked(host, 'place'), answer: { action: 'stop' } });
    assert.equal(host.view()?.phase, 'stopped');
    assert.equal(host.working(), false);
    assert.deepEqual(
      host.list().map((s) => [s.id, s.done, s.endedAt]),
      [[v.id, 1, null]],
    );
    await host.resume(v.id);
    assert.equal((await asked(host, 'place')) > 0, true);
    assert.equal(host.view()?.step?.slot, 1, 'resumed at the second rollout, the first kept');
    await assert.rejects(
      host.start({ layoutSet: SET.sha256, policies: ['code:hold'], perLayout: 1, blind: false }),
      /is running/,
    );
  } finally {
    await host.close();
    store.close();
    done();
  }
});

/** A runner whose episode runs until its signal aborts (the operator's Abort or the E-stop), then stores it aborted. */
function untilStopped(store: Store): SessionRolloutRunner & { close(): Promise<void> } {
  return {
    close: () => Promise.resolve(),
    async run(r) {
      await new Promise<void>((resolve) =>
        r.signal.aborted ? resolve() : r.signal.addEventListener('abort', () => resolve(), { once: true }),
      );
      const policy = store.upsertPolicy({ spec: r.spec, name: r.spec });
      const id = store.insertRollout({
        kind: 'real',
        sessionId: r.sessionId,
        policyId: policy.id,
        layoutSetSha256: SET.sha256,
        layoutIndex: r.layout.index,
        episodeSeconds: r.episodeSeconds,
        controlHz: 50,
        status: 'aborted',
        statusReason: 'stopped by the operator',
      });
      return { rolloutId: id, status: 'aborted', reason: 'stopped by the operator', finalMode: 'damped', wallS: 0.01 };
    },
  };
}

const TWO = {
  layoutSet: SET.sha256,
  policies: ['code:hold', 'code:bottles-in-the-bin'],
  perLayout: 1,
  blind: true,
  seconds: 1,
  layouts: [0],
} as const;

test('a double-clicked start stores one session: the second request is refused in one sentence, and a repeated request id is refused after the first finished', async () => {
  const { store, host, done } = setup();
  try {
    const [first, second] = await Promise.allSettled([
      host.start({ ...TWO, requestId: 'click-0001' }),
      host.start({ ...TWO, requestId: 'click-0002' }),
    ]);
    assert.equal(first.status, 'fulfilled');
    assert.equal(second.status, 'rejected');
    const refusal = (second as PromiseRejectedResult).reason as ApiRefusal;
    assert.ok(refusal instanceof ApiRefusal && refusal.status === 409, String(refusal));
    assert.match(refusal.message, /already starting a session; this second request was not acted on/);
    assert.equal(store.listSessions().length, 1, 'one session stored, no orphan');
    await host.answer({ prompt: await asked(host, 'place'), answer: { action: 'stop' } });
    await assert.rejects(
      host.start({ ...TWO, requestId: 'click-0001' }),
      (e: unknown) => e instanceof ApiRefusal && /already received and started session \d+/.test(e.message),
    );
    // Resume: a concurrent second click is refused the same way, so the journal has one resume.
    const id = (first as PromiseFulfilledResult<SessionView>).value.id;
    const resumes = await Promise.allSettled([
      host.resume(id, undefined, 'resume-0001'),
      host.resume(id, undefined, 'resume-0002'),
    ]);
    assert.deepEqual(
      resumes.map((r) => r.status),
      ['fulfilled', 'rejected'],
    );
    assert.equal(actions(store, id).filter((a) => a === 'session-resumed').length, 1);
  } finally {
    await host.close();
    store.close();
    done();
  }
});

test('Abort during a session rollout stops it: stored unscored as stopped by the operator, journalled so, offered for redo — not e-stopped, and nothing else is running to stop', async () => {
  const dir = mkdtempSync(join(tmpdir(), 'tandem-session-host-abort-'));
  const store = openStore(join(dir, 'tandem.sqlite'));
  store.putLayoutSet(SET);
  const host = new SessionHost(store, {
    interlocks: () => 'none here',
    cost: () => ({ cost: DEFAULT_ROLLOUT_COST_S, source: 'defaults' }),
    openRunner: () => Promise.resolve(untilStopped(store)),
  });
  try {
    assert.equal(host.stopRollout(), false, 'no session: nothing to stop');
    const v = await host.start({ ...TWO, policies: ['code:hold'], blind: false });
    await host.answer({ prompt: await asked(host, 'place'), answer: { action: 'confirm' } });
    for (let i = 0; i < 200 && host.view()?.phase !== 'running'; i++) await new Promise((r) => setTimeout(r, 5));
    assert.equal(host.view()?.phase, 'running');
    assert.equal(host.stopRollout(), true);
    assert.equal(host.stopRollout(), false, 'a second Abort finds it already stopping');
    await host.answer({ prompt: await asked(host, 'reset'), answer: { action: 'done' } });
    const redo = await asked(host, 'offer-redo');
    const prompt = host.view()!.prompt as { why?: { kind: string; reason: string } };
    assert.equal(prompt.why?.kind, 'stopped');
    const ran = store.listSessionJournal(v.id).find((e) => e.action === 'ran')!;
    assert.equal(ran.detail.stoppedByOperator, true);
    assert.equal(ran.detail.estopped, undefined, 'an Abort is not an E-stop');
    assert.equal(store.getRollout(ran.rolloutId!)?.status, 'aborted');
    assert.equal(store.listSessionJournal(v.id).filter((e) => e.action === 'scored').length, 0, 'unscored');
    await host.answer({ prompt: redo, answer: { action: 'redo' } });
    await asked(host, 'place');
    assert.equal(host.view()?.step?.attempt, 1, 'the same slot again, as its second attempt');
  } finally {
    await host.close();
    store.close();
    rmSync(dir, { recursive: true, force: true });
  }
});

test('a session that will not be finished is ended from the station with a reason, journalled; a running one is refused; plans without a seed draw a fresh one', async () => {
  const { store, host, done } = setup();
  try {
    const a = await host.start(TWO);
    assert.throws(
      () => host.end(a.id, 'wrong policies'),
      (e: unknown) =>
        e instanceof ApiRefusal && e.status === 409 && /is running; stop it for now \(Q\) first/.test(e.message),
    );
    await host.answer({ prompt: await asked(host, 'place'), answer: { action: 'stop' } });
    const ended = host.end(a.id, 'wrong policies in the plan');
    assert.notEqual(ended.endedAt, null);
    const last = store.listSessionJournal(a.id).at(-1)!;
    assert.deepEqual([last.action, last.detail.reason], ['ended', 'wrong policies in the plan']);
    assert.throws(() => host.end(a.id, 'again'), /already ended/);
    const b = await host.start(TWO);
    const seeds = [a.id, b.id].map((id) => (JSON.parse(store.getSessionPlan(id)!.planJson) as { seed: number }).seed);
    assert.notEqual(
      seeds[0],
      seeds[1],
      'two plans of the same policies without a seed get different seeds (and so their own letters)',
    );
  } finally {
    await host.close();
    store.close();
    done();
  }
});

test("a session's results at the station: per policy and tier with intervals and the A/B verdict as scores arrive; the blind key only once it has ended", async () => {
  const { store, host, done } = setup();
  try {
    const v = await host.start({ ...TWO, layouts: [0, 1] });
    assert.equal(host.results(v.id).episodes.length, 0);
    // Score every rollout: policy A's bottle in the bin each time, policy B's never.
    for (let i = 0; i < 4; i++) {
      await host.answer({ prompt: await asked(host, 'place'), answer: { action: 'confirm' } });
      await asked(host, 'score');
      const label = host.view()!.step!.label;
      await host.answer({
        prompt: host.view()!.prompt!.id,
        answer: { action: 'score-count', count: label === 'policy A' ? 1 : 0 },
      });
      await host.answer({ prompt: await asked(host, 'reset'), answer: { action: 'done' } });
      // One pair in, one to come: the verdict so far says to go on.
      if (i === 1) assert.match(host.results(v.id).verdict!.sentence, /^Not clear yet after 1 pair .*Keep going\.$/);
    }
    for (let i = 0; i < 200 && host.view()?.phase !== 'ended'; i++) await new Promise((r) => setTimeout(r, 5));
    const r = host.results(v.id);
    assert.equal(r.ended, true);
    assert.deepEqual(
      r.policies.map((p) => [p.label, p.scored]),
      [
        ['policy A', 2],
        ['policy B', 2],
      ],
    );
    const all = (label: string) => r.policies.find((p) => p.label === label)!.tiers.find((t) => t.tier === 'all')!;
    assert.equal(all('policy A').meanProgress, 1);
    assert.equal(all('policy B').meanProgress, 0);
    assert.equal(all('policy A').layouts, 2, 'the interval rests on the two layouts');
    assert.equal(r.verdict?.pairs, 2);
    assert.equal(Math.abs(r.verdict!.meanDifference), 1, 'A always 1, B always 0');
    // Two pairs are too few for the anytime-valid test to decide, and none can come: it says so, never "keep going".
    assert.equal(
      r.verdict!.sentence,
      'The session is over: after 2 pairs no difference between policy A and policy B is clear (policy A − policy B +1.00, 95% bounds -1.00 to +1.00, valid at every look). Telling them apart needs more pairs, in a new session.',
    );
    // The station's last words on it say the same.
    assert.ok(
      host.view()!.lines.some((l) => /^A\/B so far: The session is over: after 2 pairs/.test(l)),
      host.view()!.lines.join('\n'),
    );
    assert.ok(
      !host.view()!.lines.some((l) => /Keep going/.test(l) && /after 2 pairs/.test(l)),
      host.view()!.lines.join('\n'),
    );
    assert.ok(
      r.episodes.every((e) => e.rolloutId !== null && store.getRollout(e.rolloutId) !== undefined),
      'each scored episode names its stored rollout',
    );
    assert.deepEqual(Object.keys(r.key ?? {}).sort(), ['policy A', 'policy B'], 'the key once ended');
    assert.ok(r.policies.every((p) => p.spec !== undefined));
  } finally {
    await host.close();
    store.close();
    done();
  }
});

test('while a blind session is open its results name no policy: no key, no spec', async () => {
  const { store, host, done } = setup();
  try {
    const v = await host.start(TWO);
    await host.answer({ prompt: await asked(host, 'place'), answer: { action: 'confirm' } });
    await host.answer({ prompt: await asked(host, 'score'), answer: { action: 'score-count', count: 1 } });
    const r = host.results(v.id);
    assert.equal(r.key, null);
    assert.ok(r.policies.every((p) => p.spec === undefined));
    assert.doesNotMatch(JSON.stringify(r), /code:/);
    assert.throws(
      () => host.results(999),
      (e: unknown) => e instanceof ApiRefusal && e.status === 404,
    );
  } finally {
    await host.close();
    store.close();
    done();
  }
});

test('a session the station stopped without stopping it (a crash) is listed as interrupted, with where it was; one stopped for now or by a shutdown is not', async () => {
  const { store, host, runner, done } = setup();
  const after = (): SessionHost =>
    new SessionHost(store, {
      interlocks: () => 'none here',
      cost: () => ({ cost: DEFAULT_ROLLOUT_COST_S, source: 'defaults' }),
      openRunner: () => Promise.resolve(runner),
    });
  try {
    const v = await host.start({
      layoutSet: SET.sha256,
      policies: ['code:hold'],
      perLayout: 1,
      blind: false,
      seconds: 1,
      layouts: [0, 1],
    });
    const place = await asked(host, 'place');
    assert.equal(host.list()[0].interrupted, null, 'the session being worked is not interrupted');
    await host.answer({ prompt: place, answer: { action: 'confirm' } });
    await asked(host, 'score');
    // The station is killed here: a new station on the same store finds the session cut off at its score.
    const [cut] = after().list();
    assert.equal(cut.id, v.id);
    assert.equal(cut.interrupted?.words, 'Rollout 1 of 2 had run and was waiting for its score: score it on resume.');
    assert.equal(cut.interrupted?.at, store.listSessionJournal(v.id).at(-1)!.at);

    // Stopped on purpose (the shutdown's withdrawn prompt): not interrupted.
    await host.close();
    assert.equal(after().list()[0].interrupted, null, 'a shutdown stops the session knowingly');
    assert.equal(actions(store, v.id).at(-1), 'stopped');

    // Resumed, then killed while placing the next layout: interrupted again, at that step.
    const resumed = after();
    await resumed.resume(v.id);
    const score = await asked(resumed, 'score');
    await resumed.answer({ prompt: score, answer: { action: 'score-count', count: 0 } });
    await resumed.answer({ prompt: await asked(resumed, 'reset'), answer: { action: 'done' } });
    await asked(resumed, 'place');
    assert.equal(
      after().list()[0].interrupted?.words,
      'Rollout 2 of 2 was being placed: on resume its layout is shown again.',
    );
    // The operator's stop for now: not interrupted.
    await resumed.answer({ prompt: await asked(resumed, 'place'), answer: { action: 'stop' } });
    await new Promise((r) => setTimeout(r, 50));
    assert.equal(after().list()[0].interrupted, null);
    assert.deepEqual(store.listSessionJournal(v.id).at(-1)!.detail, { reason: 'stopped by the operator' });
  } finally {
    await host.close();
    store.close();
    done();
  }
});

test('a station session with a pre-registered analysis and stopEarly ends itself at the boundary, journalled stopped-early; its results carry the verdict; stopEarly alone is refused', async () => {
  // Twelve one-bottle layouts once each: 12 pairs planned.
  const set = sampleLayoutSet({ task: 'bottles-in-the-bin', tiers: [1], perTier: 12, seed: 4 });
  const { store, host, done } = setup(set);
  try {
    const specs = ['code:hold', 'code:bottles-in-the-bin'];
    assert.throws(
      () => parseStartSession({ layoutSet: set.sha256, policies: specs, perLayout: 1, blind: true, stopEarly: true }),
      (e: unknown) =>
        e instanceof ApiRefusal &&
        e.status === 400 &&
        /^'stopEarly' needs a pre-registered analysis plan/.test(e.message),
    );
    const v = await host.start(
      parseStartSession({
        layoutSet: set.sha256,
        policies: specs,
        perLayout: 1,
        blind: true,
        seconds: 1,
        analysis: { alpha: 0.1 },
        stopEarly: true,
      }),
    );
    const id = v.id;
    const spec = (label: string): string =>
      (JSON.parse(store.getSessionPlan(id)!.planJson) as { policies: { label: string; spec: string }[] }).policies.find(
        (p) => p.label === label,
      )!.spec;
    // The operator scores the bottle in the bin for the bottles policy, never for hold — until the
    // session stops being worked (ended, or stopped: then the assertions below say why).
    let answered = 0;
    while (host.working()) {
      const p = host.view()?.prompt;
      if (!p) {
        await new Promise((r) => setTimeout(r, 2));
        continue;
      }
      assert.ok(
        answered++ < 200,
        `the session asks more than the plan's 24 rollouts need: at ${p.kind}, ${actions(store, id).slice(-4).join(', ')}`,
      );
      const answer =
        p.kind === 'place'
          ? { action: 'confirm' as const }
          : p.kind === 'score'
            ? {
                action: 'score-count' as const,
                count: spec(host.view()!.step!.label) === 'code:bottles-in-the-bin' ? 1 : 0,
              }
            : { action: 'done' as const };
      await host.answer({ prompt: p.id, answer });
    }
    assert.equal(host.view()!.phase, 'ended', `the session ended rather than stopped: ${host.view()!.stoppedBecause}`);
    const r = host.results(id);
    assert.ok(r.analysis, 'the results carry the pre-registered analysis');
    assert.deepEqual([r.analysis.stop, r.analysis.stoppedEarly, r.analysis.maxPairs], [true, true, 12]);
    assert.ok(r.analysis.pairs < 12 && r.analysis.pairsSaved === 12 - r.analysis.pairs, JSON.stringify(r.analysis));
    // Blind: the verdict names the letters; the key, shown now that it ended, says the bottles policy won.
    const winner = /^policy ([AB]) is better than policy [AB] by 1\.00 .*: you may stop\.$/.exec(r.analysis.sentence);
    assert.ok(winner, r.analysis.sentence);
    assert.equal(r.analysis.kind, `${winner[1].toLowerCase()}-better`);
    assert.equal(r.key?.[`policy ${winner[1]}`], 'code:bottles-in-the-bin');
    const journal = actions(store, id);
    assert.deepEqual(journal.slice(-2), ['stopped-early', 'ended']);
    assert.equal(journal.filter((a) => a === 'ran').length, 2 * r.analysis.pairs, 'no rollout ran past the boundary');
    assert.ok(host.view()!.lines.some((l) => /stopped early by its pre-registered rule/.test(l)));
  } finally {
    await host.close();
    store.close();
    done();
  }
});
