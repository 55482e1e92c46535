import { test } from 'node:test';
import assert from 'node:assert/strict';
import { groupedFaults, modeWords, rigWords, splitReason, useWords } from '../../station-ui/words.js';
import type { RigStatus } from '../../src/server/api-types.js';

const lost = (name: string) =>
  `The ${name} motor reports loss of communication (its watchdog expired); check the CAN cable and the adapter.`;

test('fourteen motors with the same fault read as one line naming them, other faults stay their own line', () => {
  const names = ['left arm joint 1', 'left arm joint 2', 'left gripper', 'right arm joint 6'];
  const behind =
    "The emulated cell's physics fell 483 ms behind real time (this machine is too busy to run it); the arms were damped.";
  const lines = groupedFaults([
    ...names.map(lost),
    behind,
    'The right gripper motor reports over-current; check for a collision.',
  ]);
  assert.deepEqual(lines, [
    '4 motors (left arm joint 1, left arm joint 2, left gripper, right arm joint 6): each reports loss of communication (its watchdog expired); check the CAN cable and the adapter.',
    behind,
    'The right gripper motor reports over-current; check for a collision.',
  ]);
});

test("a rollout's joined reason splits into its headline and grouped faults", () => {
  const r = splitReason(`Rollout 1 is invalid: ${lost('left arm joint 1')} ${lost('right gripper')}`);
  assert.equal(r.head, 'Rollout 1 is invalid');
  assert.equal(r.lines.length, 1);
  assert.match(r.lines[0], /^2 motors \(left arm joint 1, right gripper\): /);
  const scored = splitReason(
    'Rollout 2 scored 0.50 by the scripted operator (emulated cell): 1 of 2 bottles in the bin (progress 0.5).',
  );
  assert.equal(scored.head, '');
  assert.deepEqual(scored.lines, [
    'Rollout 2 scored 0.50 by the scripted operator (emulated cell): 1 of 2 bottles in the bin (progress 0.5).',
  ]);
});

test('motors silent alike group although each has its own CAN ID', () => {
  const silent = (name: string, id: number) =>
    `The ${name} motor (CAN ID 0x00${id}) has not answered for 309 ms; check its power and CAN cable.`;
  assert.deepEqual(
    groupedFaults([silent('left arm joint 1', 1), silent('left arm joint 2', 2), silent('right gripper', 7)]),
    [
      '3 motors (left arm joint 1, left arm joint 2, right gripper): each has not answered for 309 ms; check its power and CAN cable.',
    ],
  );
});

test("a rollout setting the rig up reads SETTING UP, not the new rig's NOT CONNECTED or READY · OFF; idle and running rigs read their own mode", () => {
  const rig = (mode: RigStatus['mode'], use: RigStatus['use']): RigStatus => ({
    type: 'yam-cell',
    mode,
    use,
    position: [],
    motors: [],
    faults: [],
    recentEvents: [],
    cell: null,
    interlock: null,
    note: null,
    loop: null,
  });
  // What the station's event stream says while a session rollout starts (measured: changing, then the rollout's new rig unconfigured, then active).
  assert.deepEqual(modeWords(rig('unconfigured', 'changing')), { mode: 'setting-up', words: 'SETTING UP' });
  assert.deepEqual(modeWords(rig('unconfigured', 'rollout')), { mode: 'setting-up', words: 'SETTING UP' });
  assert.deepEqual(modeWords(rig('configured', 'rollout')), { mode: 'setting-up', words: 'SETTING UP' });
  assert.match(useWords(rig('configured', 'rollout')), /the arms will move/);
  assert.deepEqual(modeWords(rig('active', 'rollout')), { mode: 'active', words: 'ACTIVE' });
  assert.deepEqual(
    modeWords(rig('damped', 'rollout')),
    { mode: 'damped', words: 'DAMPED · OFF' },
    'after the episode the rollout damps it',
  );
  assert.deepEqual(modeWords(rig('configured', 'idle')), { mode: 'configured', words: 'READY · OFF' });
  assert.deepEqual(
    modeWords(rig('unconfigured', 'idle')),
    { mode: 'unconfigured', words: 'NOT CONNECTED' },
    'a rig that did not come up',
  );
});

test("the status bar names the rig in words, not its config type; an unknown type (or a prototype's key) is shown as it is", () => {
  assert.equal(rigWords('yam-cell'), 'emulated cell (no hardware)');
  assert.equal(rigWords('yam-can'), 'YAM arms');
  assert.equal(rigWords('some-new-rig'), 'some-new-rig');
  assert.equal(rigWords('toString'), 'toString');
});
