/** Replay numbers: joint error sim − real at the real episode's times, and which recorded rollouts pair up. */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { pickReplayPair, replayView, traceOf } from '../../src/server/replay-view.js';
import type { RolloutRecord } from '../../src/store/records.js';

function rec(id: number, kind: 'real' | 'sim', layoutIndex: number, o: Partial<RolloutRecord> = {}): RolloutRecord {
  return {
    id,
    sessionId: null,
    kind,
    policyId: 1,
    layoutSetSha256: 'a'.repeat(64),
    layoutIndex,
    tier: 1,
    seed: 0,
    repeatIndex: 0,
    episodeSeconds: 3,
    controlHz: 50,
    status: 'valid',
    outcome: null,
    statusReason: null,
    policyError: null,
    progress: 0.5,
    counts: null,
    finalStateHash: null,
    calibrationSha256s: [],
    startedAt: '',
    durationS: 3,
    episodeFile: `/e/${id}.mcap`,
    sweepId: null,
    latestScore: null,
    effectiveProgress: 0.5,
    rehearsal: false,
    ...o,
  };
}

test('the error is sim − real at each real time, the sim interpolated, null past its end; RMS over the overlap', () => {
  const names = ['left_joint1', 'left_gripper'];
  // Real: joint 1 at 0 throughout; sim: joint 1 ramps 0 → 1 rad over 1 s, recorded from t = 5 s in its file.
  const real = traceOf(rec(1, 'real', 0), {
    jointNames: names,
    states: { timesS: Float64Array.from([2, 2.5, 3, 3.5]), positions: Float64Array.from([0, 1, 0, 1, 0, 1, 0, 1]) },
  });
  const sim = traceOf(rec(2, 'sim', 0), {
    jointNames: ['left_gripper', 'left_joint1'],
    states: { timesS: Float64Array.from([5, 6]), positions: Float64Array.from([1, 0, 1, 1]) },
  });
  assert.deepEqual(real.timesS, [0, 0.5, 1, 1.5], 'times from the first joint state');
  const v = replayView(real, sim, null);
  assert.deepEqual(v.errorJointNames, names, 'joints matched by name, in the real order');
  assert.deepEqual(
    v.errorRad.map((r) => r[0]),
    [0, 0.5, 1, null],
  );
  assert.deepEqual(
    v.errorRad.map((r) => r[1]),
    [0, 0, 0, null],
  );
  assert.ok(Math.abs(v.rmsErrorRad[0]! - Math.sqrt((0 + 0.25 + 1) / 3)) < 1e-12);
});

test('the replay pairs the newest valid recorded real rollout with a recorded sim twin of the same seed', () => {
  const rows = [
    rec(1, 'real', 0, { seed: 3 }),
    rec(2, 'real', 0, { status: 'aborted' }),
    rec(3, 'real', 0, { episodeFile: null }),
    rec(4, 'sim', 0, { seed: 0 }),
    rec(5, 'sim', 0, { seed: 3 }),
    rec(6, 'sim', 1, { seed: 3 }),
  ];
  const p = pickReplayPair(rows, 0);
  assert.equal(p.real?.id, 1, 'valid before aborted; unrecorded rollouts are not replayable');
  assert.equal(p.sim?.id, 5, 'same layout and seed');
  assert.equal(pickReplayPair(rows, 2).real, undefined);
});
