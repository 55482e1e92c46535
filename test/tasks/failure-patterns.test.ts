import { test } from 'node:test';
import assert from 'node:assert/strict';
import { BOTTLES_IN_THE_BIN, MUG_FLIPPING, SORT_FROM_TOTE } from '../../src/tasks/index.js';
import { classifyObjectFailures, type FailureClassification } from '../../src/tasks/failure-patterns.js';
import { TaskEventTracker, type ObjectSighting, type TaskEvent } from '../../src/tasks/task-events.js';
import type { Layout } from '../../src/tasks/types.js';

const bin = { id: 'bin', kind: 'bin', pose: { x: 0.1, y: -0.3, yawRad: 0 } } as const;
const bottle = (n: number) => ({
  id: `bottle-${n}`,
  kind: 'bottle-500ml',
  posture: 'upright' as const,
  pose: { x: 0.05 * n, y: 0.1, yawRad: 0 },
});
const bottles: Layout = { index: 0, tier: 5, fixtures: [bin], objects: [1, 2, 3, 4, 5, 6, 7].map(bottle) };

const ev = (timeS: number, kind: TaskEvent['kind'], objectId: string, extra: Partial<TaskEvent> = {}): TaskEvent => ({
  timeS,
  kind,
  objectId,
  ...extra,
});
const results = (c: FailureClassification): Record<string, string> => {
  assert.ok(c.ok, c.ok ? '' : c.why);
  return Object.fromEntries(c.objects.map((o) => [o.id, o.result]));
};

/** One hand-made story per pattern, on one tier-5 layout of seven bottles. */
const sevenStories: TaskEvent[] = [
  // bottle-1: picked and put in the bin.
  ev(1, 'grasped', 'bottle-1', { arm: 'right' }),
  ev(3, 'entered-region', 'bottle-1', { region: 'bin' }),
  ev(3.2, 'released', 'bottle-1', { arm: 'right' }),
  { timeS: 3, kind: 'progress', done: 1, total: 7, delta: 1 },
  // bottle-2: picked, let go over the table short of the bin.
  ev(4, 'grasped', 'bottle-2', { arm: 'right' }),
  ev(5, 'released', 'bottle-2', { arm: 'right' }),
  // bottle-3: tipped by the arm reaching past it.
  ev(4.5, 'knocked-over', 'bottle-3'),
  // bottle-4: knocked off the table's edge.
  ev(6, 'knocked-over', 'bottle-4'),
  ev(6.4, 'off-table', 'bottle-4'),
  // bottle-5: in the hand when the episode ran out.
  ev(8, 'grasped', 'bottle-5', { arm: 'left' }),
  // bottle-6: put in the bin, let go inside it, then it bounced out.
  ev(9, 'grasped', 'bottle-6', { arm: 'left' }),
  ev(10, 'entered-region', 'bottle-6', { region: 'bin' }),
  { timeS: 10, kind: 'progress', done: 2, total: 7, delta: 1 },
  ev(10.2, 'released', 'bottle-6', { arm: 'left' }),
  ev(10.6, 'left-region', 'bottle-6', { region: 'bin' }),
  { timeS: 10.6, kind: 'progress', done: 1, total: 7, delta: -1 },
  // bottle-7: never touched.
];

const EXPECTED = {
  'bottle-1': 'done',
  'bottle-2': 'dropped-in-transit',
  'bottle-3': 'knocked-over',
  'bottle-4': 'off-table',
  'bottle-5': 'out-of-time',
  'bottle-6': 'left-the-target',
  'bottle-7': 'never-grasped',
};

test('each bottle story is read as its own failure pattern, from the events alone (a sim rollout)', () => {
  assert.deepEqual(
    results(classifyObjectFailures(BOTTLES_IN_THE_BIN, bottles, { events: sevenStories, ranFullLength: true })),
    EXPECTED,
  );
});

test('the same events with the end state the operator scored give the same patterns', () => {
  const endStates = [
    { id: 'bottle-1', region: 'bin', upright: false },
    { id: 'bottle-2', upright: false },
    { id: 'bottle-3', upright: false },
    { id: 'bottle-4', upright: false, offTable: true },
    { id: 'bottle-5', upright: false },
    { id: 'bottle-6', upright: false },
    { id: 'bottle-7', upright: true },
  ];
  assert.deepEqual(
    results(
      classifyObjectFailures(BOTTLES_IN_THE_BIN, bottles, { events: sevenStories, endStates, ranFullLength: true }),
    ),
    EXPECTED,
  );
});

test('a bottle in the hand when a policy error ended the episode early is not "out of time"', () => {
  const r = results(
    classifyObjectFailures(BOTTLES_IN_THE_BIN, bottles, { events: sevenStories, ranFullLength: false }),
  );
  assert.equal(r['bottle-5'], 'held-at-end');
});

test('a knock, then a pick into the bin, is done: the end decides failure, the events how', () => {
  const events = [
    ev(1, 'knocked-over', 'bottle-1'),
    ev(2, 'grasped', 'bottle-1', { arm: 'right' }),
    ev(3, 'entered-region', 'bottle-1', { region: 'bin' }),
    ev(3.3, 'released', 'bottle-1', { arm: 'right' }),
  ];
  assert.equal(
    results(classifyObjectFailures(BOTTLES_IN_THE_BIN, bottles, { events, ranFullLength: true }))['bottle-1'],
    'done',
  );
  // The operator says it is not in the bin after all: it failed, and the knock is how.
  const endStates = bottles.objects.map((o) => ({ id: o.id, upright: o.id !== 'bottle-1' }));
  assert.equal(
    results(classifyObjectFailures(BOTTLES_IN_THE_BIN, bottles, { events, endStates, ranFullLength: true }))[
      'bottle-1'
    ],
    'knocked-over',
  );
});

test('events that contradict the stored end-state counts are refused, not reconciled silently', () => {
  // The sim's end state counted 2 bottles done; the events put only bottle-1 in the bin.
  const outcomeCounts = [
    { outcome: 'done', kind: 'bottle-500ml', n: 2 },
    { outcome: 'left-undone', kind: 'bottle-500ml', n: 4 },
    { outcome: 'off-table', kind: 'bottle-500ml', n: 1 },
  ];
  const c = classifyObjectFailures(BOTTLES_IN_THE_BIN, bottles, {
    events: sevenStories,
    outcomeCounts,
    ranFullLength: true,
  });
  assert.equal(c.ok, false);
  assert.match(c.ok ? '' : c.why, /6 bottle-500ml failing where its end state counted 5/);
  // With the counts the events imply it is accepted.
  const agreeing = [
    { outcome: 'done', kind: 'bottle-500ml', n: 1 },
    { outcome: 'left-undone', kind: 'bottle-500ml', n: 3 },
    { outcome: 'knocked-over', kind: 'bottle-500ml', n: 2 },
    { outcome: 'off-table', kind: 'bottle-500ml', n: 1 },
  ];
  assert.deepEqual(
    results(
      classifyObjectFailures(BOTTLES_IN_THE_BIN, bottles, {
        events: sevenStories,
        outcomeCounts: agreeing,
        ranFullLength: true,
      }),
    ),
    EXPECTED,
  );
});

test('parts start in the tote: one let go in a wrong slot was dropped in transit, one never lifted was never grasped', () => {
  const layout: Layout = {
    index: 0,
    tier: 1,
    fixtures: [
      { id: 'tote', kind: 'tote', pose: { x: -0.05, y: 0.32, yawRad: 0 } },
      { id: 'sorter', kind: 'sorter', pose: { x: -0.1, y: -0.105, yawRad: 0 } },
    ],
    objects: SORT_FROM_TOTE.tiers[0].draw.kinds.slice(0, 3).map((kind, i) => ({
      id: `part-${i}`,
      kind,
      posture: 'lying' as const,
      pose: { x: -0.05, y: 0.32, yawRad: 0 },
      inFixture: 'tote',
    })),
  };
  const slotOf = (i: number): string => {
    const k = SORT_FROM_TOTE.objectKinds.find((x) => x.id === layout.objects[i].kind)!;
    return `slot:${k.category ?? k.id}`;
  };
  const wrong = slotOf(2);
  const events = [
    ev(1, 'grasped', 'part-0', { arm: 'left' }),
    ev(1.5, 'left-region', 'part-0', { region: 'tote' }),
    ev(4, 'entered-region', 'part-0', { region: slotOf(0) }),
    ev(4.2, 'released', 'part-0', { arm: 'left' }),
    ev(5, 'grasped', 'part-1', { arm: 'left' }),
    ev(5.5, 'left-region', 'part-1', { region: 'tote' }),
    ev(8, 'entered-region', 'part-1', { region: wrong }),
    ev(8.2, 'released', 'part-1', { arm: 'left' }),
  ];
  assert.deepEqual(results(classifyObjectFailures(SORT_FROM_TOTE, layout, { events, ranFullLength: true })), {
    'part-0': 'done',
    'part-1': 'dropped-in-transit',
    'part-2': 'never-grasped',
  });
});

test('mugs: a turn in the hand fires no event, so the stored counts settle it when they leave one answer, and only then', () => {
  const layout: Layout = {
    index: 0,
    tier: 2,
    fixtures: [],
    objects: [
      { id: 'mug-1', kind: 'mug', posture: 'lying', pose: { x: 0, y: 0.1, yawRad: 0 } },
      { id: 'mug-2', kind: 'mug', posture: 'lying', pose: { x: 0, y: -0.1, yawRad: 0 } },
      { id: 'mug-3', kind: 'mug', posture: 'upright', pose: { x: 0.1, y: 0, yawRad: 0 } },
    ],
  };
  const events = [
    ev(1, 'grasped', 'mug-1', { arm: 'right' }),
    ev(4, 'released', 'mug-1', { arm: 'right' }),
    ev(5, 'knocked-over', 'mug-3'),
  ];
  const one = classifyObjectFailures(MUG_FLIPPING, layout, { events, ranFullLength: true });
  assert.equal(one.ok, false, 'without counts mug-1 is undecided');
  // Counted: mug-1 upright (done), mug-2 still lying, mug-3 knocked over: 2 failures, both known.
  const counts = [
    { outcome: 'done', kind: 'mug', n: 1 },
    { outcome: 'left-undone', kind: 'mug', n: 1 },
    { outcome: 'knocked-over', kind: 'mug', n: 1 },
  ];
  assert.deepEqual(
    results(classifyObjectFailures(MUG_FLIPPING, layout, { events, outcomeCounts: counts, ranFullLength: true })),
    { 'mug-1': 'done', 'mug-2': 'never-grasped', 'mug-3': 'knocked-over' },
  );
  // Counted 3 failures: mug-1 was let go still lying — dropped in transit.
  const three = [
    { outcome: 'left-undone', kind: 'mug', n: 2 },
    { outcome: 'knocked-over', kind: 'mug', n: 1 },
  ];
  assert.equal(
    results(classifyObjectFailures(MUG_FLIPPING, layout, { events, outcomeCounts: three, ranFullLength: true }))[
      'mug-1'
    ],
    'dropped-in-transit',
  );
  // An upright mug nobody touched has nothing to fail.
  const quiet = classifyObjectFailures(MUG_FLIPPING, layout, {
    events: [ev(1, 'grasped', 'mug-1', { arm: 'right' })],
    outcomeCounts: [
      { outcome: 'left-undone', kind: 'mug', n: 2 },
      { outcome: 'not-a-target', kind: 'mug', n: 1 },
    ],
    ranFullLength: true,
  });
  assert.deepEqual(results(quiet), { 'mug-1': 'out-of-time', 'mug-2': 'never-grasped', 'mug-3': 'not-a-target' });
});

test('events straight from the tracker classify as the story that produced them', () => {
  const layout: Layout = { index: 0, tier: 2, fixtures: [bin], objects: [bottle(1), bottle(2)] };
  const t = new TaskEventTracker(BOTTLES_IN_THE_BIN, layout);
  const s = (id: string, extra: Partial<ObjectSighting> = {}): ObjectSighting => ({
    id,
    upright: true,
    offTable: false,
    ...extra,
  });
  t.observe(0, [s('bottle-1'), s('bottle-2')]);
  // bottle-1 is carried towards the bin and let go over the table; bottle-2 falls untouched.
  for (const [i, time] of [0.1, 0.2, 0.3, 0.4].entries())
    t.observe(time, [s('bottle-1', { heldBy: 'right', upright: i < 2 }), s('bottle-2')]);
  for (const time of [0.5, 0.6, 0.7]) t.observe(time, [s('bottle-1', { upright: false }), s('bottle-2')]);
  t.observe(3, [s('bottle-1', { upright: false }), s('bottle-2', { upright: false })]);
  assert.deepEqual(
    results(classifyObjectFailures(BOTTLES_IN_THE_BIN, layout, { events: t.events(), ranFullLength: true })),
    { 'bottle-1': 'dropped-in-transit', 'bottle-2': 'knocked-over' },
  );
});

test('let go as it drops into the bin (the same sample), then bounced out: it left the target, it was not dropped short', () => {
  const events = [
    ev(1, 'grasped', 'bottle-1', { arm: 'right' }),
    ev(2, 'released', 'bottle-1', { arm: 'right' }),
    ev(2, 'entered-region', 'bottle-1', { region: 'bin' }),
    ev(2.4, 'left-region', 'bottle-1', { region: 'bin' }),
    ev(3, 'grasped', 'bottle-2', { arm: 'right' }),
    ev(4, 'released', 'bottle-2', { arm: 'right' }),
    ev(4.3, 'entered-region', 'bottle-2', { region: 'bin' }),
    ev(4.6, 'left-region', 'bottle-2', { region: 'bin' }),
  ];
  const r = results(classifyObjectFailures(BOTTLES_IN_THE_BIN, bottles, { events, ranFullLength: true }));
  assert.equal(r['bottle-1'], 'left-the-target');
  // Let go over the table, it rolled through the bin later: dropped in transit.
  assert.equal(r['bottle-2'], 'dropped-in-transit');
});
