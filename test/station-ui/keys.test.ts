/** Keys and foot pedal: the same actions, E-stop and the pedals even while typing, letters only outside fields. */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { actionForKey, PEDAL_KEYS } from '../../station-ui/keys.js';

test('pedals F13–F15 run, stop and E-stop, even while a text field has focus; letters act only outside fields', () => {
  assert.deepEqual(PEDAL_KEYS, { F13: 'run', F14: 'stop-rollout', F15: 'estop' });
  for (const typing of [false, true]) {
    assert.equal(actionForKey({ key: 'Escape', typing, modifier: false }), 'estop');
    assert.equal(actionForKey({ key: 'F15', typing, modifier: false }), 'estop');
    assert.equal(actionForKey({ key: 'F14', typing, modifier: false }), 'stop-rollout');
    assert.equal(actionForKey({ key: 'F13', typing, modifier: false }), 'run');
  }
  assert.equal(actionForKey({ key: 's', typing: false, modifier: false }), 'stop-rollout');
  assert.equal(actionForKey({ key: 'S', typing: false, modifier: false }), 'stop-rollout');
  assert.equal(
    actionForKey({ key: 's', typing: true, modifier: false }),
    null,
    'typing an s in a policy spec stops nothing',
  );
  assert.equal(
    actionForKey({ key: 'r', typing: false, modifier: true }),
    null,
    'Ctrl-R reloads, it does not run a rollout',
  );
  assert.deepEqual(actionForKey({ key: '5', typing: false, modifier: false }), { view: 5 });
  assert.equal(actionForKey({ key: '6', typing: false, modifier: false }), null);
});

test("on the Session page Enter and the left pedal press the step's big button; step letters act only there and never while typing", () => {
  for (const typing of [false, true])
    assert.deepEqual(actionForKey({ key: 'F13', typing, modifier: false, inSession: true }), { session: 'go' });
  assert.deepEqual(actionForKey({ key: 'Enter', typing: false, modifier: false, inSession: true }), { session: 'go' });
  assert.equal(
    actionForKey({ key: 'Enter', typing: true, modifier: false, inSession: true }),
    null,
    'Enter in a field submits its own form',
  );
  assert.equal(
    actionForKey({ key: 'Enter', typing: false, modifier: false }),
    null,
    'Enter elsewhere does nothing global',
  );
  assert.deepEqual(actionForKey({ key: 'ArrowUp', typing: false, modifier: false, inSession: true }), {
    session: 'count-up',
  });
  assert.deepEqual(actionForKey({ key: '-', typing: false, modifier: false, inSession: true }), {
    session: 'count-down',
  });
  assert.deepEqual(actionForKey({ key: 'X', typing: false, modifier: false, inSession: true }), { session: 'redo' });
  assert.equal(actionForKey({ key: 'x', typing: true, modifier: false, inSession: true }), null);
  // E takes over with the leader on the Session page, as in the terminal's rig rollout; not while typing.
  assert.deepEqual(actionForKey({ key: 'E', typing: false, modifier: false, inSession: true }), {
    session: 'take-over',
  });
  assert.equal(actionForKey({ key: 'e', typing: true, modifier: false, inSession: true }), null);
  assert.equal(
    actionForKey({ key: 'Escape', typing: false, modifier: false, inSession: true }),
    'estop',
    'E-stop still wins on the Session page',
  );
  assert.equal(
    actionForKey({ key: 's', typing: false, modifier: false, inSession: true }),
    'stop-rollout',
    'S still stops the running rollout',
  );
  assert.deepEqual(actionForKey({ key: '3', typing: false, modifier: false, inSession: true }), { view: 3 });
});

test('on the Teleop page the keys of tandem teleop record apply (Space/→ next, ← discard, E sync, Q stop), the left pedal is next, and E-stop and the stop pedal still win', () => {
  const k = (key: string, typing = false) => actionForKey({ key, typing, modifier: false, inTeleop: true });
  assert.deepEqual(k(' '), { teleop: 'next' });
  assert.deepEqual(k('ArrowRight'), { teleop: 'next' });
  assert.deepEqual(k('ArrowLeft'), { teleop: 'discard' });
  assert.deepEqual(k('e'), { teleop: 'sync' });
  assert.deepEqual(k('d'), { teleop: 'discard' }, 'D discards as the terminal lines say');
  assert.deepEqual(k('Q'), { teleop: 'quit' });
  assert.deepEqual(k('F13', true), { teleop: 'next' });
  assert.equal(k('F14'), 'stop-rollout');
  assert.equal(k('Escape', true), 'estop');
  assert.equal(k(' ', true), null, 'a space typed into the prompt field is a space');
  assert.equal(actionForKey({ key: ' ', typing: false, modifier: false }), null, 'Space does nothing on other pages');
});
