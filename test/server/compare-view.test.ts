/** The compare view's numbers: real vs sim per layout and per tier, counting only valid, scored rollouts. */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { compareChoices, compareView } from '../../src/server/compare-view.js';
import type { RolloutRecord } from '../../src/store/records.js';

let nextId = 1;
function rollout(
  kind: 'real' | 'sim',
  layoutIndex: number,
  tier: number,
  progress: number | null,
  status: RolloutRecord['status'] = 'valid',
  cell = false,
): RolloutRecord {
  return {
    id: nextId++,
    sessionId: null,
    kind,
    policyId: 1,
    layoutSetSha256: 'a'.repeat(64),
    layoutIndex,
    tier,
    seed: 0,
    repeatIndex: 0,
    episodeSeconds: 30,
    controlHz: 50,
    status,
    outcome: null,
    statusReason: null,
    policyError: null,
    progress,
    counts: null,
    finalStateHash: null,
    calibrationSha256s: cell ? ['c'.repeat(64)] : [],
    startedAt: '2026-12-01T00:00:00Z',
    durationS: 30,
    episodeFile: null,
    sweepId: null,
    latestScore: null,
    effectiveProgress: progress,
    rehearsal: cell,
  };
}

const set = {
  sha256: 'a'.repeat(64),
  task: 'bottles-in-the-bin',
  layouts: [
    { index: 0, tier: 1 },
    { index: 1, tier: 1 },
    { index: 2, tier: 2 },
  ],
};
const policy = { id: 1, name: 'bottles', spec: 'code:bottles-in-the-bin' };

test('each layout shows real and sim mean progress over its valid, scored rollouts; the rest are counted apart', () => {
  const v = compareView({
    policy,
    layoutSet: set,
    rollouts: [
      rollout('real', 0, 1, 0.5, 'valid', true),
      rollout('real', 0, 1, 1.0, 'valid', true),
      rollout('real', 0, 1, null, 'aborted', true),
      rollout('sim', 0, 1, 1.0),
      rollout('sim', 0, 1, 0.75),
      rollout('sim', 2, 2, 0.25),
      rollout('real', 1, 1, null),
    ],
    isCellMarker: (h) => h === 'c'.repeat(64),
  });
  assert.equal(v.layouts.length, 3, 'every layout of the set, with or without rollouts');
  const [l0, l1, l2] = v.layouts;
  assert.deepEqual(l0.real, { rollouts: 3, counted: 2, meanProgress: 0.75, notCounted: 1 });
  assert.deepEqual(l0.sim, { rollouts: 2, counted: 2, meanProgress: 0.875, notCounted: 0 });
  assert.equal(l0.gap, 0.75 - 0.875);
  assert.deepEqual(
    l1.real,
    { rollouts: 1, counted: 0, meanProgress: null, notCounted: 1 },
    'awaiting a score: not averaged as 0',
  );
  assert.equal(l1.gap, null);
  assert.equal(l2.real.rollouts, 0);
  assert.equal(l2.sim.meanProgress, 0.25);
  assert.equal(v.realOnEmulatedCell, true);
  // Tiers: 1, 2, then all; tier 2 has no real rollouts.
  assert.deepEqual(
    v.tiers.map((t) => t.tier),
    [1, 2, 'all'],
  );
  assert.equal(v.tiers[0].real!.meanProgress, 0.75);
  assert.equal(v.tiers[0].real!.layouts, 1);
  assert.equal(v.tiers[0].sim!.meanProgress, 0.875);
  assert.equal(v.tiers[1].real, null);
  assert.equal(v.tiers[2].sim!.meanProgress, (0.875 + 0.25) / 2, 'all tiers: mean over layouts, each layout once');
  assert.ok(v.tiers[2].sim!.lower <= 0.25 + 1e-9 && v.tiers[2].sim!.upper >= 0.875 - 1e-9);
});

test('the picker lists each policy × layout set with its real and sim counts, most recent first', () => {
  const a = rollout('sim', 0, 1, 1);
  const b = { ...rollout('real', 0, 1, 1), policyId: 2 };
  const c = rollout('real', 1, 1, 0.5);
  const choices = compareChoices(
    [a, b, c],
    (id) => ({ id, name: `p${id}`, spec: `code:p${id}` }),
    () => 'bottles-in-the-bin',
  );
  assert.deepEqual(
    choices.map((x) => [x.policy.id, x.realRollouts, x.simRollouts]),
    [
      [1, 1, 1],
      [2, 1, 0],
    ],
  );
});
