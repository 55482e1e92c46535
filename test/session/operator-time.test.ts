import { test } from 'node:test';
import assert from 'node:assert/strict';
import { operatorTimeByRollout } from '../../src/session/operator-time.js';
import type { SessionJournalRecord } from '../../src/store/store.js';

let id = 0;
const row = (at: string, action: string, extra: Partial<SessionJournalRecord> = {}): SessionJournalRecord => ({
  id: ++id,
  sessionId: 4,
  slot: 0,
  attempt: 0,
  action,
  at: `2026-12-01T10:${at}Z`,
  operatorS: null,
  rolloutId: null,
  scoreId: null,
  detail: {},
  ...extra,
});

test('a slot timed from its journal: place, stand by while it runs, score, reset — journalled seconds first, else timestamps', () => {
  id = 0;
  const journal = [
    row('00:00.000', 'session-started', { slot: null, attempt: null }),
    // Slot 0: every step journalled its operator seconds (the engine times prompt → answer).
    row('00:01.000', 'shown'),
    row('00:40.000', 'placed', { operatorS: 38.5 }),
    row('00:40.100', 'running'),
    row('01:52.100', 'ran', { rolloutId: 11 }),
    row('02:10.000', 'scored', { operatorS: 17.25, rolloutId: 11, scoreId: 1 }),
    row('02:41.000', 'reset', { operatorS: 30.5 }),
    // Slot 1: an older row without seconds is timed from the journal's timestamps.
    row('03:00.000', 'shown', { slot: 1 }),
    row('03:45.000', 'placed', { slot: 1 }),
    row('03:45.500', 'running', { slot: 1 }),
    row('04:55.500', 'ran', { slot: 1, rolloutId: 12 }),
    row('05:15.500', 'scored', { slot: 1, rolloutId: 12, scoreId: 2 }),
    row('05:40.500', 'reset', { slot: 1, operatorS: 24 }),
  ];
  const t = operatorTimeByRollout(journal);
  const a = t.get(11)!;
  assert.deepEqual([a.placeS, a.superviseS, a.scoreS, a.resetS], [38.5, 72.1, 17.25, 30.5]);
  assert.equal(a.totalS, 38.5 + 72.1 + 17.25 + 30.5);
  assert.deepEqual(a.fromTimestamps, []);
  const b = t.get(12)!;
  assert.deepEqual([b.placeS, b.superviseS, b.scoreS, b.resetS], [45, 70.5, 20, 24]);
  assert.deepEqual(b.fromTimestamps, ['placed', 'scored']);
  assert.equal(b.slot, 1);
  assert.equal(t.size, 2);
});

test("a redone slot: each attempt's time belongs to the rollout that attempt ran, and a run that never started has none", () => {
  id = 0;
  const journal = [
    row('00:00.000', 'shown'),
    row('00:30.000', 'placed', { operatorS: 29 }),
    row('00:30.100', 'running'),
    row('00:50.100', 'ran', { rolloutId: 21, detail: { status: 'invalid' } }),
    row('01:00.000', 'reset', { operatorS: 9 }),
    row('01:00.100', 'redo', { attempt: 1 }),
    row('01:01.000', 'shown', { attempt: 1 }),
    row('01:20.000', 'placed', { attempt: 1, operatorS: 19 }),
    row('01:20.100', 'running', { attempt: 1 }),
    row('02:20.100', 'ran', { attempt: 1, rolloutId: 22 }),
    row('02:24.000', 'abandoned', { attempt: 1, rolloutId: 22, operatorS: 3.9 }),
    row('02:34.000', 'reset', { attempt: 1, operatorS: 10 }),
    row('02:35.000', 'redo', { attempt: 2 }),
    row('02:36.000', 'shown', { attempt: 2 }),
    row('02:50.000', 'placed', { attempt: 2, operatorS: 14 }),
    row('02:50.100', 'run-failed', { attempt: 2, detail: { reason: 'no rig' } }),
  ];
  const t = operatorTimeByRollout(journal);
  assert.deepEqual([...t.keys()].sort(), [21, 22]);
  assert.deepEqual([t.get(21)!.placeS, t.get(21)!.superviseS, t.get(21)!.scoreS, t.get(21)!.resetS], [29, 20.1, 0, 9]);
  assert.deepEqual(
    [t.get(22)!.placeS, t.get(22)!.superviseS, t.get(22)!.scoreS, t.get(22)!.resetS],
    [19, 60.1, 3.9, 10],
  );
  assert.equal(t.get(22)!.attempt, 1);
});
