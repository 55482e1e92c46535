import { test } from 'node:test';
import assert from 'node:assert/strict';
import { CTL, RigThreadMemory } from '../../src/rig/rig-thread-memory.js';
import { epochNowS, INTERLOCK_STALE_MS, SharedInterlock } from '../../src/rig/rig-thread-loop.js';

test('a write of the interlock caught half done keeps the last reading: a closed cell stays closed until its reading is stale, then reads open', () => {
  const memory = new RigThreadMemory();
  const interlock = new SharedInterlock(memory);
  assert.equal(interlock.current().open, true, 'never written: the station has not vouched for it');

  memory.writeInterlock(false, undefined, epochNowS() * 1000);
  assert.deepEqual(interlock.current(), { open: false });

  // The main thread preempted in the middle of its next write: the sequence stays odd.
  Atomics.add(memory.ctl, CTL.INTERLOCK_SEQ, 1);
  assert.deepEqual(interlock.current(), { open: false }, 'a torn read must not stop the arms of a closed cell');
  Atomics.add(memory.ctl, CTL.INTERLOCK_SEQ, 1); // the write completes

  memory.writeInterlock(true, 'The cell door is open.', epochNowS() * 1000);
  assert.deepEqual(interlock.current(), { open: true, reason: 'The cell door is open.' });

  // A closed reading the station stopped confirming reads open once it is older than the limit.
  memory.writeInterlock(false, undefined, epochNowS() * 1000 - INTERLOCK_STALE_MS - 50);
  const stale = interlock.current();
  assert.equal(stale.open, true);
  assert.match(stale.reason ?? '', /^The station has not confirmed the cell's interlock for \d+ ms/);
});
