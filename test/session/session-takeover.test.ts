// The operator takes over mid-rollout inside an eval session, on virtual time: the session engine
// with the rig session runner (the path of `tandem session run` and the station's sessions) on the
// emulated cell, an emulated YAM leader whose hand holds the cell's rest pose and presses the
// handle's top button twice during the rollout. The stretch goes through the one rollout loop, is
// stored with the session's rollout, marked in its episode file, and shows in the session's export
// as an assist (per policy, per hour, mean time between assists).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { sampleLayoutSet } from '../../src/layouts/layout-set.js';
import { buildSessionPlan } from '../../src/session/plan.js';
import { runSession, startSession } from '../../src/session/engine.js';
import { sessionExport } from '../../src/session/export.js';
import { getTask } from '../../src/tasks/registry.js';
import { openStore } from '../../src/store/store.js';
import { RigSessionRunner } from '../../src/app/session-runner.js';
import { SessionTakeover } from '../../src/app/session-takeover.js';
import { scriptedOperator } from '../../src/app/session-operators.js';
import { stationConfigOfRig } from '../../src/app/station-config.js';
import { scriptedMotion } from '../../drivers/leaders/emulators/operator-hand.js';
import { TOPICS } from '../../src/record/episode-format.js';
import { readIndexed } from '../helpers/mcap.js';

test('a session rollout taken over with the leader and given back: the stretch is stored with the rollout, marked in its episode file and counted as an assist in the export', async (t) => {
  const dir = mkdtempSync(join(tmpdir(), 'tandem-session-takeover-'));
  const store = openStore(join(dir, 'tandem.sqlite'));
  t.after(() => {
    store.close();
    rmSync(dir, { recursive: true, force: true });
  });
  const set = sampleLayoutSet({ task: 'bottles-in-the-bin', tiers: [1], perTier: 1, seed: 11 });
  const plan = buildSessionPlan({
    set,
    specs: ['code:hold'],
    perLayout: 1,
    blind: false,
    seed: 4,
    episodeSeconds: 3,
  });
  const lines: string[] = [];
  const log = (line: string): void => void lines.push(line);
  // The hand holds the leader still at the cell's rest pose and presses the top button twice.
  const takeover = new SessionTakeover({
    spec: 'emulated-yam',
    rampS: 0.5,
    log,
    hand: scriptedMotion({
      amplitude: 0,
      cues: [
        { t: 1, arm: 'left', button: 0, holdS: 0.2 },
        { t: 2, arm: 'left', button: 0, holdS: 0.2 },
      ],
    }),
  });
  const runner = await RigSessionRunner.open(
    {
      station: stationConfigOfRig({ type: 'yam-cell', gap: 'seed:5', clock: 'virtual' }, 'the test'),
      store,
      episodesDir: join(dir, 'episodes'),
      set,
      rateHz: 50,
      lookAtTable: true,
      blankCameras: false,
      blind: false,
      log,
      takeover,
    },
    ['code:hold'],
    { cwd: dir },
  );
  const id = startSession(store, plan, set, 'scripted');
  try {
    const r = await runSession({
      store,
      sessionId: id,
      plan,
      set,
      task: getTask(set.task),
      runner,
      operator: scriptedOperator(log),
      signal: new AbortController().signal,
    });
    assert.equal(r.ended, true, lines.join('\n'));
  } finally {
    await runner.close();
  }
  assert.equal(takeover.now(), null, 'between rollouts no leader is up');
  const x = sessionExport(store, id, plan);
  const [slot] = x.rollouts as {
    attempts: {
      rolloutId: number;
      status: string;
      episodeFile: string;
      takeovers: { startS: number; endS: number; open: boolean }[];
    }[];
  }[];
  const attempt = slot.attempts[0];
  assert.equal(attempt.status, 'valid', lines.join('\n'));
  assert.equal(
    attempt.takeovers.length,
    1,
    `stretches ${JSON.stringify(attempt.takeovers)}; lines:\n${lines.join('\n')}`,
  );
  const [span] = attempt.takeovers;
  assert.equal(span.open, false);
  assert.ok(span.endS - span.startS > 0.7 && span.endS - span.startS < 1.3, JSON.stringify(span));
  assert.deepEqual(
    x.assists.map((a) => [a.label, a.rollouts, a.assists, a.assistedRollouts]),
    [['code:hold', 1, 1, 1]],
  );
  const [a] = x.assists;
  assert.ok(
    Math.abs(a.assistsPerHour! - 3600 / 3) < 1e-6 && Math.abs(a.mtbaHours! - 3 / 3600) < 1e-9,
    JSON.stringify(a),
  );
  assert.ok(
    lines.some((l) => /^Taken over: the follower tracks the leader\./.test(l)),
    lines.join('\n'),
  );
  assert.ok(
    lines.some((l) => /^Given back: the policy resumes from here\./.test(l)),
    lines.join('\n'),
  );
  // The episode file holds the stretch's start and end.
  const ep = await readIndexed(attempt.episodeFile);
  const marks = (ep.byTopic.get(TOPICS.events) ?? [])
    .map((e) => e.message as { kind: string; detail_json: string })
    .filter((e) => e.kind === 'takeover')
    .map((e) => (JSON.parse(e.detail_json) as { takeover: string }).takeover);
  assert.deepEqual(
    marks.filter((m) => m === 'start' || m === 'end'),
    ['start', 'end'],
    marks.join(', '),
  );
});
