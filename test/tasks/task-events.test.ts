import { test } from 'node:test';
import assert from 'node:assert/strict';
import { BOTTLES_IN_THE_BIN, MUG_FLIPPING } from '../../src/tasks/index.js';
import {
  TaskEventTracker,
  stepRewards,
  describeTaskEvent,
  HOLD_DEBOUNCE_SAMPLES,
  type ObjectSighting,
  type TaskEvent,
} from '../../src/tasks/task-events.js';
import type { Layout } from '../../src/tasks/types.js';

const bin = { id: 'bin', kind: 'bin', pose: { x: 0.1, y: -0.3, yawRad: 0 } } as const;
const bottles: Layout = {
  index: 0,
  tier: 2,
  fixtures: [bin],
  objects: [
    { id: 'bottle-1', kind: 'bottle-500ml', posture: 'upright', pose: { x: 0.1, y: 0.1, yawRad: 0 } },
    { id: 'bottle-2', kind: 'bottle-500ml', posture: 'upright', pose: { x: 0.2, y: 0.1, yawRad: 0 } },
  ],
};

const at = (tracker: TaskEventTracker, timeS: number, ...s: ObjectSighting[]): TaskEvent[] => tracker.observe(timeS, s);
const still = (id: string, extra: Partial<ObjectSighting> = {}): ObjectSighting => ({
  id,
  upright: true,
  offTable: false,
  ...extra,
});
const kinds = (events: readonly TaskEvent[]): string[] =>
  events.map(
    (e) =>
      `${e.kind}${e.objectId ? ` ${e.objectId}` : ''}${e.arm ? ` ${e.arm}` : ''}${e.region ? ` ${e.region}` : ''}${e.delta !== undefined ? ` ${e.delta}` : ''}`,
  );

test('a pick into the bin reads grasped, released, entered bin and +1 progress, in that order, each once', () => {
  const t = new TaskEventTracker(BOTTLES_IN_THE_BIN, bottles);
  assert.deepEqual(at(t, 0, still('bottle-1'), still('bottle-2')), [], 'where things start is no event');
  // One sample of a pinch is contact chatter; it counts once it holds for the debounce.
  assert.deepEqual(at(t, 0.1, still('bottle-1', { heldBy: 'right' }), still('bottle-2')), []);
  assert.deepEqual(kinds(at(t, 0.2, still('bottle-1', { heldBy: 'right', upright: false }), still('bottle-2'))), [
    'grasped bottle-1 right',
  ]);
  // Carried tipped over the bin, let go inside it.
  assert.deepEqual(
    kinds(at(t, 1.0, still('bottle-1', { heldBy: 'right', upright: false, region: 'bin' }), still('bottle-2'))),
    ['entered-region bottle-1 bin', 'progress 1'],
  );
  at(t, 1.1, still('bottle-1', { upright: false, region: 'bin' }), still('bottle-2'));
  assert.deepEqual(kinds(at(t, 1.2, still('bottle-1', { upright: false, region: 'bin' }), still('bottle-2'))), [
    'released bottle-1 right',
  ]);
  assert.deepEqual(at(t, 2, still('bottle-1', { upright: false, region: 'bin' }), still('bottle-2')), []);
  const all = t.events();
  assert.equal(all.length, 4);
  assert.deepEqual(
    all.find((e) => e.kind === 'progress'),
    { timeS: 1.0, kind: 'progress', done: 1, total: 2, delta: 1 },
  );
  assert.equal(describeTaskEvent(all[0]), '0.20 s: the right hand grasped bottle-1.');
});

test('a pinch that flickers for fewer samples than the debounce is no grasp', () => {
  assert.ok(HOLD_DEBOUNCE_SAMPLES >= 2);
  const t = new TaskEventTracker(BOTTLES_IN_THE_BIN, bottles);
  at(t, 0, still('bottle-1'), still('bottle-2'));
  for (let k = 1; k <= 10; k++)
    at(t, k * 0.1, still('bottle-1', k % 2 === 0 ? { heldBy: 'left' } : {}), still('bottle-2'));
  assert.deepEqual(t.events(), []);
});

test('tipping untouched is knocked over; tipping in a hand, or just after being set down, is not', () => {
  const t = new TaskEventTracker(BOTTLES_IN_THE_BIN, bottles);
  at(t, 0, still('bottle-1'), still('bottle-2'));
  at(t, 0.1, still('bottle-1', { heldBy: 'left' }), still('bottle-2'));
  at(t, 0.2, still('bottle-1', { heldBy: 'left' }), still('bottle-2'));
  at(t, 0.3, still('bottle-1', { heldBy: 'left', upright: false }), still('bottle-2'));
  at(t, 0.4, still('bottle-1', { upright: false }), still('bottle-2'));
  at(t, 0.5, still('bottle-1', { upright: false }), still('bottle-2'));
  // The neighbour falls with nobody near it: the knock the failure breakdown counts.
  const e = at(t, 3, still('bottle-1', { upright: false }), still('bottle-2', { upright: false }));
  assert.deepEqual(kinds(e), ['knocked-over bottle-2']);
  assert.deepEqual(kinds(t.events()), ['grasped bottle-1 left', 'released bottle-1 left', 'knocked-over bottle-2']);
});

test('an object leaving the table is one off-table event, and a done one knocked off costs its point once', () => {
  const t = new TaskEventTracker(BOTTLES_IN_THE_BIN, bottles);
  at(t, 0, still('bottle-1', { region: 'bin' }), still('bottle-2'));
  // bottle-1 (done) and bottle-2 (not done) both go off the table at 1 s.
  const e = at(
    t,
    1,
    still('bottle-1', { offTable: true, upright: false }),
    still('bottle-2', { offTable: true, upright: false }),
  );
  assert.deepEqual(kinds(e), ['left-region bottle-1 bin', 'off-table bottle-1', 'off-table bottle-2', 'progress -1']);
  assert.deepEqual(
    at(
      t,
      2,
      still('bottle-1', { offTable: true, upright: false }),
      still('bottle-2', { offTable: true, upright: false }),
    ),
    [],
    'once only',
  );
  const r = stepRewards(t.events(), 100, 50);
  assert.equal(r[50], -2, 'the done bottle loses its point (−1), the other costs −1 for leaving the table');
  assert.equal(
    r.reduce((a, b) => a + b, 0),
    -2,
  );
});

test('mug-flipping progress follows the task rule: a lying mug stood up is +1, an upright one knocked over is −1', () => {
  const mugs: Layout = {
    index: 0,
    tier: 1,
    fixtures: [],
    objects: [
      { id: 'mug-1', kind: MUG_FLIPPING.objectKinds[0].id, posture: 'lying', pose: { x: 0.1, y: 0.1, yawRad: 0 } },
      { id: 'mug-2', kind: MUG_FLIPPING.objectKinds[0].id, posture: 'upright', pose: { x: 0.2, y: 0.1, yawRad: 0 } },
    ],
  };
  const t = new TaskEventTracker(MUG_FLIPPING, mugs);
  at(t, 0, still('mug-1', { upright: false }), still('mug-2'));
  at(t, 0.1, still('mug-1', { upright: false, heldBy: 'left' }), still('mug-2'));
  at(t, 0.2, still('mug-1', { upright: false, heldBy: 'left' }), still('mug-2'));
  const up = at(t, 1, still('mug-1', { heldBy: 'left' }), still('mug-2'));
  const knocked = at(t, 3, still('mug-1'), still('mug-2', { upright: false }));
  assert.ok(
    up.some((e) => e.kind === 'progress' && e.delta === 1),
    JSON.stringify(up),
  );
  assert.deepEqual(
    kinds(knocked).filter((k) => !k.startsWith('released')),
    ['knocked-over mug-2', 'progress -1'],
  );
  const r = stepRewards(t.events(), 200, 50);
  assert.equal(r[50], 1);
  assert.equal(r[150], -1);
});

test('an object missing from a sample keeps its state; the first sample of an object is its start', () => {
  const t = new TaskEventTracker(BOTTLES_IN_THE_BIN, bottles);
  at(t, 0, still('bottle-1'));
  assert.deepEqual(at(t, 0.5, still('bottle-1')), []);
  assert.deepEqual(
    at(t, 1, still('bottle-1'), still('bottle-2', { region: 'bin' })),
    [],
    'bottle-2 first seen in the bin: its start, not an entry',
  );
  assert.deepEqual(kinds(at(t, 2, still('bottle-1', { region: 'bin' }))), [
    'entered-region bottle-1 bin',
    'progress 1',
  ]);
});
