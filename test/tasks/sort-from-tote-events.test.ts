import { test } from 'node:test';
import assert from 'node:assert/strict';
import {
  OUT_OF_REGION_S,
  SortEventTracker,
  sortReturnFromEvents,
  sortReward,
  describeSortEvent,
  type SortEvent,
} from '../../src/tasks/sort-from-tote-events.js';
import type { ObjectSighting } from '../../src/tasks/task-events.js';
import type { Layout } from '../../src/tasks/types.js';

// Reward and events of sort-from-tote against hand-built sighting sequences: +1 for a part's first
// time lying in its correct slot, −1 for each part knocked out of the tote and sorter, nothing else.

const layout: Layout = {
  index: 0,
  tier: 1,
  fixtures: [
    { id: 'tote', kind: 'tote', pose: { x: -0.05, y: 0.32, yawRad: 0 } },
    { id: 'sorter', kind: 'sorter', pose: { x: -0.1, y: -0.105, yawRad: 0 } },
  ],
  objects: [
    { id: 'screw-1', kind: 'screw-m6x30', posture: 'lying', pose: { x: -0.1, y: 0.3, yawRad: 0 }, inFixture: 'tote' },
    { id: 'nut-1', kind: 'nut-m10', posture: 'upright', pose: { x: 0, y: 0.3, yawRad: 0 }, inFixture: 'tote' },
  ],
};

const part = (id: string, extra: Partial<ObjectSighting> = {}): ObjectSighting => ({
  id,
  upright: true,
  offTable: false,
  region: 'tote',
  ...extra,
});
const free = (id: string, extra: Partial<ObjectSighting> = {}): ObjectSighting => {
  const s = { ...part(id), ...extra };
  if (!('region' in extra)) return s;
  if (extra.region === undefined) {
    const { region: _drop, ...rest } = s;
    void _drop;
    return rest;
  }
  return s;
};
const kinds = (events: readonly SortEvent[]): string[] =>
  events.map((e) => `${e.kind} ${e.objectId}${e.slot ? ` ${e.slot}` : ''}${e.arm ? ` ${e.arm}` : ''} ${e.reward}`);

test('a pick from the tote into the correct slot reads picked then in-correct-slot, +1 once', () => {
  const t = new SortEventTracker(layout);
  assert.deepEqual(t.observe(0, [part('screw-1'), part('nut-1')]), [], 'where parts start is no event');
  assert.deepEqual(
    t.observe(0.1, [part('screw-1', { heldBy: 'left' }), part('nut-1')]),
    [],
    'one sample of a pinch is chatter',
  );
  assert.deepEqual(kinds(t.observe(0.2, [part('screw-1', { heldBy: 'left' }), part('nut-1')])), [
    'picked screw-1 left 0',
  ]);
  // Carried out of the tote (held: not knocked out, however long), let go above its slot, falls in.
  for (let k = 3; k <= 20; k++)
    assert.deepEqual(t.observe(k / 10, [free('screw-1', { region: undefined, heldBy: 'left' }), part('nut-1')]), []);
  assert.deepEqual(t.observe(2.1, [free('screw-1', { region: undefined }), part('nut-1')]), []);
  assert.deepEqual(
    t.observe(2.2, [free('screw-1', { region: undefined }), part('nut-1')]),
    [],
    'falling into the slot, not yet out for long',
  );
  const placed = t.observe(2.3, [free('screw-1', { region: 'slot:screw' }), part('nut-1')]);
  assert.deepEqual(kinds(placed), ['in-correct-slot screw-1 slot:screw 1']);
  assert.equal(sortReward(placed), 1);
  assert.deepEqual(
    t.observe(3, [free('screw-1', { region: 'slot:screw' }), part('nut-1')]),
    [],
    'lying there is no new event',
  );
  assert.equal(describeSortEvent(placed[0]), '2.30 s: screw-1 is in its slot slot:screw (+1).');
});

test('a part taken out of its slot and put back earns nothing more: the return is at most the number of parts', () => {
  const t = new SortEventTracker(layout);
  t.observe(0, [part('screw-1'), part('nut-1')]);
  const rewards: number[] = [];
  const seq: ObjectSighting[] = [
    free('screw-1', { region: 'slot:screw' }),
    free('screw-1', { region: 'slot:screw', heldBy: 'left' }),
    free('screw-1', { region: 'slot:screw', heldBy: 'left' }),
    free('screw-1', { region: undefined, heldBy: 'left' }),
    free('screw-1', { region: 'slot:screw', heldBy: 'left' }),
    free('screw-1', { region: 'slot:screw' }),
    free('screw-1', { region: 'slot:screw' }),
  ];
  seq.forEach((s, i) => rewards.push(sortReward(t.observe(0.1 * (i + 1), [s, part('nut-1')]))));
  assert.deepEqual(rewards, [1, 0, 0, 0, 0, 0, 0]);
  assert.deepEqual(
    t
      .events()
      .filter((e) => e.kind === 'in-correct-slot')
      .map((e) => e.reward),
    [1, 0],
    'back in its slot is an event, without reward',
  );
  assert.equal(sortReturnFromEvents(t.events()), 1);
});

test('a part in a wrong slot is an event without reward, and a part in the sorter is not out of the region', () => {
  const t = new SortEventTracker(layout);
  t.observe(0, [part('screw-1'), part('nut-1')]);
  const e = t.observe(0.1, [part('screw-1'), free('nut-1', { region: 'slot:bolt' })]);
  assert.deepEqual(kinds(e), ['in-wrong-slot nut-1 slot:bolt 0']);
  for (let k = 2; k < 30; k++)
    assert.deepEqual(t.observe(k / 10, [part('screw-1'), free('nut-1', { region: 'slot:bolt' })]), []);
  assert.equal(t.allInCorrectSlot(), false);
});

test(`a part knocked out of the tote onto the table costs −1 once it has lain outside ${OUT_OF_REGION_S} s, not before; back in and out again costs again`, () => {
  const t = new SortEventTracker(layout);
  t.observe(0, [part('screw-1'), part('nut-1')]);
  const out = (timeS: number): SortEvent[] => t.observe(timeS, [part('screw-1'), free('nut-1', { region: undefined })]);
  assert.deepEqual(out(1.0), []);
  assert.deepEqual(out(1.2), []);
  assert.deepEqual(out(1.4), []);
  assert.deepEqual(kinds(out(1.5)), ['knocked-out nut-1 -1']);
  assert.deepEqual(out(1.6), [], 'out once, charged once');
  assert.deepEqual(out(5), []);
  // Put back into the tote by a hand, then knocked out again.
  t.observe(5.1, [part('screw-1'), part('nut-1')]);
  out(6);
  assert.deepEqual(kinds(out(6.5)), ['knocked-out nut-1 -1']);
  assert.equal(sortReturnFromEvents(t.events()), -2);
  assert.equal(
    t.events().reduce((s, e) => s + e.reward, 0),
    -2,
  );
});

test('off the table is an event and costs −1 at once if the part was in the region; a part already out costs nothing more', () => {
  const t = new SortEventTracker(layout);
  t.observe(0, [part('screw-1'), part('nut-1')]);
  const gone = t.observe(0.1, [free('screw-1', { region: undefined, offTable: true }), part('nut-1')]);
  assert.deepEqual(kinds(gone), ['off-table screw-1 0', 'knocked-out screw-1 -1']);
  t.observe(0.2, [free('screw-1', { region: undefined, offTable: true }), free('nut-1', { region: undefined })]);
  assert.deepEqual(
    kinds(
      t.observe(0.7, [free('screw-1', { region: undefined, offTable: true }), free('nut-1', { region: undefined })]),
    ),
    ['knocked-out nut-1 -1'],
  );
  assert.deepEqual(
    kinds(
      t.observe(0.8, [
        free('screw-1', { region: undefined, offTable: true }),
        free('nut-1', { region: undefined, offTable: true }),
      ]),
    ),
    ['off-table nut-1 0'],
  );
  assert.equal(sortReturnFromEvents(t.events()), -2);
});

test("both parts in their slots: all done; the first sample's placements are credited without reward", () => {
  const t = new SortEventTracker(layout);
  t.observe(0, [free('screw-1', { region: 'slot:screw' }), part('nut-1')]);
  assert.equal(t.allInCorrectSlot(), false);
  const e = t.observe(0.1, [free('screw-1', { region: 'slot:screw' }), free('nut-1', { region: 'slot:nut' })]);
  assert.deepEqual(kinds(e), ['in-correct-slot nut-1 slot:nut 1']);
  assert.equal(t.allInCorrectSlot(), true);
  assert.equal(sortReturnFromEvents(t.events()), 1, 'the screw started in its slot: no reward for it');
});
